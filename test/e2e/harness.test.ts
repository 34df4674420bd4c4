// E2E-H: the harness itself, without floatip. A tiny in-process extender stands in for floatip, so
// a failure here is the harness's (control plane, scheduler config, fake kubelet, helpers), not the
// product's. Runs once per nodeCacheCapable mode, switching only the scheduler.
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { clusterKubeConfig, ENI_IP, loadCluster, restartScheduler } from './cluster.js';
import { CNI_ARGS_ANNOTATION, FakeKubelet } from './fake-kubelet.js';
import { httpCode } from './kube-errors.js';
import { createNodes, deleteNodes } from './nodes.js';
import { deleteScaleRun, measureBinding } from './scale.js';
import { startTinyExtender, TINY_CNI_ARGS, type TinyExtender } from './tiny-extender.js';
import { sleep, waitFor } from './wait.js';
import { createDeployment, deleteNamespace, deployment, ensureNamespace } from './workloads.js';

const kc = clusterKubeConfig();
const core = kc.makeApiClient(CoreV1Api);

async function pods(namespace: string, labelSelector?: string): Promise<V1Pod[]> {
  return (await core.listNamespacedPod({ namespace, ...(labelSelector ? { labelSelector } : {}) })).items;
}

/** Pods a ReplicaSet counts: not being deleted, not finished. */
function active(list: V1Pod[]): V1Pod[] {
  return list.filter(
    (p) => !p.metadata?.deletionTimestamp && p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded',
  );
}

function isRunningReady(p: V1Pod): boolean {
  return (
    p.status?.phase === 'Running' &&
    (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

function summary(list: V1Pod[]): string {
  return (
    list
      .map(
        (p) =>
          `${p.metadata?.name}@${p.spec?.nodeName ?? '-'}:${p.status?.phase}` +
          `${p.metadata?.deletionTimestamp ? '(deleting)' : ''}`,
      )
      .join(', ') || 'no pods'
  );
}

/** Waits for `n` active pods of the selector, all Running and Ready, and returns them. */
async function runningPods(namespace: string, selector: string, n: number): Promise<V1Pod[]> {
  let last: V1Pod[] = [];
  return waitFor(
    `${n} running pods of ${selector} in ${namespace}`,
    async () => {
      last = active(await pods(namespace, selector));
      return last.length === n && last.every(isRunningReady) ? last : undefined;
    },
    { describe: () => summary(last) },
  );
}

async function podGone(namespace: string, name: string): Promise<void> {
  await waitFor(`pod ${namespace}/${name} to be gone`, async () => {
    try {
      await core.readNamespacedPod({ name, namespace });
      return undefined;
    } catch (err) {
      if (httpCode(err) === 404) return true;
      throw err;
    }
  });
}

describe.each([false, true])('harness with nodeCacheCapable=%s', (nodeCacheCapable) => {
  const tag = nodeCacheCapable ? 'ncc' : 'full';
  const ns = `e2e-h-${tag}`;
  const nodes = [`e2e-h-${tag}-1`, `e2e-h-${tag}-2`];
  const nodeIPs = ['10.20.0.11', '10.20.0.12'];
  const selector = 'app=web';
  let extender: TinyExtender;
  let kubelet: FakeKubelet;
  /** By "namespace/name": how many more of the pod's deletion-finishing calls fail as if refused. */
  const failDeletions = new Map<string, number>();

  beforeAll(async () => {
    await restartScheduler({ nodeCacheCapable });
    extender = await startTinyExtender();
    await ensureNamespace(ns);
    kubelet = new FakeKubelet({
      namespace: ns,
      interfere: (action, pod) => {
        const left = failDeletions.get(pod) ?? 0;
        if (action !== 'finish-deletion' || left === 0) return undefined;
        failDeletions.set(pod, left - 1);
        return Object.assign(new Error(`connect ECONNREFUSED (a test's stand-in for ${pod})`), {
          code: 'ECONNREFUSED',
        });
      },
    });
    await kubelet.start();
    await createNodes(nodes, nodeIPs, { [ENI_IP]: '16' });
  });

  afterEach(() => {
    expect(kubelet.errors).toEqual([]);
    expect(extender.bindErrors).toEqual([]);
  });

  afterAll(async () => {
    // the namespace controller deletes the pods gracefully: the fake kubelet must still be up
    await deleteNamespace(ns);
    await waitFor(`namespace ${ns} to be empty of pods`, async () =>
      (await pods(ns)).length === 0 ? true : undefined,
    );
    await kubelet?.stop();
    await deleteNodes(nodes);
    await extender?.close();
  });

  test(`E2E-H1 (${tag}) pods of a Deployment are scheduled through the extender`, async () => {
    expect(loadCluster().NODE_CACHE_CAPABLE).toBe(String(nodeCacheCapable));
    expect(process.env.KUBECONFIG).toBe(loadCluster().KUBECONFIG); // exported by globalSetup
    await createDeployment(deployment(ns, 'web', { replicas: 3 }));
    let last: V1Pod[] = [];
    const bound = await waitFor(
      '3 pods bound with the extender annotation',
      async () => {
        last = await pods(ns, selector);
        const ok = last.filter((p) => p.spec?.nodeName && p.metadata?.annotations?.[CNI_ARGS_ANNOTATION]);
        return ok.length === 3 ? ok : undefined;
      },
      { describe: () => summary(last) },
    );
    for (const p of bound) {
      expect(p.metadata?.annotations?.[CNI_ARGS_ANNOTATION]).toBe(TINY_CNI_ARGS);
      expect(nodes).toContain(p.spec?.nodeName);
    }
    expect(extender.calls.filter).toBeGreaterThanOrEqual(3);
    expect(extender.calls.prioritize).toBeGreaterThanOrEqual(1); // two nodes pass filter
    expect(extender.calls.bind).toBeGreaterThanOrEqual(3);
    expect([...extender.filterForms]).toEqual([nodeCacheCapable ? 'NodeNames' : 'Nodes']);
  });

  test(`E2E-H2 (${tag}) the fake kubelet runs bound pods, with the IP from the annotation`, async () => {
    const running = await runningPods(ns, selector, 3);
    for (const p of running) {
      expect(p.status?.podIP).toBe('10.0.0.5');
      expect(p.status?.podIPs).toEqual([{ ip: '10.0.0.5' }]);
      expect(nodeIPs).toContain(p.status?.hostIP);
      const conditions = Object.fromEntries((p.status?.conditions ?? []).map((c) => [c.type, c.status]));
      expect(conditions).toMatchObject({ Ready: 'True', ContainersReady: 'True', PodScheduled: 'True' });
      expect(p.status?.containerStatuses?.[0]?.ready).toBe(true);
    }
  });

  test(`E2E-H3 (${tag}) a graceful deletion is finished by the fake kubelet; the ReplicaSet replaces the pod`, async () => {
    const before = await runningPods(ns, selector, 3);
    const victim = before[0]!;
    const name = victim.metadata!.name!;
    const t0 = Date.now();
    // default grace period (30 s): without a kubelet the pod would stay Terminating
    await core.deleteNamespacedPod({ name, namespace: ns });
    await podGone(ns, name);
    expect(Date.now() - t0).toBeLessThan(15_000);
    const after = await runningPods(ns, selector, 3);
    const oldUids = new Set(before.map((p) => p.metadata?.uid));
    const fresh = after.filter((p) => !oldUids.has(p.metadata?.uid));
    expect(fresh).toHaveLength(1);
    expect(fresh[0]?.metadata?.annotations?.[CNI_ARGS_ANNOTATION]).toBe(TINY_CNI_ARGS);
  });

  test(`E2E-H3b (${tag}) a deletion the fake kubelet failed to finish (API server away) is tried again until done`, async () => {
    const victim = (await runningPods(ns, selector, 3))[0]!;
    const name = victim.metadata!.name!;
    failDeletions.set(`${ns}/${name}`, 2);
    const warningsBefore = kubelet.warnings.length;
    await core.deleteNamespacedPod({ name, namespace: ns });
    await podGone(ns, name);
    expect(failDeletions.get(`${ns}/${name}`)).toBe(0);
    const retried = kubelet.warnings.slice(warningsBefore).filter((w) => w.includes(`${ns}/${name}`));
    expect(retried).toHaveLength(2);
    expect(retried[0]).toMatch(/ECONNREFUSED.*trying again in 500 ms/);
    await runningPods(ns, selector, 3);
  });

  test(`E2E-H4 (${tag}) evict, succeed, and a node whose kubelet stops and resumes`, async () => {
    // evicted: Failed/Evicted, stays so, and the ReplicaSet makes a replacement
    const before = await runningPods(ns, selector, 3);
    const evicted = before[0]!.metadata!.name!;
    await kubelet.evict(ns, evicted);
    const e = await core.readNamespacedPod({ name: evicted, namespace: ns });
    expect(e.status).toMatchObject({ phase: 'Failed', reason: 'Evicted' });
    await sleep(500);
    expect((await core.readNamespacedPod({ name: evicted, namespace: ns })).status?.phase).toBe('Failed');

    // succeeded: a bare pod runs, then completes
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'job-like' },
        spec: {
          restartPolicy: 'Never',
          containers: [
            { name: 'app', image: 'registry.invalid/x', resources: { limits: { [ENI_IP]: '1' } } },
          ],
        },
      },
    });
    await waitFor('pod job-like to run', async () =>
      isRunningReady(await core.readNamespacedPod({ name: 'job-like', namespace: ns })) ? true : undefined,
    );
    await kubelet.succeed(ns, 'job-like');
    expect((await core.readNamespacedPod({ name: 'job-like', namespace: ns })).status?.phase).toBe(
      'Succeeded',
    );

    // a dead kubelet: Ready Unknown plus taint; a deletion there waits; the replacement goes elsewhere
    const current = await runningPods(ns, selector, 3);
    const stuck = current[0]!.metadata!.name!;
    const dead = current[0]!.spec!.nodeName!;
    const alive = nodes.find((n) => n !== dead)!;
    await kubelet.stopHeartbeat(dead, { taint: true });
    const deadNode = await core.readNode({ name: dead });
    expect(deadNode.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('Unknown');
    expect(deadNode.spec?.taints?.map((t) => t.key)).toEqual(['node.kubernetes.io/unreachable']);
    await core.deleteNamespacedPod({ name: stuck, namespace: ns });
    const after = await runningPods(ns, selector, 3);
    const replacement = after.find((p) => !current.some((c) => c.metadata?.uid === p.metadata?.uid));
    expect(replacement?.spec?.nodeName).toBe(alive);
    const still = await core.readNamespacedPod({ name: stuck, namespace: ns });
    expect(still.metadata?.deletionTimestamp).toBeDefined();

    await kubelet.resumeHeartbeat(dead);
    const back = await core.readNode({ name: dead });
    expect(back.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(back.spec?.taints ?? []).toEqual([]);
    await podGone(ns, stuck);
    await runningPods(ns, selector, 3);
  });

  test(`E2E-H5 (${tag}) the scale helper times Deployments until every pod is bound`, async () => {
    const result = await measureBinding({ namespace: ns, deployments: 2, replicas: 3, timeoutMs: 60_000 });
    expect(result.pods).toBe(6);
    expect(result.totalMs).toBeGreaterThan(0);
    expect(result.latencyMs.max).toBeLessThanOrEqual(result.totalMs);
    const bound = (await pods(ns, `floatip-e2e/scale-run=${result.run}`)).filter((p) => p.spec?.nodeName);
    expect(bound).toHaveLength(6);
    await deleteScaleRun(ns, result.run);
    await waitFor(`scale run ${result.run} to be gone`, async () =>
      (await pods(ns, `floatip-e2e/scale-run=${result.run}`)).length === 0 ? true : undefined,
    );
  });
});

describe('harness without extender (baseline)', () => {
  const ns = 'e2e-h-base';
  const nodes = ['e2e-h-base-1'];

  beforeAll(async () => {
    await restartScheduler({ extender: false });
    await ensureNamespace(ns);
    await createNodes(nodes, ['10.20.1.11'], { [ENI_IP]: '16' });
  });

  afterAll(async () => {
    await deleteNamespace(ns);
    await deleteNodes(nodes);
    await restartScheduler();
  });

  test('E2E-H6 a scheduler restarted without extender binds with the default binder', async () => {
    expect(loadCluster().EXTENDER_URL).toBe('');
    const result = await measureBinding({
      namespace: ns,
      deployments: 1,
      replicas: 2,
      requireAnnotation: false,
      timeoutMs: 60_000,
    });
    const bound = await pods(ns, `floatip-e2e/scale-run=${result.run}`);
    expect(bound.map((p) => p.spec?.nodeName)).toEqual([nodes[0], nodes[0]]);
    expect(bound.every((p) => p.metadata?.annotations?.[CNI_ARGS_ANNOTATION] === undefined)).toBe(true);
    await deleteScaleRun(ns, result.run);
  });

  // v1.20 refused a pod created straight after its namespace (500 "No API token found for service
  // account"): the default ServiceAccount and its token come from controllers a moment later
  test('E2E-H9 a namespace ensureNamespace made takes a pod at once', async () => {
    const fresh = ['e2e-h-fresh-1', 'e2e-h-fresh-2', 'e2e-h-fresh-3'];
    try {
      for (const namespace of fresh) {
        await ensureNamespace(namespace);
        const account = await core.readNamespacedServiceAccount({ name: 'default', namespace });
        expect(account.metadata?.name).toBe('default');
        // on no node: deleting the namespace then removes it without a kubelet
        const spec = {
          nodeSelector: { 'floatip-e2e/none': 'x' },
          containers: [{ name: 'c', image: 'pause' }],
        };
        const body = { metadata: { name: 'first' }, spec };
        const pod = await core.createNamespacedPod({ namespace, body });
        expect(pod.spec?.serviceAccountName).toBe('default');
      }
    } finally {
      for (const namespace of fresh) await deleteNamespace(namespace);
    }
  });

  // floatip touches a pod refused by the UID rule with a merge patch naming the pod's UID; that this
  // cannot reach a newer pod of the same name rests on kube-apiserver refusing the UID mismatch
  test('E2E-H7 a merge patch naming an older incarnation’s UID is refused; the current UID is accepted', async () => {
    const body = { metadata: { name: 'incarnation' }, spec: { containers: [{ name: 'c', image: 'pause' }] } };
    const first = await core.createNamespacedPod({ namespace: ns, body });
    await core.deleteNamespacedPod({ name: 'incarnation', namespace: ns, gracePeriodSeconds: 0 });
    await podGone(ns, 'incarnation');
    const second = await core.createNamespacedPod({ namespace: ns, body });
    const touch = (uid: string | undefined) =>
      core.patchNamespacedPod(
        { name: 'incarnation', namespace: ns, body: { metadata: { uid, annotations: { touched: uid } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    const stale = await touch(first.metadata?.uid).then(
      () => 200,
      (err: unknown) => httpCode(err),
    );
    expect([409, 422]).toContain(stale);
    const touched = await touch(second.metadata?.uid);
    expect(touched.metadata?.annotations?.touched).toBe(second.metadata?.uid);
    await core.deleteNamespacedPod({ name: 'incarnation', namespace: ns, gracePeriodSeconds: 0 });
  });
});
