// E2E-H8: kube-scheduler itself, without floatip, when a pod is deleted and re-created under the same
// name on another node while the scheduler's watch is down. The informer's relist then delivers the
// two pods as one update (it keys pods by namespace/name). v1.20.2 splits such an update by UID;
// v1.37.2 does not and exits ("Pod updated on a different node than previously added to. Scheduler
// cache is corrupted"), kubernetes/kubernetes PR 141255 (open). StatefulSet pods re-created during
// the churn's kube-apiserver and etcd restarts do exactly this, so the churn counts such exits apart
// (scheduler-log.ts, schedulerExits): this test is the evidence that they are the scheduler's own.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import {
  clusterKubeConfig,
  controlComponent,
  kubeLine,
  loadCluster,
  restartScheduler,
  runDir,
} from './cluster.js';
import { schedulerExits } from './scheduler-log.js';
import { createNodes, deleteNodes } from './nodes.js';
import { sleep, waitFor } from './wait.js';
import { deleteNamespace, ensureNamespace } from './workloads.js';

const core = clusterKubeConfig().makeApiClient(CoreV1Api);
const ns = 'e2e-h-relist';
const nodes = ['e2e-h-relist-1', 'e2e-h-relist-2'];

const podOn = (node: string): V1Pod => ({
  metadata: { name: 'same-name', namespace: ns },
  spec: { nodeName: node, containers: [{ name: 'c', image: 'pause' }] },
});

function schedulerPid(): number {
  return Number(readFileSync(join(runDir(), 'kube-scheduler.pid'), 'utf8').trim());
}

/** etcd's history compacted up to now (its JSON gateway), so no watch can resume from before. */
async function compactEtcd(): Promise<void> {
  const etcd = loadCluster().ETCD_URL;
  const post = async (path: string, body: object) => {
    const res = await fetch(`${etcd}${path}`, { method: 'POST', body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`etcd ${path}: HTTP ${res.status} ${await res.text()}`);
    return (await res.json()) as { header?: { revision?: string } };
  };
  const revision = (await post('/v3/kv/range', { key: Buffer.from('/').toString('base64') })).header
    ?.revision;
  if (!revision) throw new Error('etcd gave no revision');
  await post('/v3/kv/compaction', { revision, physical: true });
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  await restartScheduler({ extender: false });
  await ensureNamespace(ns);
  await createNodes(nodes, ['10.20.2.11', '10.20.2.12']);
});

afterAll(async () => {
  await deleteNamespace(ns);
  await deleteNodes(nodes);
  await restartScheduler();
  // each kube-apiserver restart fails every watch and list of kube-controller-manager several times,
  // and client-go's reflector backs off (0.8 s doubling to 30 s, jittered up to 60 s): after this
  // test its informers were blind for a minute, and the next suite's Deployment got its pods 33 s
  // late (CI, v1.37.2). A fresh controller manager watches at once.
  await controlComponent('stop', 'kube-controller-manager');
  await controlComponent('start', 'kube-controller-manager');
});

/** "Caches populated" lines of the pod informer so far (v1.37 logs each list it applies at -v=2). */
function podRelists(): number {
  const log = readFileSync(join(runDir(), 'kube-scheduler.log'), 'utf8');
  return log.split('"Caches populated" type="*v1.Pod"').length - 1;
}

/**
 * With the scheduler stopped: a new kube-apiserver (which cuts its watches), the pod deleted and
 * re-created on `to`, and etcd compacted past the scheduler's resourceVersion, so that its watch
 * cannot resume and the informer lists again. Then the scheduler runs on. Resolves with whether it
 * was re-created (the scheduler did stop) and whether the scheduler stayed stopped throughout (the
 * kernel continues stopped processes of a process group it finds orphaned, so that can fail).
 */
async function recreateWhileBlind(pid: number, to: string): Promise<{ recreated: boolean; blind: boolean }> {
  process.kill(pid, 'SIGSTOP');
  try {
    const held = await waitFor('kube-scheduler to be stopped', () => (stopped(pid) ? true : undefined), {
      timeoutMs: 5000,
    }).then(
      () => true,
      () => false,
    );
    if (!held) return { recreated: false, blind: false };
    await controlComponent('stop', 'kube-apiserver');
    await controlComponent('start', 'kube-apiserver');
    await core.deleteNamespacedPod({ name: 'same-name', namespace: ns, gracePeriodSeconds: 0 });
    await waitFor('the previous same-name to be gone', async () =>
      (await core.listNamespacedPod({ namespace: ns })).items.length === 0 ? true : undefined,
    );
    await core.createNamespacedPod({ namespace: ns, body: podOn(to) });
    await compactEtcd();
    return { recreated: true, blind: stopped(pid) };
  } finally {
    if (alive(pid)) process.kill(pid, 'SIGCONT');
  }
}

/** Whether the process is stopped (state T in /proc/<pid>/stat). */
function stopped(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
  } catch {
    return false;
  }
}

/** Tries before giving up: the pod informer does not always list again (it may resume its watch). */
const ATTEMPTS = 6;

test(`E2E-H8 (${kubeLine()}) a pod re-created on another node while kube-scheduler's watch was down: v1.20.2 carries on, v1.37.2 exits (kubernetes PR 141255)`, async () => {
  let on = nodes[0]!;
  await core.createNamespacedPod({ namespace: ns, body: podOn(on) });
  await sleep(2000); // the scheduler's cache has it on the first node
  const pid = schedulerPid();
  const before = schedulerExits();
  const elsewhere = () => (on === nodes[0] ? nodes[1]! : nodes[0]!);
  if (kubeLine() === 'v1.20') {
    let blind = 0;
    for (let i = 1; i <= ATTEMPTS && blind < 3; i++) {
      const attempt = await recreateWhileBlind(pid, elsewhere());
      if (attempt.recreated) on = elsewhere();
      if (attempt.blind) blind++;
      await sleep(8000);
      expect(alive(pid)).toBe(true);
    }
    expect(blind).toBeGreaterThan(0);
    expect(schedulerExits().total).toBe(before.total);
    return;
  }
  let relisted = false;
  for (let i = 1; i <= ATTEMPTS && alive(pid); i++) {
    const relists = podRelists();
    const attempt = await recreateWhileBlind(pid, elsewhere());
    if (attempt.recreated) on = elsewhere();
    await waitFor(
      'kube-scheduler to exit or its pod informer to list again',
      () => (!alive(pid) || podRelists() > relists ? true : undefined),
      { timeoutMs: 8000 },
    ).catch(() => undefined);
    await sleep(1000); // an exit comes within milliseconds of the relist
    relisted ||= attempt.recreated && podRelists() > relists;
  }
  // not alive: a relist merged the two pods into one update and v1.37.2 exited
  expect({ relisted, alive: alive(pid) }).toEqual({ relisted: true, alive: false });
  const after = schedulerExits();
  expect(after.total).toBe(before.total + 1);
  // the exit came as the pod informer's relist was applied: what the churn counts as the scheduler's own
  expect(after.onRelist).toBe(before.onRelist + 1);
  expect(after.lastPod).toBe(`${ns}/same-name`);
}, 400_000);
