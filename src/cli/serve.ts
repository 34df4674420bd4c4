// `floatip serve`: the whole service. galaxy-ipam's flags keep their meaning; every flag can also
// be set by an environment variable (FLOATIP_<FLAG>); a bad value stops start-up with one clear line.
// With no kubeconfig, no in-cluster service account and no --master, it runs on the embedded API
// server, seeded with demo nodes and a pool: a playground on a fresh machine.
import { existsSync, readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { parseDuration } from './duration.js';
import { DEFAULT_BIND_BUDGET_MS } from '../extender/binding.js';
import { KubeConfig } from '@kubernetes/client-node';
import { startApiServer, type EmbeddedApiServer } from '../apiserver/index.js';
import { GALAXY_DEFAULTS, type GalaxyConfig, loadGalaxyConfigFile } from '../config/galaxy-config.js';
import { DEFAULT_RESOURCE } from '../pods/pod-facts.js';
import { type LogLevel, createLogger } from '../log.js';
import { type WebhookOptions, startFloatip } from '../server.js';

export interface ServeFlags {
  port: number;
  apiPort: number;
  bind?: string;
  config: string;
  kubeconfig: string;
  master: string;
  resourceName: string;
  poolNamespace: string;
  logLevel: LogLevel;
  embeddedPort: number;
  stateFile: string;
  leaderElect: boolean;
  leaderElectLeaseDuration: number;
  leaderElectRenewDeadline: number;
  leaderElectRetryPeriod: number;
  leaderElectResourceLock: string;
  leaderElectResourceName: string;
  leaderElectResourceNamespace: string;
  resyncInterval: number | undefined;
  parkedIpTtl: number;
  apiAuth: 'none' | 'kubernetes';
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  webhookPort: number | undefined;
  webhookCertFile: string;
  webhookKeyFile: string;
  extenderClientCaFile: string;
  healthPort: number | undefined;
  advertiseAddress: string;
  shutdownDelay: number;
  bindTimeout: number;
}

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

const port = (value: string): number => {
  if (!/^\d+$/.test(value) || Number(value) > 65535)
    throw new InvalidArgumentError('must be a port number (0-65535)');
  return Number(value);
};

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** galaxy's booleans are Go flags: `--leader-elect`, `--leader-elect=false`, `--leader-elect=true`. */
const bool = (value: string | undefined): boolean => {
  if (value === undefined || value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new InvalidArgumentError('must be true or false');
};

/** The command definition: its --help is the reference for every flag. */
export function serveCommand(run: (flags: ServeFlags) => Promise<void>): Command {
  const env = (option: Option): Option =>
    option.env(
      `FLOATIP_${option
        .attributeName()
        .replace(/[A-Z]/g, (c) => `_${c}`)
        .toUpperCase()}`,
    );
  return new Command('serve')
    .description('run the scheduler extender (and, with no cluster, the embedded API server)')
    .addOption(env(new Option('--port <port>', 'scheduler extender port').default(9040).argParser(port)))
    .addOption(
      env(
        new Option('--api-port <port>', 'REST API port (also /metrics, /apidocs/)')
          .default(9041)
          .argParser(port),
      ),
    )
    .addOption(
      env(
        new Option(
          '--bind <address>',
          'address both servers listen on (default: 127.0.0.1 on the embedded API server, whose REST API is open to any caller; else 0.0.0.0)',
        ),
      ),
    )
    .addOption(
      env(
        new Option(
          '--config <file>',
          "galaxy-ipam's JSON config file (schedule_plugin...); none: defaults",
        ).default(''),
      ),
    )
    .addOption(env(new Option('--kubeconfig <file>', 'kubeconfig of the cluster to serve').default('')))
    .addOption(
      env(new Option('--master <url>', 'API server URL (overrides the kubeconfig server)').default('')),
    )
    .addOption(
      env(
        new Option(
          '--resource-name <name>',
          'the extended resource that marks pods wanting a floating IP',
        ).default(DEFAULT_RESOURCE),
      ),
    )
    .addOption(
      env(new Option('--pool-namespace <namespace>', 'where Pool objects are read').default('kube-system')),
    )
    .addOption(env(new Option('--log-level <level>', 'log level').default('info').choices(LOG_LEVELS)))
    .addOption(
      env(
        new Option('--embedded-port <port>', 'port of the embedded API server (no cluster only)')
          .default(6080)
          .argParser(port),
      ),
    )
    .addOption(
      env(
        new Option(
          '--state-file <file>',
          'keep the embedded API server’s objects in this file across restarts',
        ).default(''),
      ),
    )
    .addOption(
      env(
        new Option(
          '--leader-elect [bool]',
          'run leader election: only the leader decides and writes (followers hand bind and preempt to it)',
        )
          .default(true)
          .argParser(bool),
      ),
    )
    .addOption(
      env(
        new Option('--leader-elect-lease-duration <duration>', 'how long a lease holds without renewal')
          .default(15_000, '15s')
          .argParser(parseDuration),
      ),
    )
    .addOption(
      env(
        new Option(
          '--leader-elect-renew-deadline <duration>',
          'the leader stops leading if it cannot renew within this',
        )
          .default(10_000, '10s')
          .argParser(parseDuration),
      ),
    )
    .addOption(
      env(
        new Option('--leader-elect-retry-period <duration>', 'how often candidates try and the leader renews')
          .default(2_000, '2s')
          .argParser(parseDuration),
      ),
    )
    .addOption(
      env(
        new Option(
          '--leader-elect-resource-lock <kind>',
          'lock kind; floatip uses a coordination.k8s.io Lease for every value galaxy accepted',
        )
          .default('leases')
          .choices(['leases', 'endpointsleases', 'configmapsleases', 'endpoints', 'configmaps']),
      ),
    )
    .addOption(
      env(new Option('--leader-elect-resource-name <name>', 'the Lease name').default('galaxy-ipam')),
    )
    .addOption(
      env(
        new Option('--leader-elect-resource-namespace <namespace>', 'the Lease namespace').default(
          'kube-system',
        ),
      ),
    )
    .addOption(
      env(
        new Option(
          '--resync-interval <duration>',
          'period of the leak-collecting resync (default: the config file’s resyncInterval, 1m)',
        ).argParser((text) => {
          const ms = parseDuration(text);
          // 0 would turn off the only collection of leaked addresses (galaxy's is at least 1m)
          if (ms <= 0)
            throw new InvalidArgumentError('must be more than 0 (the resync collects leaked addresses)');
          return ms;
        }),
      ),
    )
    .addOption(
      env(
        new Option(
          '--parked-ip-ttl <duration>',
          'release parked never addresses of workloads gone this long; 0 keeps them (galaxy)',
        )
          .default(0, '0')
          .argParser(parseDuration),
      ),
    )
    .addOption(
      env(
        new Option(
          '--api-auth <mode>',
          'REST callers: none (open, as galaxy; a warning at start) or kubernetes (TokenReview + SubjectAccessReview)',
        )
          .default('none')
          .choices(['none', 'kubernetes']),
      ),
    )
    .addOption(
      env(
        new Option('--tls-cert-file <file>', 'serve both ports over TLS with this certificate (PEM)').default(
          '',
        ),
      ),
    )
    .addOption(
      env(new Option('--tls-private-key-file <file>', 'the TLS certificate’s private key (PEM)').default('')),
    )
    .addOption(
      env(
        new Option(
          '--extender-client-ca-file <file>',
          'the extender port refuses, in the TLS handshake, clients without a certificate signed by this CA (PEM; needs --tls-cert-file)',
        ).default(''),
      ),
    )
    .addOption(
      env(
        new Option(
          '--health-port <port>',
          'a plain-HTTP port with /healthz and /readyz only, for probes that carry no client certificate',
        ).argParser(port),
      ),
    )
    .addOption(
      env(
        new Option(
          '--advertise-address <url>',
          'where the other replicas reach this one while it leads, published on the Lease (default: the pod IP from $POD_IP and --port)',
        ).default(''),
      ),
    )
    .addOption(
      env(
        new Option(
          '--bind-timeout <duration>',
          'the most a bind may take, its binding write included; keep it below kube-scheduler’s extender httpTimeout (5s unless set)',
        )
          .default(DEFAULT_BIND_BUDGET_MS, '4s')
          .argParser((text) => {
            const ms = parseDuration(text);
            if (ms < 500)
              throw new InvalidArgumentError('must be at least 500ms (a binding needs time to answer)');
            return ms;
          }),
      ),
    )
    .addOption(
      env(
        new Option(
          '--shutdown-delay <duration>',
          'after SIGTERM, answer /readyz 503 this long, still serving, before handing the Lease on',
        )
          .default(0, '0')
          .argParser(parseDuration),
      ),
    )
    .addOption(
      env(
        new Option(
          '--webhook-port <port>',
          'serve the validating admission webhook (POST /validate) over HTTPS on this port; off when not given',
        ).argParser(port),
      ),
    )
    .addOption(
      env(
        new Option(
          '--webhook-cert-file <file>',
          'the webhook’s TLS certificate (PEM), read again every minute',
        ).default(''),
      ),
    )
    .addOption(
      env(new Option('--webhook-key-file <file>', 'the webhook certificate’s private key (PEM)').default('')),
    )
    .action((flags: ServeFlags) => run(flags));
}

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

function tlsOf(flags: ServeFlags): { tls?: { cert: string; key: string }; extenderClientCa?: string } {
  if (flags.extenderClientCaFile && !flags.tlsCertFile) {
    throw new Error('--extender-client-ca-file needs --tls-cert-file and --tls-private-key-file');
  }
  if (!flags.tlsCertFile && !flags.tlsPrivateKeyFile) return {};
  if (!flags.tlsCertFile || !flags.tlsPrivateKeyFile) {
    throw new Error('--tls-cert-file and --tls-private-key-file go together');
  }
  return {
    tls: {
      cert: readFileSync(flags.tlsCertFile, 'utf8'),
      key: readFileSync(flags.tlsPrivateKeyFile, 'utf8'),
    },
    ...(flags.extenderClientCaFile
      ? { extenderClientCa: readFileSync(flags.extenderClientCaFile, 'utf8') }
      : {}),
  };
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
  const missing = [
    ['--webhook-cert-file', webhookCertFile],
    ['--webhook-key-file', webhookKeyFile],
  ].find(([, file]) => !existsSync(file!));
  if (missing) throw new Error(`${missing[0]} ${missing[1]}: no such file`);
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
