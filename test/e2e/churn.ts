// The churn on the real control plane (issue 20): workloads of every release policy created,
// scaled, rolled out and deleted (churn-workloads.ts) while faults are injected on a schedule
// (churn-faults.ts); then, once the faults stop and a resync interval has passed, the invariants:
// no address twice, none leaked or lost, every pod in its node's subnet, floatip's REST view and
// metrics equal to the objects, and every pod created during the run bound or deleted.
import { AppsV1Api, CoreV1Api, makeInformer, type V1Pod } from '@kubernetes/client-node';
import {
  BLACKHOLE_MS,
  FAULT_KINDS,
  injectFault,
  Replicas,
  type FaultKind,
  type FaultRecord,
} from './churn-faults.js';
import { DuplicateWatch } from './churn-duplicates.js';
import { sortUnbound } from './churn-unbound.js';
import { Operator, type OperatorFigures } from './churn-operator.js';
import { catalogue, CHURN_POOL, CHURN_POOL_SIZE, WorkloadDriver, type Workload } from './churn-workloads.js';
import { clusterKubeConfig, controlComponent } from './cluster.js';
import { FakeKubelet } from './fake-kubelet.js';
import { schedulerExits, type SchedulerExits } from './scheduler-log.js';
import { GROUPS, SUITE_CONFIG } from './groups.js';
import { runInformer } from './informers.js';
import {
  applyCrds,
  consistencyProblems,
  createPool,
  deletePool,
  listFloatingIPs,
  type Consistency,
} from './ipam-state.js';
import { INVARIANTS, type Invariant } from './ipam-invariants.js';
import { describeError } from './kube-errors.js';
import { stopAllFloatips } from './floatip.js';
import { cleanUpFile, endNamespace, note, prepareFile, startFloatip } from './suite.js';
import { sleep } from './wait.js';
import { ensureNamespace } from './workloads.js';
import { SILENCE_GRACE_MS, WATCH_TIMEOUT_SECONDS } from '../../src/kube/reflector.js';

export const CHURN_GROUPS = [GROUPS.churnA, GROUPS.churnB];
const BURST = 6;

export interface ChurnPlan {
  readonly namespace: string;
  /** Stop after this many successful operations (API writes by the driver)... */
  readonly operations: number;
  /** ...or after this long, whichever comes first. */
  readonly maxDurationMs: number;
  /** Pace of the driver, and how many operations may be under way at once. */
  readonly opsPerSecond: number;
  readonly concurrency: number;
  /** The faults, in order, cycled until the driver stops (`once`: each once, then none). */
  readonly faults: readonly FaultKind[];
  readonly once?: boolean;
  /** Quiet time after each fault. */
  readonly faultGapMs: number;
  /** floatip's --resync-interval, in seconds. */
  readonly resyncSeconds: number;
  readonly seed: number;
  /** An operator beside the workloads (churn-operator.ts), one action every `gapMs`. */
  readonly operator?: { readonly gapMs: number };
}

export interface ChurnFigures {
  operations: number;
  failedOperations: number;
  byOperation: Record<string, number>;
  faults: Record<FaultKind, number>;
  /** Distinct pods (UIDs) seen in the namespace during the run. */
  pods: number;
  runMs: number;
  invariants: Record<Invariant | 'stuck', number>;
  problems: string[];
  /**
   * Pods refused for their Deployment's limit, which pods of a deleted ReplicaSet of that
   * Deployment's name fill because kube-controller-manager has not collected them: not stuck by
   * floatip (galaxy's rule counts them), said apart.
   */
  behindUncollected: string[];
  /** For each app with a stuck pod: its Deployments, ReplicaSets, pods and FloatingIPs at the end. */
  stuckApps: string[];
  /**
   * After each blackhole, within the bound: watches a replica gave up on as silent (and when, at
   * the latest), and catch-ups of a replica that took the Lease (each ends every watch it has, silent
   * or not, and lists again).
   */
  silentWatches: { noticed: number; caughtUp: number; maxMs: number };
  floatipRestarts: number;
  /**
   * kube-scheduler exits for a corrupted cache: all of them, and those that came as its pod relist
   * was applied (kubernetes PR 141255, E2E-H8); any other would be a binding landing late.
   */
  schedulerExits: { total: number; onRelist: number };
  /** What the operator did and was answered, when the plan has one. */
  operator?: OperatorFigures;
}

/** A small seeded generator (mulberry32), so a run can be repeated. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every pod UID seen in the namespace, and whether it was ever bound or is gone. */
class PodLedger {
  readonly seen = new Map<string, { name: string; bound: boolean; gone: boolean }>();
  warnings = 0;
  duplicates: DuplicateWatch | undefined;
  private running: { stop(): Promise<void> } | undefined;

  async start(namespace: string): Promise<void> {
    const kc = clusterKubeConfig();
    const duplicates = (this.duplicates = new DuplicateWatch(kc, namespace));
    const core = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer<V1Pod>(kc, `/api/v1/namespaces/${namespace}/pods`, () =>
      core.listNamespacedPod({ namespace }),
    );
    const record = (pod: V1Pod, gone: boolean) => {
      const uid = pod.metadata?.uid ?? '';
      const entry = this.seen.get(uid) ?? { name: pod.metadata?.name ?? '', bound: false, gone: false };
      entry.bound ||= Boolean(pod.spec?.nodeName);
      entry.gone ||= gone;
      this.seen.set(uid, entry);
      duplicates.seen(pod, gone);
    };
    informer.on('add', (p) => record(p, false));
    informer.on('update', (p) => record(p, false));
    informer.on('delete', (p) => record(p, true));
    this.running = await runInformer(informer, () => this.warnings++);
  }

  /**
   * Per the API server now (the informer may be behind): pods neither bound nor gone, with the
   * scheduler's last word on each, and pods whose graceful deletion has not been finished for more
   * than `lingerMs` (the fake kubelet's part; such a pod keeps its address, and its app's limit).
   */
  async unsettled(
    namespace: string,
    lingerMs: number,
  ): Promise<{ unbound: string[]; lingering: string[]; behindUncollected: string[]; chains: string[] }> {
    const kc = clusterKubeConfig();
    const apps = kc.makeApiClient(AppsV1Api);
    const [pods, replicaSets, deployments, addresses] = await Promise.all([
      kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace }),
      apps.listNamespacedReplicaSet({ namespace }),
      apps.listNamespacedDeployment({ namespace }),
      listFloatingIPs(kc),
    ]);
    const { unbound, behindUncollected, chains } = sortUnbound(
      pods.items,
      replicaSets.items,
      deployments.items,
      addresses.filter((a) => a.key.split('_')[1] === namespace),
    );
    const now = Date.now();
    const lingering = pods.items
      .filter((p) => p.metadata?.deletionTimestamp && now - p.metadata.deletionTimestamp.getTime() > lingerMs)
      .map(
        (p) =>
          `pod ${p.metadata?.name} has been terminating for ${((now - p.metadata!.deletionTimestamp!.getTime()) / 1000).toFixed(0)} s: its deletion was not finished`,
      );
    return { unbound, lingering, behindUncollected, chains };
  }

  async stop(): Promise<void> {
    await this.running?.stop();
  }
}

/**
 * A churn file's beforeAll and afterAll: the cluster prepared (config, nodes, Pool, namespace, a
 * fake kubelet); afterwards the replicas stopped and everything removed, with a floatip on the
 * extender port to see the pods go. Returns what starts the replicas (inside the scenario, so
 * their logs are in its failure message).
 */
export function churnCluster(namespace: string): {
  startReplicas(resyncInterval: string): Promise<Replicas>;
} {
  let kubelet: FakeKubelet | undefined;
  let replicas: Replicas | undefined;
  beforeAll(async () => {
    await prepareFile(CHURN_GROUPS);
    await applyCrds();
    await deletePool(CHURN_POOL);
    await createPool(CHURN_POOL, CHURN_POOL_SIZE);
    await ensureNamespace(namespace);
    kubelet = new FakeKubelet({ namespace });
    await kubelet.start();
  });
  afterAll(async () => {
    try {
      await replicas?.close();
      await stopAllFloatips();
      await startFloatip({ name: `${namespace}-cleanup` });
      await endNamespace(namespace, kubelet);
      await cleanUpFile(CHURN_GROUPS);
      await deletePool(CHURN_POOL);
    } finally {
      // whatever failed above, no floatip outlives the run (one left would hold the extender port)
      await stopAllFloatips();
      await kubelet?.stop();
    }
  });
  return { startReplicas: async (resyncInterval) => (replicas = await Replicas.start(resyncInterval)) };
}

/**
 * Runs the churn against floatip replicas that the caller's `replicas` started, then checks.
 * The cluster must have been prepared (prepareChurn).
 */
export async function runChurn(plan: ChurnPlan, replicas: Replicas): Promise<ChurnFigures> {
  const random = seeded(plan.seed);
  const kc = clusterKubeConfig();
  const driver = new WorkloadDriver(kc, plan.namespace, CHURN_GROUPS, random);
  const workloads = catalogue(BURST);
  const ledger = new PodLedger();
  await ledger.start(plan.namespace);
  const byOperation: Record<string, number> = {};
  const faults = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  const records: FaultRecord[] = [];
  let operations = 0;
  let failed = 0;
  let lastFailure = '';
  const started = Date.now();
  const exitsBefore = schedulerExits();
  let faultsOver = false;
  const done = () =>
    faultsOver || operations >= plan.operations || Date.now() - started >= plan.maxDurationMs;

  const apply = async (w: Workload, op = driver.pick(w)) => {
    w.busy = true;
    try {
      await driver.apply(w, op);
      operations++;
      byOperation[`${op} ${w.kind}`] = (byOperation[`${op} ${w.kind}`] ?? 0) + 1;
    } catch (err) {
      failed++;
      lastFailure = describeError(err);
    } finally {
      w.busy = false;
    }
  };

  // binds under way: a burst of bare pods, and the fault fires once the leader has bound one of them
  const bursts = workloads.filter((w) => w.name.startsWith('p-burst-'));
  const midBind = async (): Promise<string> => {
    const leader = await replicas.leader();
    const before = leader.records('pod bound').length;
    await Promise.all(bursts.filter((w) => !w.exists).map((w) => apply(w, 'create')));
    const deadline = Date.now() + 20_000;
    while (leader.records('pod bound').length === before && Date.now() < deadline) await sleep(2);
    return `${leader.records('pod bound').length - before} bound by ${leader.name} when kube-apiserver stopped`;
  };

  const faulting = (async () => {
    for (let i = 0; !done() && !(plan.once && i >= plan.faults.length); i++) {
      await sleep(plan.faultGapMs);
      if (done()) break;
      const kind = plan.faults[i % plan.faults.length]!;
      try {
        const record = await injectFault(kind, replicas, midBind);
        // gone long before the next burst needs their names again
        await Promise.all(bursts.filter((w) => w.exists).map((w) => apply(w, 'delete')));
        records.push(record);
        faults[kind]++;
        note(
          `churn: fault ${kind} ${record.detail} (${record.end - record.start} ms), ${operations} operations so far`,
        );
      } catch (err) {
        throw new Error(`fault ${kind}: ${describeError(err)}`);
      }
    }
    // a run of each fault once ends with its faults (and a last quiet gap of churn)
    if (plan.once) await sleep(plan.faultGapMs);
    faultsOver = Boolean(plan.once);
  })();
  faulting.catch(() => (faultsOver = true));
  const operator = plan.operator
    ? new Operator(kc, plan.namespace, CHURN_GROUPS, replicas, seeded(plan.seed + 1))
    : undefined;
  const operating = operator?.run(done, plan.operator!.gapMs);

  const inFlight = new Set<Promise<void>>();
  let progress = Date.now();
  while (!done()) {
    await sleep(1000 / plan.opsPerSecond);
    if (inFlight.size >= plan.concurrency) continue;
    const idle = workloads.filter((w) => !w.busy && !bursts.includes(w));
    const w = idle[Math.floor(random() * idle.length)];
    if (!w) continue;
    const op = apply(w).finally(() => inFlight.delete(op));
    inFlight.add(op);
    if (Date.now() - progress > 60_000) {
      progress = Date.now();
      note(
        `churn: ${operations} operations, ${failed} failed (last: ${lastFailure}), ${ledger.seen.size} pods`,
      );
    }
  }
  await Promise.all(inFlight);
  await faulting;
  await operating;
  // what the operator changed is put back, so that the pods it held up can go on
  await operator?.finish();
  const runMs = Date.now() - started;
  replicas.faults.setLatency(0);

  // one resync interval for floatip to collect what the faults left, then the invariants
  await sleep(plan.resyncSeconds * 1000);
  const settled = await settle(plan, replicas, ledger);
  await ledger.stop();
  await ledger.duplicates?.settled();
  const duplicatesMeanwhile = ledger.duplicates?.problems ?? [];

  const silent = silentWatchNotices(replicas, records);
  return {
    operations,
    failedOperations: failed,
    byOperation,
    faults,
    pods: ledger.seen.size,
    runMs,
    invariants: {
      ...settled.consistency.counts,
      duplicate: settled.consistency.counts.duplicate + duplicatesMeanwhile.length,
      stuck: settled.stuck.length,
    },
    problems: [
      ...settled.consistency.problems,
      ...duplicatesMeanwhile,
      ...settled.stuck.map((p) => `pod ${p} is neither bound nor gone`),
      ...settled.lingering,
      ...(operator?.figures.problems ?? []),
    ],
    behindUncollected: settled.behindUncollected,
    stuckApps: settled.stuckApps,
    silentWatches: silent,
    floatipRestarts: replicas.restarts,
    schedulerExits: exitsSince(exitsBefore),
    ...(operator ? { operator: operator.figures } : {}),
  };
}

/**
 * Waits up to 45 s (under kube-scheduler v1.20's 60 s unschedulable flush, so a pod that needed
 * floatip's requeue and did not get one shows) for every pod to be bound and everything to agree.
 */
async function settle(
  plan: ChurnPlan,
  replicas: Replicas,
  ledger: PodLedger,
): Promise<{
  consistency: Consistency;
  stuck: string[];
  lingering: string[];
  behindUncollected: string[];
  stuckApps: string[];
}> {
  const deadline = Date.now() + 45_000;
  for (;;) {
    // kube-scheduler may have exited for a corrupted cache after the last fault's restart (its
    // relist comes a moment after an API server restart): a static pod's kubelet would start it
    // again, and without it the pods made since would wait for ever (the soak of 2026-12-05 15:57)
    await controlComponent('ensure', 'kube-scheduler');
    const leader = await replicas.leader();
    const [consistency, pods] = await Promise.all([
      consistencyProblems({ floatip: leader, config: SUITE_CONFIG, policies: true }),
      ledger.unsettled(plan.namespace, 30_000),
    ]);
    const { unbound: stuck, lingering, behindUncollected, chains: stuckApps } = pods;
    const quiet =
      consistency.problems.length === 0 &&
      stuck.length === 0 &&
      lingering.length === 0 &&
      behindUncollected.length === 0;
    if (quiet || Date.now() > deadline)
      return { consistency, stuck, lingering, behindUncollected, stuckApps };
    await sleep(1000);
  }
}

/**
 * floatip's log lines for watches it gave up on as silent, and for a new leader's catch-up (which
 * ends them sooner), within a bound after each blackhole.
 */
function silentWatchNotices(
  replicas: Replicas,
  records: readonly FaultRecord[],
): ChurnFigures['silentWatches'] {
  const bound = WATCH_TIMEOUT_SECONDS * 1000 + SILENCE_GRACE_MS + BLACKHOLE_MS;
  const windows = records.filter((r) => r.kind === 'blackhole');
  let noticed = 0;
  let caughtUp = 0;
  let maxMs = 0;
  for (const p of replicas.all) {
    for (const r of p.records('watch ended; listing again')) {
      if (!String(r.err).includes('silent')) continue;
      const at = Number(r.time);
      const w = windows.find((b) => at >= b.start && at <= b.start + bound + 10_000);
      if (!w) continue;
      noticed++;
      maxMs = Math.max(maxMs, at - w.start);
    }
    // a catch-up ends every watch of its replica; only those within the bound can have ended a
    // silent one before the replica would have noticed it (later ones are other Lease changes)
    for (const r of p.records('caught up with the API server; deciding as the leader')) {
      const at = Number(r.time);
      if (windows.some((b) => at >= b.start && at <= b.start + bound)) caughtUp++;
    }
  }
  return { noticed, caughtUp, maxMs };
}

function exitsSince(before: SchedulerExits): ChurnFigures['schedulerExits'] {
  const now = schedulerExits();
  return { total: now.total - before.total, onRelist: now.onRelist - before.onRelist };
}

/** The figures as the README and the soak print them. */
export function describeFigures(f: ChurnFigures): string {
  const faults = Object.entries(f.faults)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const ops = Object.entries(f.byOperation)
    .sort()
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const inv = [...INVARIANTS, 'stuck' as const].map((k) => `${k} ${f.invariants[k]}`).join(', ');
  return [
    `operations ${f.operations} in ${(f.runMs / 1000).toFixed(0)} s (${ops}); failed while faulted ${f.failedOperations}`,
    `faults: ${faults}; floatip replicas restarted ${f.floatipRestarts}; kube-scheduler exits for a corrupted cache ${f.schedulerExits.total} (${f.schedulerExits.onRelist} as its pod relist was applied: kubernetes PR 141255)`,
    `pods ${f.pods}`,
    `invariants: ${inv}`,
    ...(f.behindUncollected.length > 0
      ? [
          `waiting for their app's limit behind pods kube-controller-manager did not collect: ${f.behindUncollected.join('; ')}`,
        ]
      : []),
    ...f.stuckApps,
    `silent watches given up on after blackholes: ${f.silentWatches.noticed}, catch-ups of a new leader: ${f.silentWatches.caughtUp}; silence noticed at most ${(f.silentWatches.maxMs / 1000).toFixed(1)} s after the blackhole began`,
    ...(f.operator
      ? [
          `operator: ${Object.entries(f.operator.actions)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')}; REST answers ${Object.entries(f.operator.answers)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')}; released ${f.operator.released}`,
        ]
      : []),
  ].join('\n');
}
