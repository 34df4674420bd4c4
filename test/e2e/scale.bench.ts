// `npm run bench:e2e`: 1,000 pods (100 Deployments x 10 replicas) on 50 nodes, timed from the first
// create until every pod is bound (with floatip: bound and annotated with its IP), on the real
// v1.20 control plane. Modes, the same scheduler binary each time (only restarted): floatip as
// the extender with nodeCacheCapable true, with nodeCacheCapable false, no extender at all (the
// baseline), and the floors below. Rounds interleave the modes; medians and ratios to the baseline are printed, with
// where the time went (kube-scheduler's own metrics, CPU seconds per process). After every floatip
// run: every pod has an address of the subnet, no address twice, objects and annotations agree.
// Knobs: FLOATIP_BENCH_E2E_ROUNDS (5), _DEPLOYMENTS (100), _REPLICAS (10), _NODES (50),
// _WARM_DEPLOYMENTS (100: the Deployments of each unmeasured run before a measured one), _WARM_RUNS
// (2: how many unmeasured runs, each bound and released, precede each measured one),
// _PERF=1 (every measured run's extender under perf record, its CPU summarised by area:
// perf-profile.ts), _TRACE=1 (one more run per floatip mode through a timing proxy, for floatip's
// per-verb latency), _PROFILE=1 (one more nodeCacheCapable run with floatip under node --cpu-prof,
// summarised over the measured run; _PROFILE=full or baseline profiles floatip in that mode
// instead), _MODES (default baseline,tiny-crd,tiny-crd-watch,tiny-crd-full,ncc,full; also tiny,
// tiny-crd-pods and ncc-noprio: nodeCacheCapable without the prioritize verb). `tiny` is the smallest extender that
// binds (test/e2e/tiny-extender.ts: keeps every node, scores them alike, binds with a fixed
// annotation) with nodeCacheCapable: what the extender mechanism itself costs; `tiny-crd` is the
// same plus one FloatingIP object created per bind, as floatip records each address: the floor of
// floatip with nodeCacheCapable; `tiny-crd-watch` is tiny-crd that also follows, with floatip's
// reflector, what floatip follows that changes with its pods (pods, nodes, FloatingIPs; floatip
// follows Deployments and StatefulSets only once a pod's policy needs them): the floor of an IPAM
// that watches the pods it places, as floatip must to release their addresses; `tiny-crd-pods` (not in the default set) follows the pods alone: the
// least that any IPAM releasing a deleted pod's address must watch; `tiny-crd-full` is tiny-crd sent full Nodes (it parses them and
// echoes them back): the floor of floatip without. Every run prints floatip's or the floor's own
// CPU-seconds per 1,000 pods, from its process accounting (the floor runs as a process of its own,
// test/e2e/tiny-floor.ts); and floatip's mean time per verb and its garbage collections, from its
// /metrics.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { summarizeProfile } from './cpu-profile.js';
import { PERF_NODE_ARGS, recordCpu, summarizePerf } from './perf-profile.js';
import { clusterKubeConfig, ENI_IP, extenderPort, loadCluster, restartScheduler, runDir } from './cluster.js';
import { freePort } from '../harness/free-port.js';
import { FloatipProcess, stopAllFloatips } from './floatip.js';
import {
  addressesOf,
  consistencyProblems,
  deleteAllFloatingIPs,
  listFloatingIPs,
  writeFloatipConfig,
  type ConfigEntry,
} from './ipam-state.js';
import { createNodes, deleteNodes } from './nodes.js';
import { deleteScaleRun, measureBinding, SCALE_RUN_LABEL, type ScaleResult } from './scale.js';
import { startTimingProxy, type TimingProxy } from './timing-proxy.js';
import { startTinyFloor, type TinyFloor } from './tiny-floor.js';
import { sleep, waitFor } from './wait.js';
import { deleteNamespace, ensureNamespace } from './workloads.js';

const num = (name: string, fallback: number) => Number(process.env[`FLOATIP_BENCH_E2E_${name}`] ?? fallback);
const ROUNDS = num('ROUNDS', 5);
const DEPLOYMENTS = num('DEPLOYMENTS', 100);
const REPLICAS = num('REPLICAS', 10);
const NODES = num('NODES', 50);
/** Deployments of the unmeasured run before each measured one (_WARM_DEPLOYMENTS). */
const WARM_DEPLOYMENTS = num('WARM_DEPLOYMENTS', 100);
/** How many unmeasured runs precede each measured one (_WARM_RUNS). */
const WARM_RUNS = num('WARM_RUNS', 2);
const TRACE = process.env.FLOATIP_BENCH_E2E_TRACE === '1';
/** _PERF=1: every measured run's extender (floatip or the floor) under perf record (perf-profile.ts). */
const PERF = process.env.FLOATIP_BENCH_E2E_PERF === '1';
/**
 * node's flags for an extender's process: perf's, and any in _NODE_ARGS (space-separated, e.g.
 * --trace-gc: its lines land in floatip's log, floatip-bench.log in the run directory).
 */
const NODE_ARGS = [
  ...(PERF ? PERF_NODE_ARGS : []),
  ...(process.env.FLOATIP_BENCH_E2E_NODE_ARGS ?? '').split(' ').filter(Boolean),
];
/** _PROFILE: 1 (the nodeCacheCapable run), or the mode to profile floatip in: ncc, full or baseline. */
const PROFILE = profiledMode(process.env.FLOATIP_BENCH_E2E_PROFILE);
const PODS = DEPLOYMENTS * REPLICAS;
const NS = 'e2e-bench';
const nodeNames = Array.from({ length: NODES }, (_, i) => `bench-${i + 1}`);
// nodes in 10.99.0.0/22; pods from 10.100.0.0/20 (4,000 addresses)
const CONFIG: ConfigEntry[] = [
  {
    nodeSubnets: ['10.99.0.0/22'],
    ips: ['10.100.0.10~10.100.15.250'],
    subnet: '10.100.0.0/20',
    gateway: '10.100.0.1',
  },
];

type Mode =
  | 'baseline'
  | 'tiny'
  | 'tiny-crd'
  | 'tiny-crd-pods'
  | 'tiny-crd-watch'
  | 'tiny-crd-full'
  | 'ncc'
  | 'full'
  | 'ncc-noprio';
const ALL_MODES: Mode[] = [
  'baseline',
  'tiny',
  'tiny-crd',
  'tiny-crd-pods',
  'tiny-crd-watch',
  'tiny-crd-full',
  'ncc',
  'full',
  'ncc-noprio',
];
const MODES: Mode[] = (
  process.env.FLOATIP_BENCH_E2E_MODES ?? 'baseline,tiny-crd,tiny-crd-watch,tiny-crd-full,ncc,full'
)
  .split(',')
  .map((m) => m.trim() as Mode)
  .filter((m) => ALL_MODES.includes(m));
const LABEL: Record<Mode, string> = {
  baseline: 'no extender (baseline)',
  tiny: 'tiny extender (floor), ncc',
  'tiny-crd': 'tiny + a FloatingIP per pod',
  'tiny-crd-pods': 'tiny-crd + watching pods',
  'tiny-crd-watch': 'tiny-crd + watching as floatip',
  'tiny-crd-full': 'tiny-crd, full Nodes',
  ncc: 'floatip, nodeCacheCapable=true',
  full: 'floatip, nodeCacheCapable=false',
  'ncc-noprio': 'floatip, ncc, no prioritizeVerb',
};

/** The scheduler's configuration for a mode. */
function schedulerFor(mode: Mode) {
  if (mode === 'baseline') return { extender: false };
  return {
    nodeCacheCapable: mode !== 'full' && mode !== 'tiny-crd-full',
    ...(mode === 'ncc-noprio' ? { prioritizeVerb: '' } : {}),
  };
}

/**
 * What floatip in a mode is held to: the floor run beside it, the ratio, and its CPU per 1,000 pods;
 * and, printed beside, the floor that also watches what floatip watches (when that mode ran).
 */
const TARGETS: Partial<
  Record<Mode, { floor: Mode; ratio: number; cpuPer1000: number; watching?: readonly Mode[] }>
> = {
  ncc: { floor: 'tiny-crd', ratio: 1.05, cpuPer1000: 1.5, watching: ['tiny-crd-pods', 'tiny-crd-watch'] },
  full: { floor: 'tiny-crd-full', ratio: 1.15, cpuPer1000: 3 },
};

interface Run {
  readonly mode: Mode;
  readonly round: number;
  readonly result: ScaleResult;
  readonly scheduler: SchedulerMetrics;
  readonly cpu: Record<string, number>;
  /** kube-apiserver's requests during the run, by verb and resource (writes and reads, no watches). */
  readonly requests: Map<string, number>;
  /** kube-apiserver's own mean time, in ms, of each of a bind's writes during the run (BIND_WRITES). */
  readonly writeMs: Map<string, number>;
  /** A trace run's per-verb latency, or a profile run's summary. */
  readonly detail?: string;
  readonly kind?: string;
}

const out = (line = '') => process.stdout.write(`${line}\n`);
const kc = clusterKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
let floatip: FloatipProcess | undefined;
/** The floor's process, during a tiny run. */
let tiny: TinyFloor | undefined;

beforeAll(async () => {
  await stopAllFloatips();
  await writeFloatipConfig(CONFIG);
  await deleteAllFloatingIPs();
  await ensureNamespace(NS);
  await createNodes(
    nodeNames,
    nodeNames.map((_, i) => `10.99.${Math.floor(i / 200)}.${(i % 200) + 10}`),
    { [ENI_IP]: '64', pods: '110' },
  );
  floatip = await startFloatip();
});

/** floatip as the bench runs it: info logs, as in production (one line per bind and per release). */
async function startFloatip(options: { name?: string; port?: number; nodeArgs?: string[] } = {}) {
  const started = await FloatipProcess.start({
    name: 'bench',
    logLevel: 'info',
    ...options,
    nodeArgs: [...NODE_ARGS, ...(options.nodeArgs ?? [])],
  });
  await started.ready();
  return started;
}

afterAll(async () => {
  // a run that failed before its floor stopped leaves it on the extender port
  await tiny?.stop().catch(() => undefined);
  await stopAllFloatips();
  await deleteNamespace(NS);
  await deleteNodes(nodeNames);
  await deleteAllFloatingIPs();
  await restartScheduler();
});

test(`bench:e2e ${PODS} pods (${DEPLOYMENTS} Deployments x ${REPLICAS}) on ${NODES} nodes`, async () => {
  out();
  out(`machine: ${machine()}`);
  out(
    `bench:e2e: ${PODS} pods as ${DEPLOYMENTS} Deployments x ${REPLICAS} replicas on ${NODES} nodes, ` +
      `${ROUNDS} rounds, each measured run after ${WARM_RUNS} unmeasured of ${WARM_DEPLOYMENTS * REPLICAS} pods; ` +
      'kube-scheduler and kube-controller-manager v1.20.2 with client QPS/burst 500/1000',
  );
  const runs: Run[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    // rotate the order, so no mode always runs first (or right after the cluster's start)
    const order = MODES.map((_, i) => MODES[(i + round - 1) % MODES.length]!);
    for (const mode of order) runs.push(await runOnce(mode, round));
  }
  if (TRACE) {
    for (const mode of ['ncc', 'full'] as const) runs.push(await runOnce(mode, 0, { trace: true }));
  }
  if (PROFILE) runs.push(await runOnce(PROFILE, 0, { profile: true }));
  report(runs);
  await idleLatency();
});

interface RunKind {
  /** Through a timing proxy, floatip on another port. */
  readonly trace?: boolean;
  /** floatip under `node --cpu-prof`, stopped right after the measurement to write its profile. */
  readonly profile?: boolean;
}

async function runOnce(mode: Mode, round: number, kind: RunKind = {}): Promise<Run> {
  const what = kind.trace ? 'trace' : kind.profile ? 'profile' : `round ${round}`;
  const withFloatip = mode === 'ncc' || mode === 'full' || mode === 'ncc-noprio';
  const withFloor = mode.startsWith('tiny');
  let proxy: TimingProxy | undefined;
  let profileDir: string | undefined;
  if (withFloor) {
    // the tiny extender takes floatip's place on the extender port for this run
    await floatip!.stop();
    tiny = await startTinyFloor({
      recordObjects: mode !== 'tiny',
      watch: mode === 'tiny-crd-watch' || (mode === 'tiny-crd-pods' && 'pods'),
      nodeArgs: NODE_ARGS,
    });
  } else if (kind.trace) {
    // the scheduler calls the proxy on the extender port; floatip moves to another port
    await floatip!.stop();
    const port = await freePort();
    floatip = await startFloatip({ name: 'bench-trace', port });
    proxy = await startTimingProxy({ port: extenderPort(), target: floatip.url });
  } else if (kind.profile) {
    await floatip!.stop();
    profileDir = join(runDir(), `cpu-profile-${Date.now().toString(36)}`);
    floatip = await startFloatip({
      name: 'bench-profile',
      nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
    });
  }
  await restartScheduler(schedulerFor(mode));
  await sleep(1000); // let the new scheduler's informers settle
  // the same unmeasured runs first in every mode: floatip and the floor are fresh processes in most
  // runs (floatip stops for each floor's run); what is measured is the cost per pod of a running
  // extender, not V8 compiling the code on its path (floatip's first 1,000 pods after a 100-pod
  // warm-up cost 2.8 CPU-s, after 500 2.0-2.3; and after 500 its threads other than the main one,
  // V8's compiler above all, still spent 0.6-0.8 CPU-s in the measured run against 0.3 in the runs
  // after it, after 1,000 a median of 0.5; the floors' 0.3 either way). Each warm-up run binds its
  // pods and releases them, and what a process does between its first runs (releases, scrapes)
  // deoptimizes code its binds had V8 compile (76 deoptimizations between two runs, with
  // --trace-deopt): after one warm-up run floatip's measured runs took 1.57-2.05 CPU-s per 1,000
  // pods, after a measured run as well 1.39-1.49, on 2026-12-05 (_WARM_RUNS, default 2).
  // A running floatip is scraped: /metrics is made before the warm-up, as a running floatip's first
  // scrapes are long past; the reading the means start from is taken before the window opens
  if (withFloatip) await floatipReadings();
  for (let w = 1; w <= WARM_RUNS; w++) {
    const warm = `w${w}-${round || 'x'}-${mode}-${Date.now().toString(36)}`;
    await measureBinding({
      namespace: NS,
      deployments: WARM_DEPLOYMENTS,
      replicas: REPLICAS,
      run: warm,
      requireAnnotation: mode !== 'baseline',
      timeoutMs: 120_000,
    });
    await clearRun(warm, withFloor && mode !== 'tiny');
    // and scraped between runs, as a running floatip is every 15-30 s: the first scrape its
    // optimized server code meets (express's request and response objects where it had seen only
    // the extender's) deoptimizes it, and it should be compiled again in a warm-up run, not in the
    // measured one (44 optimizations in one measured run without this scrape, --trace-opt)
    if (withFloatip) await floatipReadings();
  }
  const requests0 = await apiserverRequests();
  const scheduler0 = await schedulerReading();
  const readings0 = withFloatip ? await floatipReadings() : undefined;
  await tiny?.loopDelay();
  const perfFile = join(runDir(), `perf-${mode}-${what.replace(' ', '')}-${Date.now().toString(36)}.data`);
  const extenderPid = withFloor ? tiny!.pid : withFloatip ? floatip!.pid : undefined;
  const perf = PERF && extenderPid ? recordCpu(extenderPid, perfFile) : undefined;
  const closed0 = await closedExtenderConnections();
  const cpu0 = cpuTimes();
  const from = monotonicMicros();
  const run = `b${round || 'x'}-${mode}-${Date.now().toString(36)}`;
  const result = await measureBinding({
    namespace: NS,
    deployments: DEPLOYMENTS,
    replicas: REPLICAS,
    run,
    requireAnnotation: mode !== 'baseline',
    timeoutMs: 10 * 60_000,
  });
  const cpu1 = cpuTimes();
  const churn = connectionChurn(closed0, await closedExtenderConnections());
  const to = monotonicMicros();
  await perf?.stop();
  const requests1 = await apiserverRequests();
  const requests = new Map<string, number>();
  for (const [what, n] of requests1.counts) {
    const d = n - (requests0.counts.get(what) ?? 0);
    if (d > 0) requests.set(what, d);
  }
  const writeMs = new Map<string, number>();
  for (const [what, [seconds, n]] of requests1.seconds) {
    const [s0, n0] = requests0.seconds.get(what) ?? [0, 0];
    if (n > n0) writeMs.set(what, ((seconds - s0) * 1000) / (n - n0));
  }
  const scheduler = schedulerMetrics(scheduler0, await schedulerReading());
  const readings1 = readings0 ? await floatipReadings() : undefined;
  const floorLoop = withFloor ? await tiny!.loopDelay() : undefined;
  const handler =
    readings0 && readings1
      ? `${handlerMeans(readings0.handlers, readings1.handlers) ?? 'none'}; floatip GC ${collections(readings0.gc, readings1.gc)}; floatip event-loop delay ${readings1.loop}`
      : undefined;
  const cpu: Record<string, number> = {};
  for (const [name, t] of Object.entries(cpu1)) cpu[name] = round2(t - (cpu0[name] ?? 0));
  await verify(run, withFloatip);
  let detail = proxy?.summary();
  await proxy?.close();
  if (tiny) {
    const seen = await tiny.stop();
    tiny = undefined;
    expect(seen.bindErrors).toEqual([]);
    expect(seen.calls.bind).toBeGreaterThanOrEqual(PODS);
  }
  if (kind.trace || kind.profile) {
    await floatip!.stop(); // writes the profile
    if (profileDir) {
      const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
      detail = file
        ? `  ${join(profileDir, file)}\n${summarizeProfile(join(profileDir, file), 20, { from, to })}`
        : '  no profile written';
    }
    floatip = await startFloatip();
  }
  await clearRun(run, withFloor && mode !== 'tiny');
  if (withFloor) {
    // back after the tiny run's pods are gone, so that floatip never sees their fixed annotation
    floatip = await startFloatip();
  }
  const own = withFloatip
    ? `; floatip CPU ${cpuPer1000(cpu).toFixed(2)} s per 1,000 pods`
    : withFloor
      ? `; floor CPU ${cpuPer1000(cpu, 'floor').toFixed(2)} s per 1,000 pods; floor event-loop delay ${floorLoop}`
      : '';
  out(
    `  ${what.padEnd(7)} ${LABEL[mode].padEnd(32)} ${fmt(result.totalMs).padStart(7)} ms ` +
      `(${result.podsPerSecond} pods/s; latency p50 ${fmt(result.latencyMs.p50)}, p99 ${fmt(result.latencyMs.p99)} ms; ` +
      `load ${os.loadavg()[0]!.toFixed(1)}${churn}${own}${handler ? `; floatip handlers ${handler}` : ''})`,
  );
  if (perf) out(await summarizePerf(perfFile, PODS));
  return {
    mode,
    round,
    result,
    scheduler,
    cpu,
    requests,
    writeMs,
    ...(detail ? { detail, kind: what } : {}),
  };
}

/** Deletes a scale run and waits until its pods are gone and their addresses released. */
async function clearRun(run: string, tinyObjects: boolean): Promise<void> {
  await deleteScaleRun(NS, run);
  if (tinyObjects) await deleteAllFloatingIPs(); // nobody else releases the tiny's objects
  await waitFor(
    `scale run ${run}'s pods to be gone and their addresses released`,
    async () => {
      const left = await core.listNamespacedPod({
        namespace: NS,
        labelSelector: `${SCALE_RUN_LABEL}=${run}`,
      });
      if (left.items.length > 0) return undefined;
      return (await listFloatingIPs()).length === 0 ? true : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 500 },
  );
}

/** An extender's CPU-seconds (user + system, its process accounting) per 1,000 pods during a run. */
const cpuPer1000 = (cpu: Record<string, number>, who: 'floatip' | 'floor' = 'floatip') =>
  ((cpu[who] ?? NaN) * 1000) / PODS;

/** Every pod bound; with floatip, one address each from the subnet, none twice, objects agreeing. */
async function verify(run: string, withFloatip: boolean): Promise<void> {
  const pods: V1Pod[] = [];
  let _continue: string | undefined;
  do {
    const page = await core.listNamespacedPod({
      namespace: NS,
      labelSelector: `${SCALE_RUN_LABEL}=${run}`,
      limit: 500,
      ...(_continue ? { _continue } : {}),
    });
    pods.push(...page.items);
    _continue = page.metadata?._continue;
  } while (_continue);
  expect(pods).toHaveLength(PODS);
  expect(pods.every((p) => nodeNames.includes(p.spec?.nodeName ?? ''))).toBe(true);
  if (!withFloatip) return;
  const ips = pods.flatMap(addressesOf);
  expect(ips).toHaveLength(PODS);
  expect(new Set(ips).size).toBe(PODS);
  expect(ips.every((ip) => /^10\.100\.([0-9]|1[0-5])\.\d+$/.test(ip))).toBe(true);
  const { problems, objects } = await consistencyProblems({ floatip: floatip! });
  expect(problems).toEqual([]);
  expect(objects).toHaveLength(PODS);
}

// ---- where the time goes

interface SchedulerMetrics {
  /** Mean seconds per scheduling attempt in the algorithm (filter + score, extenders included). */
  readonly algorithmMs: number;
  /** Mean seconds per binding (the extender's bind, or the default binder's POST). */
  readonly bindingMs: number;
  /** Scheduling attempts by result. */
  readonly attempts: Record<string, number>;
}

/** kube-scheduler's counters at one moment: sums and counts of two histograms, attempts by result. */
interface SchedulerReading {
  readonly algorithm: readonly [number, number];
  readonly binding: readonly [number, number];
  readonly attempts: Record<string, number>;
}

/** kube-scheduler's own metrics (plain HTTP on its healthz port), counted since its restart. */
async function schedulerReading(): Promise<SchedulerReading | undefined> {
  const port = Number(process.env.FLOATIP_E2E_SCHED_HEALTHZ_PORT ?? 26251);
  let text = '';
  try {
    text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  } catch {
    return undefined;
  }
  const value = (name: string) => {
    let sum = 0;
    for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'gm')))
      sum += Number(m[1]);
    return sum;
  };
  const histogram = (base: string) => [value(`${base}_sum`), value(`${base}_count`)] as const;
  const attempts: Record<string, number> = {};
  for (const m of text.matchAll(
    /^scheduler_schedule_attempts_total\{[^}]*result="([^"]+)"[^}]*\} (\d+)$/gm,
  )) {
    attempts[m[1]!] = (attempts[m[1]!] ?? 0) + Number(m[2]);
  }
  return {
    algorithm: histogram('scheduler_scheduling_algorithm_duration_seconds'),
    binding: histogram('scheduler_binding_duration_seconds'),
    attempts,
  };
}

/**
 * kube-scheduler's means over the measured run alone, between two readings: the counters run from
 * its restart, which the warm-up runs follow.
 */
function schedulerMetrics(
  before: SchedulerReading | undefined,
  after: SchedulerReading | undefined,
): SchedulerMetrics {
  if (!before || !after) return { algorithmMs: NaN, bindingMs: NaN, attempts: {} };
  const mean = (a: readonly [number, number], b: readonly [number, number]) =>
    round2(((b[0] - a[0]) / Math.max(1, b[1] - a[1])) * 1000);
  const attempts: Record<string, number> = {};
  for (const [result, n] of Object.entries(after.attempts)) {
    const d = n - (before.attempts[result] ?? 0);
    if (d > 0) attempts[result] = d;
  }
  return {
    algorithmMs: mean(before.algorithm, after.algorithm),
    bindingMs: mean(before.binding, after.binding),
    attempts,
  };
}

/** Sum and count per label value of one of floatip's histograms, read from one /metrics text. */
type Totals = Map<string, [number, number]>;

/**
 * What a running floatip's /metrics says of its own work: its time per extender request
 * (floatip_extender_request_duration_seconds, from request decoded to answer ready) per verb, and
 * its garbage collections per kind (prom-client's nodejs_gc_duration_seconds: major is V8's
 * mark-compact, which on a busy machine costs tens of ms of floatip's thread and more beside it).
 */
async function floatipReadings(): Promise<{ handlers: Totals; gc: Totals; loop: string } | undefined> {
  if (floatip?.apiPort === undefined) return undefined;
  let text: string;
  try {
    const res = await fetch(`http://127.0.0.1:${floatip.apiPort}/metrics`);
    if (res.status !== 200) return undefined;
    text = await res.text();
  } catch {
    return undefined;
  }
  const handlers = totalsOf(text, 'floatip_extender_request_duration_seconds', 'verb');
  return handlers.size > 0
    ? { handlers, gc: totalsOf(text, 'nodejs_gc_duration_seconds', 'kind'), loop: loopDelay(text) }
    : undefined;
}

/**
 * "p50 10.1, p99 12.3, max 25.0 ms": how late floatip's event loop ran a 10 ms timer since the
 * previous scrape (prom-client's monitorEventLoopDelay, reset at each scrape). The timer's own
 * 10 ms is included: a loop that is never held up shows about 10 at every percentile, and every
 * millisecond above it is one in which a scheduler's call waiting for floatip would have waited too.
 */
function loopDelay(text: string): string {
  const ms = (q: string) => {
    const m = new RegExp(`^nodejs_eventloop_lag_${q}_seconds(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text);
    return m ? (Number(m[1]) * 1000).toFixed(1) : '?';
  };
  return `p50 ${ms('p50')}, p99 ${ms('p99')}, max ${ms('max')} ms`;
}

function totalsOf(text: string, histogram: string, label: string): Totals {
  const totals: Totals = new Map();
  const re = new RegExp(`^${histogram}_(sum|count)\\{([^}]*)\\} ([0-9.e+-]+)$`, 'gm');
  for (const m of text.matchAll(re)) {
    const key = new RegExp(`${label}="([^"]+)"`).exec(m[2]!)?.[1] ?? '?';
    const t = totals.get(key) ?? [0, 0];
    t[m[1] === 'sum' ? 0 : 1] += Number(m[3]);
    totals.set(key, t);
  }
  return totals;
}

/** "filter 0.12 ms, bind 4.1 ms": mean per verb between two readings. */
function handlerMeans(before: Totals, after: Totals): string | undefined {
  const parts: string[] = [];
  for (const [verb, [sum, count]] of after) {
    const [sum0, count0] = before.get(verb) ?? [0, 0];
    if (count > count0) parts.push(`${verb} ${(((sum - sum0) / (count - count0)) * 1000).toFixed(2)} ms`);
  }
  return parts.join(', ') || undefined;
}

/** "3 major (0.14 s), 41 minor (0.09 s)": floatip's collections between two readings. */
function collections(before: Totals, after: Totals): string {
  return ['major', 'minor']
    .map((kind) => {
      const [sum, count] = after.get(kind) ?? [0, 0];
      const [sum0, count0] = before.get(kind) ?? [0, 0];
      return `${count - count0} ${kind} (${(sum - sum0).toFixed(2)} s)`;
    })
    .join(', ');
}

/** The two writes of every bind, as apiserverRequests names them in `seconds`. */
const BIND_WRITES = ['POST floatingips', 'POST pods/binding'];

/**
 * kube-apiserver's request counters (apiserver_request_total) by "VERB resource[/subresource]
 * (content type)", without WATCH: who asks the API server for what, per run; and the seconds it
 * spent (apiserver_request_duration_seconds: sum, count) on each of a bind's writes.
 */
async function apiserverRequests(): Promise<{
  counts: Map<string, number>;
  seconds: Map<string, [number, number]>;
}> {
  const { KUBECTL, KUBECONFIG } = loadCluster();
  const totals = new Map<string, number>();
  const seconds = new Map<string, [number, number]>();
  let text: string;
  try {
    ({ stdout: text } = await promisify(execFile)(
      KUBECTL,
      ['--kubeconfig', KUBECONFIG, 'get', '--raw', '/metrics'],
      {
        maxBuffer: 64 * 2 ** 20,
      },
    ));
  } catch {
    return { counts: totals, seconds };
  }
  for (const m of text.matchAll(
    /^apiserver_request_duration_seconds_(sum|count)\{([^}]*)\} ([0-9.e+-]+)$/gm,
  )) {
    const what = callOf(labelsOf(m[2]!));
    if (!BIND_WRITES.includes(what)) continue;
    const t = seconds.get(what) ?? [0, 0];
    t[m[1] === 'sum' ? 0 : 1] += Number(m[3]);
    seconds.set(what, t);
  }
  for (const m of text.matchAll(/^apiserver_request_total\{([^}]*)\} ([0-9.e+]+)$/gm)) {
    const labels = labelsOf(m[1]!);
    if (labels.get('verb') === 'WATCH') continue;
    const type = (labels.get('contentType') ?? '').replace('application/', '').replace('vnd.kubernetes.', '');
    const what = `${callOf(labels)} (${type})`;
    totals.set(what, (totals.get(what) ?? 0) + Number(m[2]));
  }
  return { counts: totals, seconds };
}

/** A metric line's labels, `a="x",b="y"`, by name (whole names: `resource` is not `subresource`). */
function labelsOf(text: string): Map<string, string> {
  return new Map([...text.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

/** "VERB resource[/subresource]" of an API server metric's labels. */
function callOf(labels: Map<string, string>): string {
  const sub = labels.get('subresource');
  return `${labels.get('verb') ?? ''} ${labels.get('resource') ?? ''}${sub ? `/${sub}` : ''}`;
}

/**
 * The extender port's connections in TIME_WAIT (`ss`): each one closed within the last minute, on
 * the side that closed it first, so one set before and one after a run of seconds tell how many
 * connections between kube-scheduler and the extender ended during it, and who ended them.
 */
async function closedExtenderConnections(): Promise<Set<string> | undefined> {
  const port = extenderPort();
  try {
    const { stdout } = await promisify(execFile)('ss', [
      '-Htan',
      'state',
      'time-wait',
      `( sport = :${port} or dport = :${port} )`,
    ]);
    const closed = new Set<string>();
    for (const line of stdout.split('\n')) {
      const [local, peer] = line.trim().split(/\s+/).slice(-2);
      if (local && peer) closed.add(`${local} ${peer}`);
    }
    return closed;
  } catch {
    return undefined; // no `ss`: no reading, rather than a count of 0
  }
}

/** "; extender connections closed N by the scheduler, M by the extender" between two readings. */
function connectionChurn(before: Set<string> | undefined, after: Set<string> | undefined): string {
  if (!before || !after) return '; extender connections closed: unknown (ss failed)';
  const port = `:${extenderPort()}`;
  let byScheduler = 0;
  let byExtender = 0;
  for (const c of after) {
    if (before.has(c)) continue;
    if (c.split(' ')[0]!.endsWith(port)) byExtender++;
    else byScheduler++;
  }
  return `; extender connections closed ${byScheduler} by the scheduler, ${byExtender} by the extender`;
}

/** CLOCK_MONOTONIC in microseconds, the clock of a V8 CPU profile's timestamps. */
const monotonicMicros = (): number => Number(process.hrtime.bigint() / 1000n);

function profiledMode(knob: string | undefined): Mode | undefined {
  if (knob === undefined || knob === '') return undefined;
  const mode = knob === '1' ? 'ncc' : knob;
  if (mode !== 'ncc' && mode !== 'full' && mode !== 'baseline')
    throw new Error(`FLOATIP_BENCH_E2E_PROFILE=${knob}: expected 1, ncc, full or baseline`);
  return mode;
}

/**
 * CPU-seconds of a process's main thread (its /proc task of its own pid); the rest of its time is
 * its other threads': for node, V8's workers (compiling hot code with TurboFan, helping the GC) and
 * libuv's pool. A fresh floatip compiles for its first few thousand pods (bench:e2e's warm-up is
 * 500), so that rest falls from round to round of a process that is not restarted.
 */
function mainThread(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) so far of each control-plane process and floatip. */
function cpuTimes(): Record<string, number> {
  const ticks = 100; // USER_HZ on Linux
  /** utime and stime: the process's own code, and the kernel's work on its behalf (its syscalls) */
  const times2 = (pid: number | undefined): [number, number] | undefined => {
    if (!pid) return undefined;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return [Number(fields[11]) / ticks, Number(fields[12]) / ticks];
    } catch {
      return undefined;
    }
  };
  const read = (pid: number | undefined): number | undefined => {
    const t = times2(pid);
    return t && t[0] + t[1];
  };
  const pidOf = (name: string) => {
    try {
      return Number(readFileSync(join(runDir(), `${name}.pid`), 'utf8').trim());
    } catch {
      return undefined;
    }
  };
  const times: Record<string, number> = {};
  for (const name of ['etcd', 'kube-apiserver', 'kube-scheduler', 'kube-controller-manager']) {
    const t = read(pidOf(name));
    if (t !== undefined) times[name] = t;
  }
  const pid = floatip?.pid;
  const f = times2(pid);
  if (pid !== undefined && f !== undefined) {
    times.floatip = f[0] + f[1];
    times['floatip in the kernel'] = f[1];
    const main = mainThread(pid);
    if (main !== undefined) times['floatip off its main thread'] = f[0] + f[1] - main;
  }
  const floor = read(tiny?.pid);
  if (floor !== undefined) times.floor = floor;
  const self = process.cpuUsage();
  times['test process'] = (self.user + self.system) / 1e6;
  return times;
}

function report(runs: readonly Run[]): void {
  const timed = runs.filter((r) => r.round > 0);
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(s.length / 2);
    return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  };
  const of = (mode: Mode) => timed.filter((r) => r.mode === mode);
  const base = of('baseline').length > 0 ? median(of('baseline').map((r) => r.result.totalMs)) : NaN;
  out();
  if (timed.length > 0) out(`bench:e2e results (median of ${ROUNDS}; ratio = mode / baseline):`);
  for (const mode of timed.length > 0 ? MODES : []) {
    const rs = of(mode);
    const total = median(rs.map((r) => r.result.totalMs));
    const ratio = total / base;
    let target = '';
    const t = TARGETS[mode];
    if (t && of(t.floor).length > 0) {
      const floor = median(of(t.floor).map((r) => r.result.totalMs));
      const toFloor = total / floor;
      const cpu = median(rs.map((r) => cpuPer1000(r.cpu)));
      const floorCpu = median(of(t.floor).map((r) => cpuPer1000(r.cpu, 'floor')));
      target =
        `  / ${t.floor} x${toFloor.toFixed(3)} (target <= ${t.ratio}: ${toFloor <= t.ratio ? 'met' : 'NOT met'}); ` +
        `floatip CPU ${cpu.toFixed(2)} s per 1,000 pods (target <= ${t.cpuPer1000}: ${cpu <= t.cpuPer1000 ? 'met' : 'NOT met'}; ` +
        `the floor's own ${floorCpu.toFixed(2)} s, floatip x${(cpu / floorCpu).toFixed(2)} of it)`;
      for (const w of (t.watching ?? []).filter((m) => of(m).length > 0)) {
        const watching = median(of(w).map((r) => r.result.totalMs));
        const watchingCpu = median(of(w).map((r) => cpuPer1000(r.cpu, 'floor')));
        target +=
          `; / ${w} x${(total / watching).toFixed(3)} (itself x${(watching / floor).toFixed(3)} ${t.floor}), ` +
          `its own CPU ${watchingCpu.toFixed(2)} s, floatip x${(cpu / watchingCpu).toFixed(2)} of it`;
      }
    }
    out(
      `  ${LABEL[mode].padEnd(32)} ${fmt(total).padStart(8)} ms  ${Number.isNaN(ratio) ? '(no baseline)' : `x${ratio.toFixed(3)}`}  ` +
        `[${rs.map((r) => fmt(r.result.totalMs)).join(', ')}]${target}`,
    );
  }
  out();
  if (timed.length > 0) out('where the time goes (per mode, median over rounds):');
  for (const mode of timed.length > 0 ? MODES : []) {
    const rs = of(mode);
    const algorithm = median(rs.map((r) => r.scheduler.algorithmMs));
    const binding = median(rs.map((r) => r.scheduler.bindingMs));
    const cpuNames = Object.keys(rs[0]?.cpu ?? {});
    const cpu = cpuNames.map((n) => `${n} ${median(rs.map((r) => r.cpu[n] ?? 0)).toFixed(1)}`).join(', ');
    const attempts = JSON.stringify(rs.at(-1)?.scheduler.attempts ?? {});
    out(
      `  ${LABEL[mode].padEnd(32)} scheduler: algorithm ${algorithm.toFixed(2)} ms/attempt, binding ${binding.toFixed(1)} ms/pod, ` +
        `attempts ${attempts}`,
    );
    out(`  ${''.padEnd(32)} CPU seconds during the run: ${cpu}`);
    const last = rs.at(-1)!.requests;
    const perPod = [...last]
      .filter(([, n]) => n >= PODS / 2)
      .sort((a, b) => b[1] - a[1])
      .map(([what, n]) => `${what} ${(n / PODS).toFixed(2)}`)
      .join(', ');
    out(`  ${''.padEnd(32)} kube-apiserver requests per pod (last round): ${perPod}`);
    // a bind's two writes as the API server timed them: what of the scheduler's binding time is
    // the API server's, and what is the extender's own
    const writes = BIND_WRITES.map((what) => {
      const means = rs.flatMap((r) => r.writeMs.get(what) ?? []);
      return `${what} ${means.length > 0 ? median(means).toFixed(1) : '-'} ms`;
    }).join(', ');
    out(`  ${''.padEnd(32)} kube-apiserver's own mean time per bind write: ${writes}`);
  }
  for (const r of runs.filter((x) => x.detail)) {
    out();
    out(
      r.kind === 'trace'
        ? `floatip per-verb latency through a timing proxy (${LABEL[r.mode]}, ${fmt(r.result.totalMs)} ms):`
        : `floatip CPU profile (${LABEL[r.mode]}, ${fmt(r.result.totalMs)} ms, floatip ${r.cpu.floatip} CPU s):`,
    );
    out(r.detail!);
  }
}

/**
 * floatip's own latency with the cluster idle: sequential filter and prioritize calls for one pod
 * of the bench's shape, as the scheduler sends them with nodeCacheCapable (names only), straight
 * to floatip. What each call costs when floatip and the machine are not busy with anything else.
 */
async function idleLatency(): Promise<void> {
  if (!floatip?.running) return;
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'idle-probe-7d9f8b6c5-abcde',
      namespace: NS,
      uid: '00000000-0000-0000-0000-000000000001',
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'idle-probe-7d9f8b6c5', uid: 'x' },
      ],
    },
    spec: { containers: [{ name: 'app', image: 'x', resources: { limits: { [ENI_IP]: '1' } } }] },
  };
  const body = JSON.stringify({ Pod: pod, NodeNames: nodeNames });
  const lines: string[] = [];
  for (const verb of ['filter', 'prioritize']) {
    const ms: number[] = [];
    for (let i = 0; i < 520; i++) {
      const t0 = performance.now();
      const res = await fetch(`${floatip.url}/v1/${verb}`, { method: 'POST', body });
      await res.arrayBuffer();
      if (i >= 20) ms.push(performance.now() - t0); // after warm-up
    }
    ms.sort((a, b) => a - b);
    const q = (p: number) => ms[Math.min(ms.length - 1, Math.ceil(p * ms.length) - 1)]!.toFixed(2);
    lines.push(`  ${verb.padEnd(10)} p50 ${q(0.5)} ms, p90 ${q(0.9)}, p99 ${q(0.99)}, max ${q(1)} ms`);
  }
  out();
  out(`floatip alone, cluster idle: ${nodeNames.length} node names, 500 sequential calls per verb:`);
  for (const line of lines) out(line);
}

function machine(): string {
  const cpus = os.cpus();
  return (
    `${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
    `Node.js ${process.version}, ${os.platform()} ${os.release()}`
  );
}

const fmt = (ms: number) => Math.round(ms).toLocaleString('en');
const round2 = (x: number) => Math.round(x * 100) / 100;
