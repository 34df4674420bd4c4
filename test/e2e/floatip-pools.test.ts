// E2E-4..5: a Pool shared by two Deployments and capped by its size, a subnet that runs out of
// addresses (pods wait, and `kubectl describe pod` says why), and dual stack. Once per
// nodeCacheCapable mode.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { AppsV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { objectNameOf } from '../../src/store/floating-ip-object.js';
import { clusterKubeConfig, loadCluster, restartScheduler } from './cluster.js';
import type { FakeKubelet } from './fake-kubelet.js';
import { scenario, type FloatipProcess } from './floatip.js';
import { GROUPS, inRange, onGroup } from './groups.js';
import {
  addressesOf,
  applyCrds,
  createPool,
  deletePool,
  expectConsistent,
  ipinfosOf,
  listFloatingIPs,
  POOL_ANNOTATION,
  sortedIPs,
} from './ipam-state.js';
import { hasAnnotation, isRunningReady, Pods, summary } from './pods.js';
import { cleanUpFile, endNamespace, note, prepareFile, startFloatip, startNamespace } from './suite.js';
import { waitFor } from './wait.js';
import { createDeployment, deployment } from './workloads.js';

const kc = clusterKubeConfig();
const apps = kc.makeApiClient(AppsV1Api);
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const groups = [GROUPS.pool, GROUPS.full, GROUPS.dual];
const POOL_SIZE = 4;
let floatip: FloatipProcess;

const poolName = (tag: string) => `e2e-pool-${tag}`;

beforeAll(async () => {
  await prepareFile(groups);
  // before floatip starts, so its first list has them
  await applyCrds();
  for (const tag of ['full', 'ncc']) {
    await deletePool(poolName(tag));
    await createPool(poolName(tag), POOL_SIZE);
  }
  floatip = await startFloatip({ name: 'pools' });
});

afterAll(async () => {
  for (const tag of ['full', 'ncc']) await deletePool(poolName(tag));
  await cleanUpFile(groups);
  await restartScheduler();
});

/** `kubectl describe pod`, as a user would look at a pod that waits. */
async function describePod(namespace: string, name: string): Promise<string> {
  const { KUBECTL, KUBECONFIG } = loadCluster();
  const { stdout } = await promisify(execFile)(KUBECTL, [
    '--kubeconfig',
    KUBECONFIG,
    'describe',
    'pod',
    '-n',
    namespace,
    name,
  ]);
  return stdout;
}

const holding = (p: V1Pod) => !p.metadata?.deletionTimestamp && isRunningReady(p) && hasAnnotation(p);
const waiting = (p: V1Pod) => !p.metadata?.deletionTimestamp && !p.spec?.nodeName;

/** Waits until `bound` pods of the selector run with addresses and `pending` wait unscheduled. */
async function split(
  pods: Pods,
  selector: string,
  bound: number,
  pending: number,
  timeoutMs = 60_000,
): Promise<[V1Pod[], V1Pod[]]> {
  let last: V1Pod[] = [];
  return waitFor(
    `${bound} pods of ${selector} running with IPs and ${pending} pending`,
    async () => {
      last = (await pods.list(selector)).filter((p) => !p.metadata?.deletionTimestamp);
      const b = last.filter(holding);
      const w = last.filter(waiting);
      return b.length === bound && w.length === pending && last.length === bound + pending
        ? [b, w]
        : undefined;
    },
    { timeoutMs, intervalMs: 250, describe: () => summary(last) },
  );
}

/** Waits for the pod's FailedScheduling event to carry `reason`, and returns `kubectl describe`. */
async function pendingBecause(pods: Pods, name: string, reason: string): Promise<string> {
  let messages: string[] = [];
  await waitFor(
    `a FailedScheduling event of ${name} naming ${reason}`,
    async () => {
      messages = (await pods.events(name))
        .filter((e) => e.reason === 'FailedScheduling')
        .map((e) => e.message ?? '');
      return messages.some((m) => m.includes(reason)) ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 250, describe: () => JSON.stringify(messages) },
  );
  return describePod(pods.namespace, name);
}

describe.each([false, true])('floatip with nodeCacheCapable=%s', (nodeCacheCapable) => {
  const tag = nodeCacheCapable ? 'ncc' : 'full';
  const ns = `e2e-pool-${tag}`;
  const pods = new Pods(ns);
  let kubelet: FakeKubelet | undefined;

  beforeAll(async () => {
    await restartScheduler({ nodeCacheCapable });
    kubelet = await startNamespace(ns);
  });

  afterEach(() => {
    expect(kubelet?.errors).toEqual([]);
  });

  afterAll(async () => {
    await endNamespace(ns, kubelet);
  });

  scenario(
    `E2E-4 (${tag}) a Pool of size ${POOL_SIZE} shared by two Deployments; an exhausted subnet; pods wait with the reason`,
    async () => {
      const pool = poolName(tag);
      const g = GROUPS.pool;
      const options = {
        annotations: { [POOL_ANNOTATION]: pool },
        nodeSelector: onGroup(g),
        labels: { pool },
      };
      await createDeployment(deployment(ns, 'pa', { replicas: 2, ...options }));
      await createDeployment(deployment(ns, 'pb', { replicas: 3, ...options }));
      const [bound, [pending]] = await split(pods, `pool=${pool}`, POOL_SIZE, 1);
      const first = sortedIPs(bound.flatMap(addressesOf));
      expect(new Set(first).size).toBe(POOL_SIZE);
      for (const ip of first) expect(inRange(g.entries[0]!.ips[0]!, ip)).toBe(true);
      const poolKeys = (await listFloatingIPs()).filter((o) => o.key.startsWith(`pool__${pool}_`));
      expect(poolKeys).toHaveLength(POOL_SIZE);
      for (const o of poolKeys) {
        expect(o.key).toMatch(new RegExp(`^pool__${pool}_dp_${ns}_p[ab]_p[ab]-`));
        expect(o.policy).toBe(2); // a pool's pods are `never`
      }
      const described = await pendingBecause(
        pods,
        pending!.metadata!.name!,
        `reached pool ${pool} size limit of 4`,
      );
      expect(described).toMatch(/Status:\s+Pending/);
      expect(described).toMatch(/FailedScheduling.*reached pool .* size limit of 4/);
      note(`E2E-4 (${tag}): kubectl describe pod: ${/.*FailedScheduling.*/.exec(described)?.[0].trim()}`);
      await expectConsistent('E2E-4 pool full', { floatip });

      // pa scaled down: its pod's address is parked in the pool, and the waiting pod gets it
      await apps.patchNamespacedDeployment(
        { name: 'pa', namespace: ns, body: { spec: { replicas: 1 } } },
        MERGE,
      );
      // the waiting pod was refused for the pool's size: floatip sends it back to the scheduler once
      // the address is parked (no cluster event is made here; the scheduler alone waits 60-90 s)
      const t0 = Date.now();
      const [after] = await split(pods, `pool=${pool}`, POOL_SIZE, 0, 30_000);
      note(`E2E-4 (${tag}): the pod waiting for the pool bound ${Date.now() - t0} ms after the scale-down`);
      expect(sortedIPs(after.flatMap(addressesOf))).toEqual(first);
      expect(after.filter((p) => p.metadata?.labels?.app === 'pb')).toHaveLength(3);
      await expectConsistent('E2E-4 pool after scale-down', { floatip });

      // both deleted: the pool keeps its addresses, parked at pool__<P>_
      await apps.deleteNamespacedDeployment({ name: 'pa', namespace: ns, propagationPolicy: 'Background' });
      await apps.deleteNamespacedDeployment({ name: 'pb', namespace: ns, propagationPolicy: 'Background' });
      await pods.gone(`pool=${pool}`);
      const parked = await waitFor(`${POOL_SIZE} addresses parked at pool__${pool}_`, async () => {
        const all = (await listFloatingIPs()).filter((o) => o.key.startsWith(`pool__${pool}_`));
        return all.length === POOL_SIZE && all.every((o) => o.key === `pool__${pool}_`) ? all : undefined;
      });
      expect(sortedIPs(parked.map((o) => o.name))).toEqual(first);

      // a subnet with 3 addresses and a Deployment of 5: 2 pods wait, and say why
      const full = GROUPS.full;
      await createDeployment(deployment(ns, 'full', { replicas: 5, nodeSelector: onGroup(full) }));
      const [got, wait] = await split(pods, 'app=full', 3, 2);
      expect(sortedIPs(got.flatMap(addressesOf))).toEqual(['10.131.5.10', '10.131.5.11', '10.131.5.12']);
      for (const p of wait) {
        const text = await pendingBecause(pods, p.metadata!.name!, 'FloatingIPPlugin:NoFIPLeft');
        expect(text).toMatch(/FailedScheduling.*2 FloatingIPPlugin:NoFIPLeft/);
        if (p === wait[0])
          note(`E2E-4 (${tag}): kubectl describe pod: ${/.*FailedScheduling.*/.exec(text)?.[0].trim()}`);
      }
      await expectConsistent('E2E-4 subnet exhausted', { floatip });
      await apps.deleteNamespacedDeployment({ name: 'full', namespace: ns, propagationPolicy: 'Background' });
      await pods.gone('app=full');
      await waitFor('the exhausted subnet’s addresses to be released', async () =>
        (await listFloatingIPs()).some((o) => o.name.startsWith('10.131.5.')) ? undefined : true,
      );
      await expectConsistent('E2E-4 done', { floatip });
    },
  );

  scenario(`E2E-5 (${tag}) dual stack: one IPv4 and one IPv6 ipinfo per pod`, async () => {
    const g = GROUPS.dual;
    await createDeployment(deployment(ns, 'dual', { replicas: 3, nodeSelector: onGroup(g) }));
    const running = await pods.running('app=dual', 3);
    const v4: string[] = [];
    const v6: string[] = [];
    for (const p of running) {
      const infos = ipinfosOf(p);
      expect(infos).toEqual([
        { ip: expect.stringMatching(/^10\.131\.6\.\d+\/24$/), vlan: 0, gateway: '10.131.6.1' },
        { ip: expect.stringMatching(/^fd00:131:6::[0-9a-f]+\/64$/), vlan: 0, gateway: 'fd00:131:6::1' },
      ]);
      const [a4, a6] = addressesOf(p) as [string, string];
      expect(inRange(g.entries[0]!.ips[0]!, a4)).toBe(true);
      expect(inRange(g.entries[1]!.ips[0]!, a6)).toBe(true);
      v4.push(a4);
      v6.push(a6);
      // the (fake) kubelet reports both, as a dual-stack CNI would
      expect(p.status?.podIPs).toEqual([{ ip: a4 }, { ip: a6 }]);
    }
    expect(new Set(v4).size).toBe(3);
    expect(new Set(v6).size).toBe(3);
    const { objects } = await expectConsistent('E2E-5 created', { floatip });
    const names = new Set(objects.map((o) => o.name));
    for (const ip of [...v4, ...v6]) expect(names).toContain(objectNameOf(ip));
    expect([...names].filter((n) => n.startsWith('fd00-131-6--'))).toHaveLength(3);

    await apps.deleteNamespacedDeployment({ name: 'dual', namespace: ns, propagationPolicy: 'Background' });
    await pods.gone('app=dual');
    await waitFor('both families released', async () =>
      (await listFloatingIPs()).some(
        (o) => o.name.startsWith('10.131.6.') || o.name.startsWith('fd00-131-6-'),
      )
        ? undefined
        : true,
    );
    await expectConsistent('E2E-5 deleted', { floatip });
  });
});
