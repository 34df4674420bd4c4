// The control plane under test, for the tests: a real etcd, kube-apiserver, kube-controller-manager
// and kube-scheduler, v1.20.2 or the current release (FLOATIP_E2E_KUBE), started by kube/e2e.sh in
// jest's globalSetup.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';

export const KUBE_SCRIPTS = fileURLToPath(new URL('./kube/', import.meta.url));
export const ENI_IP = 'tke.cloud.tencent.com/eni-ip';

/** The build cache, shared with shared/tools/kube-real so a machine builds the binaries once. */
export function kubeHome(): string {
  return process.env.FLOATIP_KUBE_HOME ?? join(homedir(), '.cache/floatip-kube');
}

/** As in kube/e2e.sh, which owns the cluster's settings. */
export function runDir(): string {
  return process.env.FLOATIP_E2E_RUN_DIR ?? join(kubeHome(), 'run-e2e');
}

/** Which control plane this run has: kube/e2e.sh's FLOATIP_E2E_KUBE (v1.20 unless told). */
export type KubeLine = 'v1.20' | 'current';
export function kubeLine(): KubeLine {
  return process.env.FLOATIP_E2E_KUBE === 'current' ? 'current' : 'v1.20';
}

export interface SchedulerConfig {
  /**
   * The shipped manifests/scheduler-config.yaml as it is (the v1beta1 key on v1.20, v1 on current),
   * with only the kubeconfig, extender URL, leader election and QPS a test cluster needs; the
   * extender fields below are then ignored.
   */
  readonly shipped?: boolean;
  /** false: a scheduler without extender (the default binder), for a baseline. Default true. */
  readonly extender?: boolean;
  /** The scheduler sends NodeNames instead of Nodes, and expects NodeNames back. Default false. */
  readonly nodeCacheCapable?: boolean;
  /** Verb names; "" leaves a verb out. Default filter, prioritize, bind, preempt. */
  readonly filterVerb?: string;
  readonly prioritizeVerb?: string;
  readonly bindVerb?: string;
  readonly preemptVerb?: string;
  /** Comma-separated managedResources; "" sends every pod to the extender. Default the ENI IP resource. */
  readonly managedResources?: string;
  readonly ignorable?: boolean;
  /** A Go duration, e.g. "5s". */
  readonly httpTimeout?: string;
  readonly weight?: number;
  /** Instead of the shipped 100; 0 is the scheduler's adaptive default (at least 100 nodes). */
  readonly percentageOfNodesToScore?: number;
  /** kube-scheduler --v; 5 logs every extender exchange. */
  readonly verbosity?: number;
  /**
   * The extender over mutual TLS, as shipped: this https URL, and the shipped tlsConfig's files from
   * this directory (scripts/extender-certs.sh's scheduler.crt, scheduler.key, ca.crt). Without it
   * the extender is the suite's plain-HTTP URL and the shipped tlsConfig is left out.
   */
  readonly extenderTls?: { readonly url: string; readonly dir: string };
}

/** scheduler.sh's knobs; kube/e2e.sh fills in the extender URL unless EXTENDER_URL is given. */
function schedulerEnv(config: SchedulerConfig): Record<string, string> {
  const tls: Record<string, string> = config.extenderTls
    ? { EXTENDER_URL: config.extenderTls.url, EXTENDER_TLS_DIR: config.extenderTls.dir }
    : {};
  if (config.shipped) return { SCHED_SHIPPED: '1', SCHED_V: String(config.verbosity ?? 2), ...tls };
  return {
    ...tls,
    ...(config.extender === false ? { EXTENDER_URL: '' } : {}),
    EXTENDER_FILTER_VERB: config.filterVerb ?? 'filter',
    EXTENDER_PRIORITIZE_VERB: config.prioritizeVerb ?? 'prioritize',
    EXTENDER_BIND_VERB: config.bindVerb ?? 'bind',
    EXTENDER_PREEMPT_VERB: config.preemptVerb ?? 'preempt',
    NODE_CACHE_CAPABLE: String(config.nodeCacheCapable ?? false),
    MANAGED_RESOURCE: config.managedResources ?? ENI_IP,
    EXTENDER_IGNORABLE: String(config.ignorable ?? false),
    EXTENDER_HTTP_TIMEOUT: config.httpTimeout ?? '5s',
    EXTENDER_WEIGHT: String(config.weight ?? 1),
    SCHED_V: String(config.verbosity ?? 2),
    ...(config.percentageOfNodesToScore !== undefined
      ? { SCHED_PERCENTAGE_OF_NODES_TO_SCORE: String(config.percentageOfNodesToScore) }
      : {}),
  };
}

/**
 * Restarts only kube-scheduler with another configuration (about 2 s; objects survive). The
 * whole configuration is given each time: what is left out takes the default, not the previous value.
 * Resolves once the new scheduler answers /healthz; pods already pending are scheduled by it.
 */
export async function restartScheduler(config: SchedulerConfig = {}): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // a developer's own scheduler knobs must not leak in (global-setup.ts strips the same)
  for (const key of Object.keys(env)) {
    if (
      /^(EXTENDER_|MANAGED_RESOURCE|NODE_CACHE_CAPABLE$|SCHED_CONFIG$|SCHED_SHIPPED$|SCHED_PERCENTAGE_OF_NODES_TO_SCORE$|SCHED_V$|K8S_SCHEDULER$|ETCD_DATA$)/.test(
        key,
      )
    ) {
      delete env[key];
    }
  }
  Object.assign(env, schedulerEnv(config));
  await runE2eScript('scheduler', env, 60_000);
}

export type Component = 'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler';

/**
 * Stops (SIGKILL, as a crash) or starts again one component (`kube/component.sh`), the others and
 * etcd's data left as they are; `start` resolves once it answers its health check.
 */
export async function controlComponent(
  action: 'stop' | 'start' | 'ensure',
  component: Component,
): Promise<void> {
  await runE2eScript(action, process.env, 90_000, [component]);
}

/** Runs `kube/e2e.sh <command>`; its stderr goes into the error when it fails. */
async function runE2eScript(
  command: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  args: readonly string[] = [],
): Promise<void> {
  const path = join(KUBE_SCRIPTS, 'e2e.sh');
  await new Promise<void>((resolve, reject) => {
    // its own process group: when a script in the tests' group exits and the kernel finds that
    // group orphaned, it sends SIGCONT to every stopped member, which would wake a component a test
    // stopped on purpose (E2E-H8); in a group of their own, the components it starts are spared too
    const child = spawn(path, [command, ...args], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-8000);
    });
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${path} ${command}: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve();
      const why = signal ? `killed by ${signal} (timeout ${timeoutMs} ms?)` : `exit code ${code}`;
      reject(new Error(`${path} ${command}: ${why}\n${stderr.trimEnd()}`));
    });
  });
}

/** What up.sh wrote to run/cluster.json (the scheduler's entries follow restartScheduler). */
export interface ClusterInfo {
  readonly KUBECONFIG: string;
  readonly APISERVER_URL: string;
  readonly KUBECTL: string;
  readonly KUBE_CA_FILE: string;
  readonly KUBE_ADMIN_CERT: string;
  readonly KUBE_ADMIN_KEY: string;
  readonly KUBE_ADMIN_TOKEN: string;
  readonly SCHED_SECURE_PORT: string;
  readonly EXTENDER_URL: string;
  readonly NODE_CACHE_CAPABLE: string;
  /** Where tests serve the extender (kept when the scheduler runs without one). */
  readonly E2E_EXTENDER_URL: string;
  readonly [key: string]: string;
}

export function loadCluster(): ClusterInfo {
  const file = join(runDir(), 'cluster.json');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`no running e2e cluster: cannot read ${file} (${(err as Error).message})`);
  }
  return JSON.parse(text) as ClusterInfo;
}

/** The port tests serve their extender on (127.0.0.1). */
export function extenderPort(): number {
  const url = loadCluster().E2E_EXTENDER_URL;
  const port = Number(new URL(url).port);
  if (!port) throw new Error(`cluster.json: E2E_EXTENDER_URL ${JSON.stringify(url)} has no port`);
  return port;
}

/** An admin client configuration for the running e2e cluster. */
export function clusterKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(loadCluster().KUBECONFIG);
  return kc;
}
