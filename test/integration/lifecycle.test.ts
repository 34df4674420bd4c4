// Release policies in motion (docs/galaxy.md#the-release-table, docs/galaxy.md#pod-events-release-queue-and-resync): the test plays kube's controllers and kubelet on
// the embedded API server; floatip reacts as in a cluster. One scenario per row, numbered.
import { CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { REQUEUED_ANNOTATION } from '../../src/controller/requeue.js';
import { eventually } from './helpers.js';
import { World } from './world.js';

const A = '10.0.1.0/24';
const CONFIG = [
  { nodeSubnets: [A], ips: ['10.0.100.10~10.0.100.40'], subnet: '10.0.100.0/24', gateway: '10.0.100.1' },
];

let world: World;

beforeEach(async () => {
  world = await World.start({ config: CONFIG });
  await world.node('a1', '10.0.1.11');
  await world.node('a2', '10.0.1.12');
});

afterEach(() => world.checkAndStop({ settle: true }));

const sts = (name: string, policy?: 'immutable' | 'never') => ({
  name,
  owner: { kind: 'StatefulSet', name: name.replace(/-\d+$/, '') },
  ...(policy ? { policy } : {}),
});
const dp = (app: string, suffix: string, policy?: 'immutable' | 'never', pool?: string) => ({
  name: `${app}-5d8f7c9b4-${suffix}`,
  owner: { kind: 'ReplicaSet', name: `${app}-5d8f7c9b4` },
  ...(policy ? { policy } : {}),
  ...(pool ? { pool } : {}),
});

/** Creates and binds a pod; returns its address. */
async function running(spec: Parameters<World['pod']>[0], node = 'a1'): Promise<string> {
  const pod = await world.pod(spec);
  expect(await world.bind(pod, node)).toBe('');
  const [ip] = await world.addressesOf(spec.name);
  return ip!;
}

describe('E6-1 StatefulSets', () => {
  test('E6-1a default policy: deleting the pod releases its address', async () => {
    await world.statefulSet('web', 2);
    const ip = await running(sts('web-0'));
    await world.deletePod('web-0');
    await world.settle();
    expect(world.floatip.allocator.get(ip)).toBeUndefined();
  });

  test('E6-1b immutable: the address stays on the pod key, a re-created pod gets it back, on another node too', async () => {
    await world.statefulSet('web', 2);
    const ip = await running(sts('web-0', 'immutable'));
    await world.deletePod('web-0');
    await world.settle();
    expect(world.floatip.allocator.get(ip)).toMatchObject({
      key: 'sts_ns1_web_web-0',
      nodeName: '',
      podUid: '',
    });
    const again = await world.pod(sts('web-0', 'immutable'));
    expect(await world.bind(again, 'a2')).toBe('');
    expect(await world.addressesOf('web-0')).toEqual([ip]);
  });

  test('E6-1c immutable: scale down releases the pods beyond the new replicas; scale up gets fresh ones', async () => {
    await world.statefulSet('web', 3);
    const ips = [
      await running(sts('web-0', 'immutable')),
      await running(sts('web-1', 'immutable')),
      await running(sts('web-2', 'immutable')),
    ];
    await world.scaleStatefulSet('web', 1);
    await world.deletePod('web-2');
    await world.deletePod('web-1');
    await world.settle();
    expect(world.held('sts_ns1_web_web-1')).toEqual([]);
    expect(world.held('sts_ns1_web_web-2')).toEqual([]);
    expect(world.held('sts_ns1_web_web-0')).toEqual([ips[0]]);
    await world.scaleStatefulSet('web', 2);
    expect(await running(sts('web-1', 'immutable'))).toBe(ips[1]); // lowest free again
  });

  test('E6-1d immutable: deleting the StatefulSet releases its pods’ addresses', async () => {
    await world.statefulSet('web', 1);
    const ip = await running(sts('web-0', 'immutable'));
    await world.deleteStatefulSet('web');
    await world.deletePod('web-0');
    await world.settle();
    expect(world.floatip.allocator.get(ip)).toBeUndefined();
  });

  test('E6-1e never: kept on the pod key even when the StatefulSet is gone; the same name gets it back', async () => {
    await world.statefulSet('web', 1);
    const ip = await running(sts('web-0', 'never'));
    await world.deleteStatefulSet('web');
    await world.deletePod('web-0');
    await world.settle();
    expect(world.held('sts_ns1_web_web-0')).toEqual([ip]);
    await world.statefulSet('web', 1);
    expect(await running(sts('web-0', 'never'), 'a2')).toBe(ip);
  });

  test('E6-1f eviction (phase Failed) decides like a deletion; immutable keeps the address for the pod', async () => {
    await world.statefulSet('web', 1);
    const ip = await running(sts('web-0', 'immutable'));
    await world.phase('web-0', 'Failed');
    await world.settle();
    expect(world.floatip.allocator.get(ip)).toMatchObject({ key: 'sts_ns1_web_web-0', podUid: '' });
  });
});

describe('E6-2 Deployments', () => {
  test('E6-2a default policy: released on deletion and on completion', async () => {
    await world.deployment('app', 2);
    const a = await running(dp('app', 'a'));
    const b = await running(dp('app', 'b'));
    await world.deletePod(dp('app', 'a').name);
    await world.phase(dp('app', 'b').name, 'Succeeded');
    await world.settle();
    expect(world.floatip.allocator.get(a)).toBeUndefined();
    expect(world.floatip.allocator.get(b)).toBeUndefined();
  });

  test('E6-2b never: parked at the app; deleting and re-creating the Deployment brings the same addresses back', async () => {
    await world.deployment('app', 2);
    const ips = [await running(dp('app', 'a', 'never')), await running(dp('app', 'b', 'never'))].sort();
    await world.deleteDeployment('app');
    await world.deletePod(dp('app', 'a').name);
    await world.deletePod(dp('app', 'b').name);
    await world.settle();
    expect(world.held('dp_ns1_app_')).toEqual(ips);
    await world.deployment('app', 2);
    const again = [await running(dp('app', 'c', 'never')), await running(dp('app', 'd', 'never'))].sort();
    expect(again).toEqual(ips);
  });

  test('E6-2c immutable: parked while the app needs it; released when the app is scaled down or deleted', async () => {
    await world.deployment('app', 2);
    const a = await running(dp('app', 'a', 'immutable'));
    const b = await running(dp('app', 'b', 'immutable'));
    await world.deletePod(dp('app', 'a').name); // replicas 2, app holds 2: parked
    await world.settle();
    expect(world.held('dp_ns1_app_')).toEqual([a]);
    await world.deploymentState('app', { replicas: 1, rolling: false });
    await world.deletePod(dp('app', 'b').name); // replicas 1, app holds 2: released
    await world.settle();
    expect(world.floatip.allocator.get(b)).toBeUndefined();
    await world.deleteDeployment('app');
    await world.settle();
    expect(world.held('dp_ns1_app_')).toEqual([a]); // parked ones stay until... the app is gone:
    const c = await world.pod(dp('app', 'c', 'immutable'));
    expect(await world.bind(c, 'a1')).toMatch(/replicas of 0/);
  });

  test('E6-2d a Pool: parked at the pool, shared by the pool’s Deployments', async () => {
    await world.deployment('one', 1);
    await world.deployment('two', 1);
    const ip = await running(dp('one', 'a', undefined, 'shared'));
    await world.deletePod(dp('one', 'a').name);
    await world.settle();
    expect(world.held('pool__shared_')).toEqual([ip]);
    expect(await running(dp('two', 'a', undefined, 'shared'))).toBe(ip);
  });
});

describe('E6-3 bare pods and custom workloads', () => {
  test('E6-3a a bare pod’s address is released with it, and the release is audited with an Event', async () => {
    const ip = await running({ name: 'solo' });
    await world.deletePod('solo');
    await world.settle();
    expect(world.floatip.allocator.get(ip)).toBeUndefined();
    expect(await world.releasedEvents(ip)).toEqual([
      `released ${ip} from NULL_ns1_NULL_solo (by floatip lifecycle via pod-gone): deletedAndIPMutablePod`,
    ]);
  });

  test('E6-3b a scalable custom workload (scale subresource, served at its own version) keeps addresses by index', async () => {
    await world.customWorkloadKind({ group: 'apps.tkestack.io', kind: 'TApp', plural: 'tapps' });
    const custom = world.server.kubeConfig().makeApiClient(CustomObjectsApi);
    await custom.createNamespacedCustomObject({
      group: 'apps.tkestack.io',
      version: 'v1',
      plural: 'tapps',
      namespace: 'ns1',
      body: {
        apiVersion: 'apps.tkestack.io/v1',
        kind: 'TApp',
        metadata: { name: 't' },
        spec: { replicas: 1 },
      },
    });
    // the CRD has to be known before a pod of its kind can be immutable
    const pod = { name: 't-0', owner: { kind: 'TApp', name: 't' }, policy: 'immutable' as const };
    let ip = '';
    for (let i = 0; i < 50 && !ip; i++) {
      const created = await world.pod(pod);
      const err = await world.bind(created, 'a1');
      if (err === '') ip = (await world.addressesOf('t-0'))[0]!;
      else {
        await world.deletePod('t-0');
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    expect(ip).not.toBe('');
    await world.deletePod('t-0');
    await world.settle();
    expect(world.held('tapp_ns1_t_t-0')).toEqual([ip]);
    const one = await running({ name: 't-1', owner: { kind: 'TApp', name: 't' }, policy: 'immutable' });
    await world.deletePod('t-1'); // index 1 >= replicas 1
    await world.settle();
    expect(world.floatip.allocator.get(one)).toBeUndefined();
  });
});

describe('E6-4 rolling updates of immutable Deployments complete and end with replicas addresses', () => {
  test.each([1, 2, 3])('E6-4 %i replicas, default 25%%/25%% strategy', async (replicas) => {
    await world.deployment('app', replicas);
    const old: string[] = [];
    for (let i = 0; i < replicas; i++) old.push(await running(dp('app', `old${i}`, 'immutable')));
    // the template changes: the controller surges one new pod, then removes an old one, and so on
    await world.deploymentState('app', { rolling: true });
    for (let i = 0; i < replicas; i++) {
      const fresh = await world.pod(dp('app', `new${i}`, 'immutable'));
      expect(await world.bind(fresh, 'a2')).toBe('');
      await world.deletePod(dp('app', `old${i}`).name);
      await world.settle();
    }
    await world.deploymentState('app', { rolling: false });
    await world.settle();
    await new Promise((r) => setTimeout(r, 200));
    expect(world.floatip.allocator.countByPrefix('dp_ns1_app_')).toBe(replicas);
    // every new pod but the first surge one took an address of the original set
    const now = [];
    for (let i = 0; i < replicas; i++) now.push(...(await world.addressesOf(dp('app', `new${i}`).name)));
    expect(now.filter((ip) => old.includes(ip)).length).toBe(replicas - 1);
  });
});

test('E6-4b the rollout trim releases the parked surplus, and each release leaves an audit Event', async () => {
  await world.deployment('app', 1);
  const old = await running(dp('app', 'old', 'immutable'));
  await world.deploymentState('app', { rolling: true });
  const fresh = await world.pod(dp('app', 'new', 'immutable'));
  expect(await world.bind(fresh, 'a2')).toBe('');
  await world.deletePod(dp('app', 'old').name);
  await world.settle();
  expect(world.held('dp_ns1_app_')).toEqual([old]); // parked during the rollout
  await world.deploymentState('app', { rolling: false });
  await eventually('the trim', async () => world.floatip.allocator.get(old) === undefined);
  expect(await world.releasedEvents(old)).toEqual([
    `released ${old} from dp_ns1_app_ (by floatip lifecycle via rollout): rollout ended: 2 addresses for 1`,
  ]);
});

describe('E6-5 leaks, races, lost watches', () => {
  test('E6-5a a pod deleted while floatip was down is released by resync after two passes, not before', async () => {
    const ip = await running({ name: 'solo' });
    await world.restartFloatip(() =>
      world.core.deleteNamespacedPod({ name: 'solo', namespace: 'ns1' }).then(() => undefined),
    );
    await world.floatip.lifecycle.resync();
    await world.settle();
    expect(world.floatip.allocator.get(ip)?.key).toBe('NULL_ns1_NULL_solo');
    await world.floatip.lifecycle.resync();
    await world.settle();
    expect(world.floatip.allocator.get(ip)).toBeUndefined();
  });

  test('E6-5h a pod of a Pool whose name has `_`, deleted while floatip was down, is parked by resync, not leaked', async () => {
    // pool__my_pool_dp_ns1_app_<pod>: split at the first `_` (galaxy's ParseKey) it names no pod, so
    // resync never looked at it and the address was held by a pod that no longer exists, for good
    await world.deployment('app', 1);
    const ip = await running(dp('app', 'a', undefined, 'my_pool'));
    expect(world.floatip.allocator.get(ip)?.key).toBe(`pool__my_pool_dp_ns1_app_${dp('app', 'a').name}`);
    await world.restartFloatip(() =>
      world.core.deleteNamespacedPod({ name: dp('app', 'a').name, namespace: 'ns1' }).then(() => undefined),
    );
    await world.floatip.lifecycle.resync();
    await world.floatip.lifecycle.resync();
    await world.settle();
    expect(world.held('pool__my_pool_')).toEqual([ip]);
  });

  test('E6-5f a StatefulSet pod re-created while floatip was down: its old address is settled in the first pass, and the refused pod is retried', async () => {
    await world.statefulSet('web', 1);
    const ip = await running(sts('web-0', 'immutable'));
    let second: V1Pod | undefined;
    await world.restartFloatip(async () => {
      await world.core.deleteNamespacedPod({ name: 'web-0', namespace: 'ns1' });
      second = await world.pod(sts('web-0', 'immutable'), { wait: false });
    });
    // until the old incarnation is dealt with, the UID rule refuses the new one
    expect(await world.bind(second!, 'a1')).toBe(
      'waiting for delete event of sts_ns1_web_web-0 before reuse this ip',
    );
    // one resync pass: a pod of the same name with another UID proves the old one gone
    await world.floatip.lifecycle.resync();
    await world.settle();
    expect(world.floatip.allocator.get(ip)).toMatchObject({ key: 'sts_ns1_web_web-0', podUid: '' });
    await eventually(
      'the refused pod to be touched',
      async () => (await world.readPod('web-0')).metadata?.annotations?.[REQUEUED_ANNOTATION] !== undefined,
    );
    expect(await world.bind(second!, 'a1')).toBe('');
    expect(await world.addressesOf('web-0')).toEqual([ip]);
  });

  test('E6-5g a cache still holding an older incarnation does not make resync release a live pod’s address', async () => {
    await world.statefulSet('web', 1);
    const ip = await running(sts('web-0', 'immutable'));
    // the cache lags: it still shows a previous web-0 (another UID) while the address is the live one's
    const cached = world.floatip.cluster.pods.get('ns1', 'web-0')!;
    const live = cached.metadata!.uid;
    cached.metadata!.uid = 'uid-of-an-older-web-0';
    await world.floatip.lifecycle.resync();
    await world.settle();
    cached.metadata!.uid = live;
    expect(world.floatip.allocator.get(ip)).toMatchObject({ key: 'sts_ns1_web_web-0', podUid: live });
  });

  test('E6-5b a lost watch does not lose a release: the re-list reports the deletion', async () => {
    const ip = await running({ name: 'solo' });
    world.server.faults.failNext({ verb: 'watch', resource: 'pods' }, 500, { times: 1 });
    world.server.faults.dropWatches();
    world.server.faults.expireHistory();
    await world.core.deleteNamespacedPod({ name: 'solo', namespace: 'ns1' });
    for (let i = 0; i < 100 && world.floatip.allocator.get(ip); i++)
      await new Promise((r) => setTimeout(r, 50));
    await world.settle();
    expect(world.floatip.allocator.get(ip)).toBeUndefined();
  });

  test('E6-5c a release racing a re-allocation of the same address never gives it two owners', async () => {
    await world.statefulSet('web', 1);
    for (let round = 0; round < 10; round++) {
      const pod = await world.pod(sts('web-0'));
      expect(await world.bind(pod, 'a1')).toBe('');
      // deletion (release queued) and a new pod's bind race for the lowest address
      await world.deletePod('web-0');
      const other = await world.pod({ name: `racer-${round}` });
      const [bindError] = await Promise.all([world.bind(other, 'a1'), world.settle()]);
      expect(bindError).toBe('');
      await world.settle();
      await world.expectConsistent();
      await world.deletePod(`racer-${round}`);
      await world.settle();
    }
  });

  test('E6-5d a running pod’s annotation naming an address floatip lost is adopted', async () => {
    const ip = await running({ name: 'solo' });
    // the FloatingIP object is lost (an operator's mistake)
    await world.custom.deleteClusterCustomObject({
      group: 'galaxy.k8s.io',
      version: 'v1alpha1',
      plural: 'floatingips',
      name: ip,
    });
    for (let i = 0; i < 100 && world.floatip.allocator.get(ip); i++)
      await new Promise((r) => setTimeout(r, 20));
    await world.phase('solo', 'Running');
    for (let i = 0; i < 100 && !world.floatip.allocator.get(ip); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(world.floatip.allocator.get(ip)).toMatchObject({ key: 'NULL_ns1_NULL_solo', nodeName: 'a1' });
  });

  test('E6-5i a bound pod not yet running whose address’s object was lost takes it back at the resync, before the next pod can get it', async () => {
    // a new leader that freed the address as a follower, or a restore that lost the object: the pod
    // is bound with the address in its annotation and will run with it
    const ip = await running({ name: 'solo' });
    expect((await world.readPod('solo')).status?.phase).toBe('Pending');
    await world.restartFloatip(async () => {
      await world.custom.deleteClusterCustomObject({
        group: 'galaxy.k8s.io',
        version: 'v1alpha1',
        plural: 'floatingips',
        name: ip,
      });
    });
    expect(world.floatip.allocator.get(ip)).toBeUndefined();
    await world.floatip.lifecycle.resync();
    expect(world.floatip.allocator.get(ip)).toMatchObject({ key: 'NULL_ns1_NULL_solo', nodeName: 'a1' });
    const next = await world.pod({ name: 'next' });
    expect(await world.bind(next, 'a1')).toBe('');
    expect(await world.addressesOf('next')).not.toContain(ip);
    await world.expectConsistent();
  });

  test('E6-5e a terminating pod keeps its address until the object is gone', async () => {
    const ip = await running(sts('web-0'));
    const pod = await world.readPod('web-0');
    pod.metadata!.finalizers = ['example.com/hold'];
    await world.core.replaceNamespacedPod({ name: 'web-0', namespace: 'ns1', body: pod });
    await world.core.deleteNamespacedPod({ name: 'web-0', namespace: 'ns1' });
    await world.floatip.lifecycle.resync();
    await world.floatip.lifecycle.resync();
    await world.settle();
    expect(world.floatip.allocator.get(ip)?.key).toBe('sts_ns1_web_web-0');
    const terminating = await world.readPod('web-0');
    terminating.metadata!.finalizers = [];
    await world.core.replaceNamespacedPod({ name: 'web-0', namespace: 'ns1', body: terminating });
    for (let i = 0; i < 100 && world.floatip.allocator.get(ip); i++)
      await new Promise((r) => setTimeout(r, 20));
    await world.settle();
    expect(world.floatip.allocator.get(ip)).toBeUndefined();
  });
});

test('E6-6 parked never addresses of a gone Deployment expire after --parked-ip-ttl, audited', async () => {
  await world.stop();
  const ttl = 3_600_000;
  let later = 0; // how far floatip's clock is ahead of the wall clock
  world = await World.start({ config: CONFIG, parkedIpTtlMs: ttl, clock: () => Date.now() + later });
  await world.node('a1', '10.0.1.11');
  await world.deployment('app', 1);
  const ip = await running(dp('app', 'a', 'never'));
  await world.deletePod(dp('app', 'a').name);
  await world.settle();
  expect(world.held('dp_ns1_app_')).toEqual([ip]);
  await world.deleteDeployment('app');
  await world.floatip.lifecycle.resync(); // the workload is gone, but the address was parked just now: kept
  expect(world.held('dp_ns1_app_')).toEqual([ip]);
  await world.deployment('app', 1);
  later = ttl + 1000;
  await world.floatip.lifecycle.resync(); // parked long enough, but the Deployment is back: kept
  expect(world.held('dp_ns1_app_')).toEqual([ip]);
  expect(await world.releasedEvents(ip)).toEqual([]);
  await world.deleteDeployment('app');
  await world.floatip.lifecycle.resync();
  expect(world.held('dp_ns1_app_')).toEqual([]);
  expect(await world.releasedEvents(ip)).toEqual([
    `released ${ip} from dp_ns1_app_ (by floatip lifecycle via ttl): parked longer than --parked-ip-ttl; its workload is gone`,
  ]);
});

test('E6-6b an immutable address parked for a Deployment is released once two resyncs find the Deployment gone, TTL or not, audited', async () => {
  await world.deployment('app', 1);
  const ip = await running(dp('app', 'a', 'immutable'));
  await world.deletePod(dp('app', 'a').name);
  await world.settle();
  expect(world.held('dp_ns1_app_')).toEqual([ip]);
  await world.floatip.lifecycle.resync();
  await world.floatip.lifecycle.resync(); // its Deployment wants it: kept
  expect(world.held('dp_ns1_app_')).toEqual([ip]);
  await world.deleteDeployment('app');
  await world.floatip.lifecycle.resync(); // gone once: a cache may lag, kept
  expect(world.held('dp_ns1_app_')).toEqual([ip]);
  await world.floatip.lifecycle.resync();
  expect(world.held('dp_ns1_app_')).toEqual([]);
  expect(await world.releasedEvents(ip)).toEqual([
    `released ${ip} from dp_ns1_app_ (by floatip lifecycle via leak): parked for its Deployment, which is gone: immutable keeps it only while its app wants it`,
  ]);
});

test('E6-6c a Deployment back between two resyncs keeps its parked immutable address', async () => {
  await world.deployment('app', 1);
  const ip = await running(dp('app', 'a', 'immutable'));
  await world.deletePod(dp('app', 'a').name);
  await world.settle();
  await world.deleteDeployment('app');
  await world.floatip.lifecycle.resync();
  await world.deployment('app', 1);
  await world.floatip.lifecycle.resync();
  await world.floatip.lifecycle.resync();
  expect(world.held('dp_ns1_app_')).toEqual([ip]);
  expect(await world.releasedEvents(ip)).toEqual([]);
});
