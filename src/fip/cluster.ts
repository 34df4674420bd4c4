// kubectl fip's reads and its one write, with the user's kubeconfig and context as kubectl uses
// them: every object read directly from the API server, and releases sent to floatip's REST API
// through the API server's service proxy, so RBAC (`services/proxy`), the audit log and floatip's
// own rules apply.
import { request as httpRequest } from 'node:http';
import { type RequestOptions, request as httpsRequest } from 'node:https';
import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { clip, clipQuoted } from '../clip.js';
import { shareConnections } from '../kube/shared-agent.js';
import { CustomResourceClient, isNotFound, isObjectArray, kubeError } from '../kube/custom-resources.js';
import { FLOATING_IP_PLURAL, GROUP, POOL_PLURAL, VERSION } from '../store/floating-ip-object.js';
import type { RawCluster } from './snapshot.js';
import { ARGUMENT_LIMIT } from './table.js';
import { apiClient } from '../kube/resend.js';

export interface Connection {
  readonly kubeconfig?: string;
  readonly context?: string;
}

export function loadKubeConfig(c: Connection): KubeConfig {
  const kc = new KubeConfig();
  const file = c.kubeconfig || process.env.KUBECONFIG || '~/.kube/config';
  try {
    if (c.kubeconfig) kc.loadFromFile(c.kubeconfig);
    else kc.loadFromDefault();
  } catch (err) {
    // client-node's own words name neither the file nor, for an empty one, the problem
    const e = err as NodeJS.ErrnoException;
    const why =
      e.code === 'ENOENT'
        ? 'no such file'
        : e instanceof TypeError
          ? 'not a kubeconfig (empty, or not a YAML mapping)'
          : // node's words for a file it cannot open (ENAMETOOLONG, EACCES) end with the file's name
            clip(String(e.message ?? err).split('\n')[0]!, 2 * ARGUMENT_LIMIT);
    throw new Error(`kubeconfig ${clip(file, ARGUMENT_LIMIT)}: ${why}`);
  }
  if (c.context) {
    if (!kc.getContextObject(c.context))
      throw new Error(`context ${clipQuoted(c.context, ARGUMENT_LIMIT)} does not exist in the kubeconfig`);
    kc.setCurrentContext(c.context);
  }
  // `kubectl config set-context` (the README's recipe for npm start) leaves none current
  if (!kc.getCurrentContext() && kc.getContexts().length > 0) {
    const names = kc.getContexts().map((x) => x.name);
    throw new Error(
      `kubeconfig ${file} has no current-context: name one with --context (${names.join(', ')}), or set it with kubectl config use-context`,
    );
  }
  if (!kc.getCurrentCluster())
    throw new Error('the kubeconfig names no cluster (set --kubeconfig, KUBECONFIG or --context)');
  // kubectl talks plain HTTP to an http:// server as it is; client-node refuses unless told to skip
  // a TLS verification that plain HTTP does not have
  kc.clusters = kc.clusters.map((c) => (c.server.startsWith('http:') ? { ...c, skipTLSVerify: true } : c));
  // client-node has no timeout of its own: a server that never answers would hang the command;
  // this bounds every call as floatip's are (shared-agent.ts's REQUEST_TIMEOUT_MS)
  return shareConnections(kc);
}

/** The context's namespace, as kubectl defaults `-n`. */
export const contextNamespace = (kc: KubeConfig): string =>
  kc.getContextObject(kc.getCurrentContext())?.namespace || 'default';

export interface Sources {
  /** `namespace/name` of the floatingip-config ConfigMap, and its data key. */
  readonly configMap: { readonly namespace: string; readonly name: string; readonly key: string };
  readonly poolNamespace: string;
  readonly resource: string;
}

type Page<T> = { items: T[]; metadata?: { _continue?: string } };

async function everyPage<T>(
  list: (page: { limit: number; _continue?: string }) => Promise<Page<T>>,
): Promise<T[]> {
  const items: T[] = [];
  let token: string | undefined;
  do {
    const page = await list({ limit: 500, ...(token ? { _continue: token } : {}) });
    // a server that answers something else (a string, nulls) must not pass for an empty cluster
    // nor fail later without saying where it came from
    if (!isObjectArray(page?.items))
      throw new Error(
        `the answer is not a list of objects (items: ${JSON.stringify(page?.items)?.slice(0, 80)})`,
      );
    items.push(...page.items);
    const next = page.metadata?._continue;
    // a server that hands back the token it was sent would be asked for the same page forever
    if (next && next === token)
      throw new Error(`the API server sent the same continue token again (${next})`);
    token = next;
  } while (token);
  return items;
}

export async function readCluster(kc: KubeConfig, sources: Sources): Promise<RawCluster> {
  const core = apiClient(kc, CoreV1Api);
  const apps = apiClient(kc, AppsV1Api);
  const ref = { group: GROUP, version: VERSION };
  const floatingIPs = new CustomResourceClient(kc, { ...ref, plural: FLOATING_IP_PLURAL });
  const pools = new CustomResourceClient(kc, {
    ...ref,
    plural: POOL_PLURAL,
    namespace: sources.poolNamespace,
  });
  const read = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      throw kubeError(err, what);
    }
  };
  const { namespace, name, key } = sources.configMap;
  const [fips, poolList, pods, deployments, statefulSets, config] = await Promise.all([
    floatingIPs.listAll(500).catch((err: unknown) => {
      if (isNotFound(err))
        throw new Error(
          `the FloatingIP resource is not installed (kubectl apply -f crds/): ${(err as Error).message}`,
        );
      throw err;
    }),
    pools.listAll(500).catch((err: unknown) => {
      if (isNotFound(err)) return { items: [] };
      throw err;
    }),
    read('list pods', () => everyPage((p) => core.listPodForAllNamespaces(p))),
    read('list deployments', () => everyPage((p) => apps.listDeploymentForAllNamespaces(p))),
    read('list statefulsets', () => everyPage((p) => apps.listStatefulSetForAllNamespaces(p))),
    core.readNamespacedConfigMap({ namespace, name }).then(
      (cm) =>
        cm.data?.[key] !== undefined
          ? { text: cm.data[key] }
          : { problem: `ConfigMap ${namespace}/${name} has no key ${key}` },
      (err: unknown) => {
        const e = kubeError(err, `read ConfigMap ${namespace}/${name}`);
        if (e.status === 404) return { problem: `ConfigMap ${namespace}/${name} not found` };
        throw e;
      },
    ),
  ]);
  return {
    floatingIPs: fips.items,
    pools: poolList.items,
    pods,
    deployments,
    statefulSets,
    configText: 'text' in config ? config.text : undefined,
    ...('problem' in config ? { configProblem: config.problem } : {}),
    resource: sources.resource,
    now: Date.now(),
  };
}

/** floatip's REST API behind the API server's service proxy: `<namespace>/<service>:<port>`. */
export interface ServiceRef {
  readonly namespace: string;
  readonly name: string;
  readonly port: string;
}

export function parseServiceRef(text: string): ServiceRef {
  const m = /^([a-z0-9-]+)\/([a-z0-9-]+):([a-z0-9-]+)$/.exec(text);
  if (!m)
    throw new Error(
      `--service ${clipQuoted(text, ARGUMENT_LIMIT)}: expected <namespace>/<service>:<port name or number>`,
    );
  return { namespace: m[1]!, name: m[2]!, port: m[3]! };
}

export const proxyPath = (s: ServiceRef, path: string): string =>
  `/api/v1/namespaces/${s.namespace}/services/${s.name}:${s.port}/proxy${path}`;

export interface HttpAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** A JSON request to the API server with the kubeconfig's credentials. */
export async function apiRequest(
  kc: KubeConfig,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 30_000,
): Promise<HttpAnswer> {
  const server = kc.getCurrentCluster()!.server.replace(/\/$/, '');
  const url = new URL(server + path);
  const text = body === undefined ? undefined : JSON.stringify(body);
  const options: RequestOptions = {
    method,
    headers: { accept: 'application/json', ...(text ? { 'content-type': 'application/json' } : {}) },
    timeout: timeoutMs,
  };
  await kc.applyToHTTPSOptions(options);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, options, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (data += chunk));
      res.on('end', () => {
        let parsed: unknown = data;
        try {
          parsed = JSON.parse(data);
        } catch {
          // not JSON (a proxy error page): keep the text
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => reject(new Error(`${method} ${url.href}: ${err.message}`)));
    req.end(text);
  });
}
