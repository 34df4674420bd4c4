// `floatip serve`: the whole service, from its flags (serve-flags.ts). A bad combination of them, or
// a file they name that is missing, stops start-up with one clear line and leaves nothing listening.
// With no kubeconfig, no in-cluster service account and no --master, it runs on the embedded API
// server, seeded with demo nodes and a pool: a playground on a fresh machine.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { startApiServer, type EmbeddedApiServer } from '../apiserver/index.js';
import { GALAXY_DEFAULTS, type GalaxyConfig, loadGalaxyConfigFile } from '../config/galaxy-config.js';
import { createLogger } from '../log.js';
import { type WebhookOptions, startFloatip } from '../server.js';
import type { ServeFlags } from './serve-flags.js';

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** Which cluster to serve: the kubeconfig, --master, in-cluster, or none (the embedded server). */
function clusterOf(flags: ServeFlags): KubeConfig | undefined {
  const kc = new KubeConfig();
  if (flags.kubeconfig) {
    if (!existsSync(flags.kubeconfig)) throw new Error(`--kubeconfig ${flags.kubeconfig}: no such file`);
    kc.loadFromFile(flags.kubeconfig);
  } else if (process.env.KUBERNETES_SERVICE_HOST && existsSync(SERVICE_ACCOUNT_TOKEN)) {
    kc.loadFromCluster();
  } else if (!flags.master) {
    return undefined;
  }
  const cluster = kc.getCurrentCluster();
  const server = flags.master || cluster?.server || '';
  // a plain-HTTP API server (galaxy's `--master http://127.0.0.1:8080`, an insecure port) has no TLS to
  // verify; client-node refuses one unless told to skip the verification, kubectl and client-go do not
  const plain = server.startsWith('http://');
  if (flags.master || (plain && !cluster?.skipTLSVerify)) {
    kc.loadFromClusterAndUser(
      {
        ...(cluster ?? {}),
        name: cluster?.name ?? 'master',
        server,
        skipTLSVerify: plain || (cluster?.skipTLSVerify ?? false),
      },
      kc.getCurrentUser() ?? { name: 'anonymous' },
    );
  }
  return kc;
}

/** A file a flag names, read; else one line naming the flag and the file. */
function readFlagFile(flag: string, file: string): string {
  if (!existsSync(file)) throw new Error(`${flag} ${file}: no such file`);
  return readFileSync(file, 'utf8');
}

/** The certificate's first PEM block; else one line naming the flag (OpenSSL's words name neither). */
function certificateIn(flag: string, file: string, text: string): X509Certificate {
  try {
    return new X509Certificate(text);
  } catch {
    throw new Error(`${flag} ${file}: no PEM certificate in it`);
  }
}

/** A certificate and its key, checked as the TLS server will use them, each failure naming its flag. */
function pemPair(certFlag: string, certFile: string, keyFlag: string, keyFile: string) {
  const cert = readFlagFile(certFlag, certFile);
  const key = readFlagFile(keyFlag, keyFile);
  const x509 = certificateIn(certFlag, certFile, cert);
  let keyObject;
  try {
    keyObject = createPrivateKey(key);
  } catch {
    throw new Error(`${keyFlag} ${keyFile}: no PEM private key in it`);
  }
  if (!x509.checkPrivateKey(keyObject))
    throw new Error(`${keyFlag} ${keyFile} is not the key of the certificate in ${certFlag} ${certFile}`);
  return { cert, key };
}

function tlsOf(flags: ServeFlags): { tls?: { cert: string; key: string }; extenderClientCa?: string } {
  if (flags.extenderClientCaFile && !flags.tlsCertFile) {
    throw new Error('--extender-client-ca-file needs --tls-cert-file and --tls-private-key-file');
  }
  if (!flags.tlsCertFile && !flags.tlsPrivateKeyFile) return {};
  if (!flags.tlsCertFile || !flags.tlsPrivateKeyFile) {
    throw new Error('--tls-cert-file and --tls-private-key-file go together');
  }
  const tls = pemPair(
    '--tls-cert-file',
    flags.tlsCertFile,
    '--tls-private-key-file',
    flags.tlsPrivateKeyFile,
  );
  const caFile = flags.extenderClientCaFile;
  if (!caFile) return { tls };
  // a CA file without a certificate would start a port whose handshake refuses every client
  const extenderClientCa = readFlagFile('--extender-client-ca-file', caFile);
  certificateIn('--extender-client-ca-file', caFile, extenderClientCa);
  return { tls, extenderClientCa };
}

function webhookOf(flags: ServeFlags): { webhook?: WebhookOptions } {
  if (flags.webhookPort === undefined) {
    if (flags.webhookCertFile || flags.webhookKeyFile)
      throw new Error('--webhook-cert-file and --webhook-key-file need --webhook-port');
    return {};
  }
  if (!flags.webhookCertFile || !flags.webhookKeyFile) {
    throw new Error(
      '--webhook-port needs --webhook-cert-file and --webhook-key-file (the API server calls webhooks over HTTPS only)',
    );
  }
  const { webhookCertFile, webhookKeyFile } = flags;
  // checked once here; the certificate read again every minute keeps the last good one instead
  pemPair('--webhook-cert-file', webhookCertFile, '--webhook-key-file', webhookKeyFile);
  return {
    webhook: {
      port: flags.webhookPort,
      certificate: () => ({
        cert: readFileSync(webhookCertFile, 'utf8'),
        key: readFileSync(webhookKeyFile, 'utf8'),
      }),
    },
  };
}

/** Two servers of this process told to listen on one port: which flags, before either listens. */
function distinctPorts(flags: ServeFlags, embedded: boolean): void {
  const ports: [string, number | undefined][] = [
    ['--port', flags.port],
    ['--api-port', flags.apiPort],
    ['--health-port', flags.healthPort],
    ['--webhook-port', flags.webhookPort],
    // the embedded API server listens only without a cluster
    ['--embedded-port', embedded ? flags.embeddedPort : undefined],
  ];
  const named = ports.filter(([, p]) => p !== undefined && p !== 0);
  for (const [i, [flag, p]] of named.entries()) {
    const other = named.slice(i + 1).find(([, q]) => q === p);
    if (other) throw new Error(`${flag} and ${other[0]} are both ${p}: each server needs a port of its own`);
  }
}

/** What this replica publishes on the Lease: the flag, else the pod IP (downward API) and the port. */
function advertiseAddressOf(flags: ServeFlags): { advertiseAddress?: string } {
  if (flags.advertiseAddress) {
    if (!/^https?:\/\//.test(flags.advertiseAddress)) {
      throw new Error(`--advertise-address ${flags.advertiseAddress}: must be an http:// or https:// URL`);
    }
    return { advertiseAddress: flags.advertiseAddress };
  }
  const podIp = process.env.POD_IP;
  if (!podIp) return {};
  const host = podIp.includes(':') ? `[${podIp}]` : podIp;
  return { advertiseAddress: `${flags.tlsCertFile ? 'https' : 'http'}://${host}:${flags.port}` };
}

export async function serve(flags: ServeFlags): Promise<void> {
  const log = createLogger(flags.logLevel);
  // before anything listens: a bad combination of flags leaves nothing behind
  const webhook = webhookOf(flags);
  const galaxy: GalaxyConfig = flags.config ? await loadGalaxyConfigFile(flags.config) : GALAXY_DEFAULTS;
  let embedded: EmbeddedApiServer | undefined;
  let kubeConfig = clusterOf(flags);
  distinctPorts(flags, !kubeConfig);
  if (!kubeConfig && flags.apiAuth === 'kubernetes') {
    throw new Error(
      '--api-auth=kubernetes needs a cluster (--kubeconfig, --master or in-cluster) to check callers: the embedded API server knows no tokens, so every REST caller would be refused',
    );
  }
  if (!kubeConfig) {
    embedded = await startApiServer({
      port: flags.embeddedPort,
      host: '127.0.0.1',
      seed: 'demo',
      ...(flags.stateFile ? { stateFile: flags.stateFile } : {}),
      log: (message) => log.debug({ component: 'embedded-apiserver' }, message),
    }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EADDRINUSE') throw err;
      throw new Error(
        `the embedded API server port (--embedded-port) 127.0.0.1:${flags.embeddedPort} is already in use`,
      );
    });
    kubeConfig = embedded.kubeConfig('kube-system');
  }
  let floatip: Awaited<ReturnType<typeof startFloatip>>;
  try {
    floatip = await startFloatip({
      kubeConfig,
      galaxy,
      resource: flags.resourceName,
      poolNamespace: flags.poolNamespace,
      // a development run with the open REST API (release, pools) stays on this machine unless asked
      bind: flags.bind ?? (embedded ? '127.0.0.1' : '0.0.0.0'),
      port: flags.port,
      apiPort: flags.apiPort,
      log,
      ...(flags.resyncInterval !== undefined ? { resyncIntervalMs: flags.resyncInterval } : {}),
      parkedIpTtlMs: flags.parkedIpTtl,
      apiAuth: flags.apiAuth,
      ...tlsOf(flags),
      ...webhook,
      ...advertiseAddressOf(flags),
      ...(flags.healthPort !== undefined ? { healthPort: flags.healthPort } : {}),
      shutdownDelayMs: flags.shutdownDelay,
      bindTimeoutMs: flags.bindTimeout,
      ...(flags.leaderElect
        ? {
            leaderElection: {
              namespace: flags.leaderElectResourceNamespace,
              name: flags.leaderElectResourceName,
              leaseDurationMs: flags.leaderElectLeaseDuration,
              renewDeadlineMs: flags.leaderElectRenewDeadline,
              retryPeriodMs: flags.leaderElectRetryPeriod,
            },
          }
        : {}),
    });
  } catch (err) {
    // nothing may stay listening after a failed start
    await embedded?.close();
    throw err;
  }
  if (embedded) {
    // after the start-up lines waiting in the log's buffer
    await new Promise<void>((resolve) => log.flush(() => resolve()));
    process.stdout.write(
      [
        '',
        `floatip is running on its embedded Kubernetes API server: ${embedded.url}`,
        '  (a development aid with demo nodes and a pool, not a production store)',
        `  kubectl --server ${embedded.url} get nodes,fip`,
        `  curl ${embedded.url}/apis/galaxy.k8s.io/v1alpha1/floatingips`,
        `scheduler extender: ${floatip.extenderUrl}/v1/{filter,prioritize,bind,preempt}`,
        `dashboard: ${floatip.apiUrl}/`,
        // the path the ValidatingWebhookConfiguration names (README, "Admission webhook")
        ...(floatip.webhookUrl ? [`admission webhook: ${floatip.webhookUrl}/validate`] : []),
        `REST API: ${floatip.apiUrl}/v1/ip (Swagger UI: ${floatip.apiUrl}/apidocs/)`,
        '',
      ].join('\n'),
    );
  }
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  log.info('stopping');
  await floatip.close();
  await embedded?.close();
}
