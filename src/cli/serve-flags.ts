// `floatip serve`'s flags, each with its default, its parser and its line of --help, the reference
// for every one. galaxy-ipam's flags keep their meaning; every flag can also be set by an environment
// variable (FLOATIP_<FLAG>); a value a flag cannot take is a usage error naming it. What the flags
// start is serve.ts.
import { Command, InvalidArgumentError, Option } from 'commander';
import { parseDuration } from './duration.js';
import { DEFAULT_BIND_BUDGET_MS } from '../extender/binding.js';
import { DEFAULT_RESOURCE } from '../pods/pod-facts.js';
import type { LogLevel } from '../log.js';

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
