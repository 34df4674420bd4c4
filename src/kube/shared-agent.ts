// Connection reuse for every call floatip makes to the API server. @kubernetes/client-node 1.x builds
// a new https.Agent for each request (KubeConfig.createAgent, from applySecurityAuthentication and
// applyToFetchOptions), so every call paid a new TLS secure context (the CA, client certificate and
// key parsed again) and a full TLS handshake, on both ends: measured on the e2e control plane, about
// a third of floatip's CPU time under load, and a good part of kube-apiserver's. Here the agent is
// made once per distinct TLS setting and kept alive, so calls share pooled connections.
// A pooled connection can die without a word (a blackholed path, a NAT entry gone: no FIN, no
// RST), and client-node has no per-call timeout, so a call handed such a connection would wait
// forever, holding whatever lock its caller holds: every call without a signal of its own gets one
// that aborts it after `requestTimeoutMs` (the dead connection is destroyed with it). Watches are
// bounded by the reflector instead.
import { setMaxListeners } from 'node:events';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { type ConnectionOptions, createSecureContext } from 'node:tls';
import type { KubeConfig } from '@kubernetes/client-node';
import { Pool } from 'undici';

/** What createAgent receives: node's TLS agent options, as client-node fills them. */
type AgentOptions = Record<string, unknown>;
type CreateAgent = (cluster: { server?: string; proxyUrl?: string } | null, options: AgentOptions) => unknown;

const SHARED = Symbol('floatip.sharedAgents');

/**
 * How long a pooled connection may sit idle before floatip closes it: below kube-apiserver's 90 s idle
 * timeout, so that a call is never sent on a connection the server is closing at that moment (it
 * fails with ECONNRESET, "socket hang up"). A server that announces a shorter keep-alive
 * (`Keep-Alive: timeout=5`, as node's servers do) is honoured a second early: node's agent applies
 * that hint only when it is below the agent's own timeout, which without one is never.
 */
export const IDLE_CONNECTION_MS = 60_000;

/** Longer than any single call takes on a loaded API server (a 5,000-object page included). */
export const REQUEST_TIMEOUT_MS = 30_000;

interface RequestContext {
  getSignal(): AbortSignal | undefined;
  setSignal(signal: AbortSignal): void;
}
type Authenticate = (context: RequestContext) => Promise<void>;

/** The fields of the options that change what a connection is; anything else is per request. */
export const TLS_IDENTITY = [
  'ca',
  'cert',
  'key',
  'pfx',
  'passphrase',
  'rejectUnauthorized',
  'servername',
  'ciphers',
  'secureProtocol',
  'secureOptions',
  'crl',
] as const;

/** Whether two option values are the same setting (certificates arrive as fresh Buffers per call). */
function sameSetting(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) || Buffer.isBuffer(b))
    return Buffer.isBuffer(a) && Buffer.isBuffer(b) && a.equals(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((value, i) => sameSetting(value, b[i]))
    );
  }
  return (a ?? undefined) === (b ?? undefined);
}

/**
 * A signal that aborts no sooner than `timeoutMs` from now, shared by every call made within the
 * same thirtieth of that time (it aborts at most that much later). An AbortSignal.timeout per call
 * kept a timer per call, and each one fired long after its call had ended, building a TimeoutError
 * with its stack trace that nothing listened for: in bench:e2e, the releases of a run's 1,000 pods
 * cost 0.15 CPU-s half a minute later, in the middle of the next run's binds.
 */
export function sharedTimeout(timeoutMs: number, now: () => number = Date.now): () => AbortSignal {
  const share = Math.max(1, Math.floor(timeoutMs / 30));
  let signal: AbortSignal | undefined;
  let until = 0;
  return () => {
    const t = now();
    if (!signal || t >= until) {
      signal = AbortSignal.timeout(timeoutMs + share);
      // every call in flight listens to it: not a leak, whatever their number
      setMaxListeners(Infinity, signal);
      until = t + share;
    }
    return signal;
  };
}

interface Shared {
  readonly server: string;
  readonly settings: readonly unknown[];
  readonly agent: unknown;
}

/**
 * Makes the KubeConfig hand out one keep-alive agent per API server and TLS identity instead of a
 * new agent per request, and bounds every call (`requestTimeoutMs`, default REQUEST_TIMEOUT_MS).
 * Idempotent; clusters reached through a proxy keep client-node's own agents. Returns the same KubeConfig.
 */
export function shareConnections(
  kubeConfig: KubeConfig,
  options: { requestTimeoutMs?: number } = {},
): KubeConfig {
  const kc = kubeConfig as unknown as Record<PropertyKey, unknown> & {
    createAgent?: CreateAgent;
    applySecurityAuthentication?: Authenticate;
  };
  if (kc[SHARED] || typeof kc.createAgent !== 'function') return kubeConfig;
  if (typeof kc.applySecurityAuthentication === 'function') {
    // called for every typed API call, before its middleware (which may set a signal of its own)
    const authenticate = kc.applySecurityAuthentication.bind(kubeConfig) as Authenticate;
    const timeout = sharedTimeout(options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS);
    kc.applySecurityAuthentication = async (context) => {
      await authenticate(context);
      if (!context.getSignal()) context.setSignal(timeout());
    };
  }
  const original = kc.createAgent.bind(kubeConfig) as CreateAgent;
  // a few entries at most (one per API server and identity), compared by content: client-node calls
  // this for every request, so the lookup must cost less than serialising the certificates would
  const agents: Shared[] = [];
  kc[SHARED] = agents;
  kc.createAgent = (cluster, options) => {
    const server = cluster?.server ?? '';
    if (cluster?.proxyUrl || !server) return original(cluster, options);
    const settings = TLS_IDENTITY.map((field) => options[field]);
    let agent = agents.find(
      (a) => a.server === server && a.settings.every((value, i) => sameSetting(value, settings[i])),
    )?.agent;
    if (!agent) {
      if (server.startsWith('http:')) {
        // client-node's own checks (skipTLSVerify required for plain HTTP) stay in force
        original(cluster, options);
        agent = new HttpAgent({ keepAlive: true, scheduling: 'lifo', timeout: IDLE_CONNECTION_MS });
      } else {
        // a call's time is bounded by its fetch signal; the agent's timeout is the idle one above
        const { timeout: _timeout, ...tls } = options;
        agent = new HttpsAgent({ ...tls, keepAlive: true, scheduling: 'lifo', timeout: IDLE_CONNECTION_MS });
      }
      agents.push({ server, settings, agent });
    }
    return agent;
  };
  return kubeConfig;
}

/** undici's pool beside each shared agent, for the same server and TLS identity. */
const pools = new WeakMap<object, Pool>();

/**
 * How long an idle pooled connection is kept. undici's default (4 s, the API server sends no
 * Keep-Alive hint) closed every connection between two bursts of binds, and each burst paid a TLS
 * handshake per concurrent bind again. kube-apiserver keeps idle connections 90 s (v1.20: without
 * limit), client-node's agent (above) keeps them without limit.
 */
export const POOL_KEEP_ALIVE_MS = 30_000;

/** What a connection checks per handshake rather than per secure context. */
const PER_CONNECTION = new Set<string>(['servername', 'rejectUnauthorized']);

/**
 * The undici pool for the API server that a shared agent connects to, made with the same TLS
 * settings (the options client-node filled for it), so that every writer of a KubeConfig shares its
 * connections as the agent's users do. The certificates are parsed into one secure context here:
 * left to tls.connect, every new connection parsed the CA, certificate and key again (in the
 * bench:e2e profile, a third of the cost of each connection).
 */
export function poolBeside(agent: object, origin: string, options: AgentOptions): Pool {
  let pool = pools.get(agent);
  if (!pool) {
    const connect: Record<string, unknown> = {};
    const material: Record<string, unknown> = {};
    for (const field of TLS_IDENTITY) {
      if (options[field] === undefined) continue;
      (PER_CONNECTION.has(field) ? connect : material)[field] = options[field];
    }
    if (origin.startsWith('https:')) connect.secureContext = createSecureContext(material);
    pool = new Pool(origin, {
      connect: connect as ConnectionOptions,
      keepAliveTimeout: POOL_KEEP_ALIVE_MS,
    });
    pools.set(agent, pool);
  }
  return pool;
}

/**
 * Closes the KubeConfig's idle pooled connections, its agents' and its undici pools' (in-flight
 * calls and watches finish on theirs): a replica taking the Lease reads the cluster again because
 * its watches may have been silent without its knowing (a blackholed path), and an idle connection
 * on that path is as dead, so that its first writes as the leader would wait out their timeouts.
 */
export function renewConnections(kubeConfig: KubeConfig): void {
  for (const agent of sharedAgents(kubeConfig) as HttpAgent[]) {
    for (const sockets of Object.values(agent.freeSockets))
      for (const socket of sockets ?? []) socket.destroy();
    const pool = pools.get(agent);
    if (!pool) continue;
    // the next call makes a new pool; the old one ends once its calls have
    pools.delete(agent);
    pool.close().catch(() => undefined);
  }
}

/** The agents made so far (for tests). */
export function sharedAgents(kubeConfig: KubeConfig): readonly unknown[] {
  const shared = (kubeConfig as unknown as Record<PropertyKey, unknown>)[SHARED] as Shared[] | undefined;
  return (shared ?? []).map((s) => s.agent);
}
