// E2E-1..3: floatip as the scheduler's extender, with the real scheduler, controllers and API server,
// for the workloads users run: a StatefulSet that keeps its addresses, a Deployment whose addresses
// outlive it, and a rolling update that must not deadlock. Once per nodeCacheCapable mode.
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { clusterKubeConfig, restartScheduler } from './cluster.js';
import type { FakeKubelet } from './fake-kubelet.js';
import { scenario, type FloatipProcess } from './floatip.js';
import { GROUPS, inRange, onGroup } from './groups.js';
import {
  addressesOf,
  expectConsistent,
  ipinfosOf,
  listFloatingIPs,
  RELEASE_POLICY_ANNOTATION,
  sortedIPs,
} from './ipam-state.js';
import { hasAnnotation, isRunningReady, Pods, summary } from './pods.js';
import {
  cleanUpFile,
  cordon,
  endNamespace,
  note,
  prepareFile,
  startFloatip,
  startNamespace,
} from './suite.js';
import { waitFor } from './wait.js';
import { createDeployment, createStatefulSet, deployment, statefulSet } from './workloads.js';

const kc = clusterKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const apps = kc.makeApiClient(AppsV1Api);
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const groups = [GROUPS.sts, GROUPS.never, GROUPS.roll];
let floatip: FloatipProcess;

beforeAll(async () => {
  await prepareFile(groups);
  floatip = await startFloatip({ name: 'workloads' });
});

afterAll(async () => {
  await cleanUpFile(groups);
  await restartScheduler();
});

const ips = (list: V1Pod[]) => sortedIPs(list.flatMap(addressesOf));

/** FloatingIP objects whose key starts with `prefix`. */
async function objectsOf(prefix: string) {
  return (await listFloatingIPs()).filter((o) => o.key.startsWith(prefix));
}

/** Waits until the objects under `prefix` are exactly `keys` (sorted), and returns them. */
async function objectsBecome(prefix: string, count: number, what: string, timeoutMs = 30_000) {
  let last: Awaited<ReturnType<typeof objectsOf>> = [];
  return waitFor(
    what,
    async () => {
      last = await objectsOf(prefix);
      return last.length === count ? last : undefined;
    },
    { timeoutMs, intervalMs: 250, describe: () => JSON.stringify(last) },
  );
}

describe.each([false, true])('floatip with nodeCacheCapable=%s', (nodeCacheCapable) => {
  const tag = nodeCacheCapable ? 'ncc' : 'full';
  const ns = `e2e-wl-${tag}`;
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
    `E2E-1 (${tag}) StatefulSet, 3 replicas, immutable: same IP when re-created elsewhere; released on scale-down and delete`,
    async () => {
      const g = GROUPS.sts;
      const range = g.entries[0]!.ips[0]!;
      await createStatefulSet(
        statefulSet(ns, 'web', {
          replicas: 3,
          annotations: { [RELEASE_POLICY_ANNOTATION]: 'immutable' },
          nodeSelector: onGroup(g),
        }),
      );
      const first = await pods.running('app=web', 3);
      for (const p of first) {
        const infos = ipinfosOf(p);
        expect(infos).toHaveLength(1);
        expect(infos[0]).toEqual({ ip: expect.stringMatching(/\/24$/), vlan: 2, gateway: '10.131.1.1' });
        expect(inRange(range, addressesOf(p)[0]!)).toBe(true);
        expect(g.nodes).toContain(p.spec?.nodeName);
      }
      expect(new Set(ips(first)).size).toBe(3);
      await expectConsistent('E2E-1 created', { floatip });
      const keyPrefix = `sts_${ns}_web_`;
      const objects = await objectsOf(keyPrefix);
      expect(objects.map((o) => [o.key, o.policy]).sort()).toEqual(
        [0, 1, 2].map((i) => [`${keyPrefix}web-${i}`, 1]),
      );

      // web-1 deleted with its node cordoned: the controller re-creates it on another node of the subnet
      const victim = first.find((p) => p.metadata?.name === 'web-1')!;
      const oldNode = victim.spec!.nodeName!;
      const oldIP = addressesOf(victim)[0];
      await cordon(oldNode);
      try {
        await core.deleteNamespacedPod({ name: 'web-1', namespace: ns });
        let seen: V1Pod[] = [];
        const again = await waitFor(
          'web-1 re-created, running with its IP',
          async () => {
            seen = await pods.list('app=web');
            return seen.find(
              (p) =>
                p.metadata?.name === 'web-1' &&
                p.metadata.uid !== victim.metadata?.uid &&
                isRunningReady(p) &&
                hasAnnotation(p),
            );
          },
          { timeoutMs: 60_000, intervalMs: 200, describe: () => summary(seen) },
        );
        expect(addressesOf(again)).toEqual([oldIP]);
        expect(again.spec?.nodeName).not.toBe(oldNode);
        expect(g.nodes).toContain(again.spec?.nodeName);
      } finally {
        await cordon(oldNode, false);
      }
      await expectConsistent('E2E-1 web-1 re-created', { floatip });

      // scale to 1: web-1 and web-2 go, and so do their addresses
      const web0IP = addressesOf(first.find((p) => p.metadata?.name === 'web-0')!)[0];
      await apps.patchNamespacedStatefulSet(
        { name: 'web', namespace: ns, body: { spec: { replicas: 1 } } },
        MERGE,
      );
      const one = await pods.running('app=web', 1);
      expect(addressesOf(one[0]!)).toEqual([web0IP]);
      const left = await objectsBecome(keyPrefix, 1, 'only web-0 to keep an address after the scale-down');
      expect(left.map((o) => o.key)).toEqual([`${keyPrefix}web-0`]);
      await expectConsistent('E2E-1 scaled to 1', { floatip });

      // the StatefulSet deleted: web-0's address released too
      await apps.deleteNamespacedStatefulSet({ name: 'web', namespace: ns, propagationPolicy: 'Background' });
      await pods.gone('app=web');
      await objectsBecome(keyPrefix, 0, 'no address left for the deleted StatefulSet');
      await expectConsistent('E2E-1 deleted', { floatip });
    },
  );

  scenario(
    `E2E-2 (${tag}) Deployment, 10 replicas, never: deleted, its IPs are parked; re-created, it gets the same 10`,
    async () => {
      const g = GROUPS.never;
      const range = g.entries[0]!.ips[0]!;
      const body = deployment(ns, 'api', {
        replicas: 10,
        annotations: { [RELEASE_POLICY_ANNOTATION]: 'never' },
        nodeSelector: onGroup(g),
      });
      await createDeployment(body);
      const first = ips(await pods.running('app=api', 10));
      expect(new Set(first).size).toBe(10);
      for (const ip of first) expect(inRange(range, ip)).toBe(true);
      await expectConsistent('E2E-2 created', { floatip });

      await apps.deleteNamespacedDeployment({ name: 'api', namespace: ns, propagationPolicy: 'Background' });
      await pods.gone('app=api');
      const parkKey = `dp_${ns}_api_`;
      const parked = await waitFor(
        `10 addresses parked at ${parkKey}`,
        async () => {
          const all = await objectsOf(parkKey);
          return all.length === 10 && all.every((o) => o.key === parkKey) ? all : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      );
      expect(sortedIPs(parked.map((o) => o.name))).toEqual(first);
      for (const o of parked) expect(o).toMatchObject({ policy: 2, nodeName: '', uid: '' });
      await expectConsistent('E2E-2 deleted', { floatip });

      await createDeployment(body);
      const again = ips(await pods.running('app=api', 10));
      expect(again).toEqual(first);
      const objects = await objectsOf(parkKey);
      expect(objects.every((o) => o.key !== parkKey && o.uid !== '')).toBe(true);
      await expectConsistent('E2E-2 re-created', { floatip });
    },
  );

  scenario(
    `E2E-3 (${tag}) Deployment, 3 replicas, immutable, default rolling update: completes, ends with 3 IPs`,
    async () => {
      const g = GROUPS.roll;
      await createDeployment(
        deployment(ns, 'roll', {
          replicas: 3,
          annotations: { [RELEASE_POLICY_ANNOTATION]: 'immutable' },
          nodeSelector: onGroup(g),
        }),
      );
      const before = await pods.running('app=roll', 3);
      const original = ips(before);
      await expectConsistent('E2E-3 created', { floatip });

      const t0 = Date.now();
      // a template change: the default strategy (maxSurge 25% -> 1, maxUnavailable 25% -> 0)
      await apps.patchNamespacedDeployment(
        {
          name: 'roll',
          namespace: ns,
          body: { spec: { template: { metadata: { annotations: { 'floatip-e2e/revision': '2' } } } } },
        },
        MERGE,
      );
      // each new pod refused with "wait for releasing" is sent back by floatip once an old pod's
      // address is parked: no cluster event is made here (the scheduler alone waits 60-90 s a step)
      await waitFor(
        'the rollout to complete',
        async () => {
          const d = await apps.readNamespacedDeployment({ name: 'roll', namespace: ns });
          const s = d.status;
          const done =
            (s?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) &&
            s?.updatedReplicas === 3 &&
            s?.replicas === 3 &&
            s?.availableReplicas === 3;
          return done ? true : undefined;
        },
        {
          timeoutMs: 40_000,
          intervalMs: 250,
          describe: async () => `pods ${JSON.stringify(ips(await pods.list('app=roll')))}`,
        },
      );
      const rolloutMs = Date.now() - t0;
      const refusals = floatip
        .records('filter: no node can serve the pod')
        .filter(
          (r) => String(r.pod).startsWith(`${ns}/roll-`) && String(r.err).includes('wait for releasing'),
        );
      const after = await pods.running('app=roll', 3);
      expect(after.every((p) => p.metadata?.annotations?.['floatip-e2e/revision'] === '2')).toBe(true);
      const final = ips(after);
      expect(new Set(final).size).toBe(3);
      // the surplus the surge pod made is released once the rollout ends: 3 addresses for the app
      const kept = await objectsBecome(`dp_${ns}_roll_`, 3, 'the app to hold exactly 3 addresses');
      expect(sortedIPs(kept.map((o) => o.name))).toEqual(final);
      const fromOriginal = final.filter((ip) => original.includes(ip));
      // Not "every pod keeps an address of the original set": with maxSurge 1 and maxUnavailable 0 the
      // first new pod needs an address while the 3 old pods still hold theirs, so it gets a 4th one.
      // Each later new pod may only take an old pod's parked address (the app is at replicas + surge),
      // and the old pods' last address is the surplus released when the rollout ends: exactly 2 of 3.
      expect(fromOriginal).toHaveLength(2);
      note(
        `E2E-3 (${tag}): rollout took ${rolloutMs} ms (${refusals.length} "wait for releasing" refusals, ` +
          `${floatip.records('sent pods refused for their app’s limit back to the scheduler').length} ` +
          `touches sending refused pods back); original ${original.join(',')} -> final ${final.join(',')} ` +
          `(${fromOriginal.length} of 3 from the original set)`,
      );
      await expectConsistent('E2E-3 rolled out', { floatip });
    },
  );
});
