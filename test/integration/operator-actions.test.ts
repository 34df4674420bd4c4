// Operator actions while pods are placed (the churn, test/e2e/churn.ts, runs no operator): what an
// operator does by hand to floatip's objects must never give one address to two pods, nor lose
// one a pod runs with.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { REQUEUED_ANNOTATION } from '../../src/controller/requeue.js';
import { eventually } from './helpers.js';
import { World } from './world.js';

const A = '10.0.1.0/24';
const CONFIG = [
  { nodeSubnets: [A], ips: ['10.0.100.10~10.0.100.12'], subnet: '10.0.100.0/24', gateway: '10.0.100.1' },
];
const FIP = { group: 'galaxy.k8s.io', version: 'v1alpha1', plural: 'floatingips' };
const rs = (app: string) => ({ kind: 'ReplicaSet', name: `${app}-5d8f7c9b4` });

/** Waits until floatip has sent the pod back to the scheduler (kube-scheduler v1.20 would hold it 60-90 s). */
const touched = (name: string) =>
  eventually(
    `pod ${name} to be sent back to the scheduler`,
    async () => (await world.readPod(name)).metadata?.annotations?.[REQUEUED_ANNOTATION] !== undefined,
  );

/** The key the address's FloatingIP object names, or undefined when there is none. */
const objectKey = async (ip: string) =>
  (
    (await world.custom.getClusterCustomObject({ ...FIP, name: ip }).catch(() => undefined)) as
      { spec?: { key?: string } } | undefined
  )?.spec?.key;

/** Replaces the floatingip-config ConfigMap's entries. */
const configure = (config: unknown) =>
  world.core.replaceNamespacedConfigMap({
    name: 'floatingip-config',
    namespace: 'kube-system',
    body: { metadata: { name: 'floatingip-config' }, data: { floatingips: JSON.stringify(config) } },
  });

/**
 * `kubectl apply` of the docs' reservation YAML for an address that is already a pod's: it patches
 * its object; resolves once floatip has it reserved.
 */
async function reserveOver(ip: string): Promise<void> {
  await world.custom.patchClusterCustomObject(
    {
      ...FIP,
      name: ip,
      body: {
        metadata: { labels: { reserved: 'this-is-not-for-pods' } },
        spec: { key: 'pool__reserved-for-node_', policy: 2, attribute: '' },
      },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  await eventually(
    'the reservation to reach floatip',
    async () => world.floatip.allocator.get(ip)?.reserved === true,
  );
}

let world: World;

beforeEach(async () => {
  world = await World.start({ config: CONFIG });
  await world.node('a1', '10.0.1.11');
});

afterEach(() => world.checkAndStop({ settle: true }));

describe('E12-1 a FloatingIP object deleted by hand', () => {
  test('E12-1a of a running pod: the pod keeps its address, its object is written again, and the next pod gets another', async () => {
    const p1 = await world.pod({ name: 'p1' });
    expect(await world.bind(p1, 'a1')).toBe('');
    await world.phase('p1', 'Running');
    const [ip] = await world.addressesOf('p1');

    await world.custom.deleteClusterCustomObject({ ...FIP, name: ip! });
    await eventually('the object to be written again', async () => {
      const again = (await world.custom
        .getClusterCustomObject({ ...FIP, name: ip! })
        .catch(() => undefined)) as { spec?: { key?: string } } | undefined;
      return again?.spec?.key === 'NULL_ns1_NULL_p1';
    });
    expect(world.floatip.allocator.get(ip!)).toMatchObject({
      key: 'NULL_ns1_NULL_p1',
      podUid: p1.metadata?.uid,
    });

    const p2 = await world.pod({ name: 'p2' });
    expect(await world.bind(p2, 'a1')).toBe('');
    const [other] = await world.addressesOf('p2');
    expect(other).not.toBe(ip);

    // and the restored object is the pod's to release as any other
    await world.deletePod('p1');
    await world.settle();
    expect(world.floatip.allocator.get(ip!)).toBeUndefined();
  });

  test('E12-1c a reservation applied over a running pod’s object, then deleted: the address goes back to the pod, not to the next one', async () => {
    const p1 = await world.pod({ name: 'p1' });
    expect(await world.bind(p1, 'a1')).toBe('');
    await world.phase('p1', 'Running');
    const [ip] = await world.addressesOf('p1');
    await reserveOver(ip!);
    await world.custom.deleteClusterCustomObject({ ...FIP, name: ip! });
    await eventually('the object to be written again for the pod', async () => {
      const again = (await world.custom
        .getClusterCustomObject({ ...FIP, name: ip! })
        .catch(() => undefined)) as { spec?: { key?: string } } | undefined;
      return again?.spec?.key === 'NULL_ns1_NULL_p1';
    });
    const p2 = await world.pod({ name: 'p2' });
    expect(await world.bind(p2, 'a1')).toBe('');
    expect(await world.addressesOf('p2')).not.toEqual([ip]);
  });

  test('E12-1d while floatip’s pod cache lags behind the pod (an older incarnation shown): the API server is asked, and the pod keeps its address', async () => {
    const p1 = await world.pod({ name: 'p1' });
    expect(await world.bind(p1, 'a1')).toBe('');
    await world.phase('p1', 'Running');
    const [ip] = await world.addressesOf('p1');
    const cached = world.floatip.cluster.pods.get('ns1', 'p1')!;
    const live = cached.metadata!.uid;
    cached.metadata!.uid = 'uid-of-an-older-p1';
    try {
      await world.custom.deleteClusterCustomObject({ ...FIP, name: ip! });
      const p2 = await world.pod({ name: 'p2' });
      expect(await world.bind(p2, 'a1')).toBe('');
      expect(await world.addressesOf('p2')).not.toEqual([ip]);
      await eventually('the object to be written again', async () => {
        const again = (await world.custom
          .getClusterCustomObject({ ...FIP, name: ip! })
          .catch(() => undefined)) as { spec?: { key?: string } } | undefined;
        return again?.spec?.key === 'NULL_ns1_NULL_p1';
      });
    } finally {
      cached.metadata!.uid = live;
    }
  });

  test('E12-1e of a pending pod whose binding was not answered (it may land): the address stays the pod’s, its object is written again, and the next pod gets another', async () => {
    const p1 = await world.pod({ name: 'p1' });
    // the API server holds the binding past the bind's budget, then applies it: the pod will run
    // with the address its annotation names (README "Binds end before the scheduler stops waiting")
    world.server.faults.delayNext({ verb: 'create', resource: 'pods/binding', name: 'p1' }, 8000);
    expect(await world.bind(p1, 'a1')).toMatch(
      /^update pod NULL_ns1_NULL_p1: the binding to a1 was not answered .*its addresses stay held for it$/,
    );
    const [ip] = world.held('NULL_ns1_NULL_p1');

    await world.custom.deleteClusterCustomObject({ ...FIP, name: ip! });
    // settled either way: written again for p1, or freed
    await eventually(
      'floatip to settle the deletion',
      async () => (await objectKey(ip!)) === 'NULL_ns1_NULL_p1' || !world.floatip.allocator.get(ip!),
    );
    // all of this while the binding may still land: p1 is not on a node yet
    expect((await world.readPod('p1')).spec?.nodeName).toBeUndefined();
    const p2 = await world.pod({ name: 'p2' });
    expect(await world.bind(p2, 'a1')).toBe('');
    expect(await world.addressesOf('p2')).not.toContain(ip);

    await eventually(
      'the late binding to land',
      async () => (await world.readPod('p1')).spec?.nodeName === 'a1',
      10_000,
    );
    expect(await world.addressesOf('p1')).toEqual([ip]);
    expect(await objectKey(ip!)).toBe('NULL_ns1_NULL_p1');
    // and the pod's deletion releases it by its policy, as any other
    await world.deletePod('p1');
    await world.settle();
    expect(world.floatip.allocator.get(ip!)).toBeUndefined();
  }, 20_000);

  test('E12-1f of a running pod whose address a configuration change left outside, while floatip was down: adopted as an orphan, so the range coming back does not hand it to another pod', async () => {
    const wide = [{ ...CONFIG[0]!, ips: ['10.0.100.10~10.0.100.12', '10.0.100.20~10.0.100.22'] }];
    await configure(wide);
    await eventually('the wider ranges', async () => world.floatip.allocator.isConfigured('10.0.100.21'));
    const o1 = await world.pod({ name: 'o1', ranges: [['10.0.100.21']] });
    expect(await world.bind(o1, 'a1')).toBe('');
    await world.phase('o1', 'Running');
    // the range goes: the address is kept as an orphan, its pod still runs with it
    await configure(CONFIG);
    await eventually('the narrower ranges', async () => !world.floatip.allocator.isConfigured('10.0.100.21'));
    // and its object is deleted while no floatip runs
    await world.restartFloatip(async () => {
      await world.custom.deleteClusterCustomObject({ ...FIP, name: '10.0.100.21' });
    });
    // galaxy left it free in memory ("failed to find floating ip by ... in cache")
    await eventually(
      'the address adopted for o1',
      async () => world.floatip.allocator.get('10.0.100.21') !== undefined,
    );
    expect(world.floatip.allocator.get('10.0.100.21')).toMatchObject({
      key: 'NULL_ns1_NULL_o1',
      podUid: o1.metadata?.uid,
    });
    expect(await objectKey('10.0.100.21')).toBe('NULL_ns1_NULL_o1');
    // the range comes back: the next pod asking for that address does not get it
    await configure(wide);
    await eventually('the wider ranges again', async () =>
      world.floatip.allocator.isConfigured('10.0.100.21'),
    );
    const o2 = await world.pod({ name: 'o2', ranges: [['10.0.100.21']] });
    expect(await world.bind(o2, 'a1')).toMatch(/^no enough available ips left/);
    expect(await world.addressesOf('o2')).toEqual([]);
    expect(await world.addressesOf('o1')).toEqual(['10.0.100.21']);
  });

  test('E12-1g E12-1c for an address a configuration change left outside: it goes back to the pod, held as an orphan', async () => {
    const p1 = await world.pod({ name: 'p1', ranges: [['10.0.100.10']] });
    expect(await world.bind(p1, 'a1')).toBe('');
    await world.phase('p1', 'Running');
    await configure([{ ...CONFIG[0]!, ips: ['10.0.100.11~10.0.100.12'] }]);
    await eventually('the narrower ranges', async () => !world.floatip.allocator.isConfigured('10.0.100.10'));
    await reserveOver('10.0.100.10');
    await world.custom.deleteClusterCustomObject({ ...FIP, name: '10.0.100.10' });
    await eventually(
      'the object to be written again for the pod',
      async () => (await objectKey('10.0.100.10')) === 'NULL_ns1_NULL_p1',
    );
    expect(world.floatip.allocator.get('10.0.100.10')).toMatchObject({
      key: 'NULL_ns1_NULL_p1',
      reserved: false,
    });
    await configure(CONFIG);
    await eventually('the range back', async () => world.floatip.allocator.isConfigured('10.0.100.10'));
    const p2 = await world.pod({ name: 'p2', ranges: [['10.0.100.10']] });
    expect(await world.bind(p2, 'a1')).toMatch(/^no enough available ips left/);
  });

  test('E12-1b of a pod that is gone (its address kept on the key for no pod): the address is free again', async () => {
    await world.statefulSet('web', 1);
    const web0 = await world.pod({
      name: 'web-0',
      owner: { kind: 'StatefulSet', name: 'web' },
      policy: 'immutable',
    });
    expect(await world.bind(web0, 'a1')).toBe('');
    const [ip] = await world.addressesOf('web-0');
    await world.deletePod('web-0');
    await world.settle();
    expect(world.floatip.allocator.get(ip!)).toMatchObject({ key: 'sts_ns1_web_web-0', podUid: '' });

    await world.custom.deleteClusterCustomObject({ ...FIP, name: ip! });
    await eventually('the address to be free', async () => world.floatip.allocator.get(ip!) === undefined);
    await world.deleteStatefulSet('web');
  });
});

/** `kubectl patch` of an address's FloatingIP object giving it another `spec.key`. */
const rekey = (ip: string, key: string) =>
  world.custom.patchClusterCustomObject(
    { ...FIP, name: ip, body: { spec: { key } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );

describe('E12-4 a FloatingIP object’s spec.key edited by hand', () => {
  test.each([
    ['its Deployment’s parking key', 'dp_ns1_app_'],
    ['a gone pod’s key', 'NULL_ns1_NULL_gone'],
  ])(
    'of a running pod, to %s: the pod keeps its address, its object is written again, and the next pod gets another',
    async (_what, key) => {
      await world.deployment('app', 3);
      const p1 = await world.pod({ name: 'p1', ranges: [['10.0.100.10']] });
      expect(await world.bind(p1, 'a1')).toBe('');
      await world.phase('p1', 'Running');

      await rekey('10.0.100.10', key);
      await eventually(
        'the object to be written again for the pod',
        async () => (await objectKey('10.0.100.10')) === 'NULL_ns1_NULL_p1',
      );
      expect(world.floatip.allocator.get('10.0.100.10')).toMatchObject({
        key: 'NULL_ns1_NULL_p1',
        podUid: p1.metadata?.uid,
      });
      // a pod of the app that parks at that key, and one that asks for that very address
      const c = await world.pod({ name: 'app-5d8f7c9b4-c', owner: rs('app'), policy: 'immutable' });
      expect(await world.bind(c, 'a1')).toBe('');
      expect(await world.addressesOf('app-5d8f7c9b4-c')).not.toEqual(['10.0.100.10']);
      const p2 = await world.pod({ name: 'p2', ranges: [['10.0.100.10']] });
      expect(await world.bind(p2, 'a1')).toMatch(/^no enough available ips left/);
    },
  );

  test('of an address parked for no pod, to another app’s parking key: taken as the operator wrote it', async () => {
    await world.deployment('app', 3);
    await world.deployment('other', 3);
    const a = await world.pod({ name: 'app-5d8f7c9b4-a', owner: rs('app'), policy: 'never' });
    expect(await world.bind(a, 'a1')).toBe('');
    const [ip] = await world.addressesOf('app-5d8f7c9b4-a');
    await world.deletePod('app-5d8f7c9b4-a');
    await world.settle();
    expect(world.held('dp_ns1_app_')).toEqual([ip]);

    await rekey(ip!, 'dp_ns1_other_');
    await eventually('the edit to reach floatip', async () => world.held('dp_ns1_other_').includes(ip!));
    await world.settle();
    expect(await objectKey(ip!)).toBe('dp_ns1_other_');
    const o = await world.pod({ name: 'other-5d8f7c9b4-o', owner: rs('other'), policy: 'never' });
    expect(await world.bind(o, 'a1')).toBe('');
    expect(await world.addressesOf('other-5d8f7c9b4-o')).toEqual([ip]);
  });
});

describe('E12-2 a pod refused for its Pool’s size is sent back to the scheduler when the Pool grows', () => {
  test.each(['the REST API', 'the Pool object'])('grown through %s', async (how) => {
    await world.deployment('one', 5);
    await world.createPool('shared', 1);
    const a = await world.pod({ name: 'one-5d8f7c9b4-a', owner: rs('one'), pool: 'shared' });
    const b = await world.pod({ name: 'one-5d8f7c9b4-b', owner: rs('one'), pool: 'shared' });
    expect(await world.bind(a, 'a1')).toBe('');
    expect(await world.bind(b, 'a1')).toBe('reached pool shared size limit of 1');
    if (how === 'the REST API') {
      expect((await world.rest('POST', '/v1/pool', { name: 'shared', size: 2 })).status).toBe(200);
    } else {
      await world.custom.patchNamespacedCustomObject(
        {
          group: 'galaxy.k8s.io',
          version: 'v1alpha1',
          plural: 'pools',
          namespace: 'kube-system',
          name: 'shared',
          body: { size: 2 },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    }
    await touched('one-5d8f7c9b4-b');
    expect(await world.bind(await world.readPod('one-5d8f7c9b4-b'), 'a1')).toBe('');
  });
});

test('E12-3 a pod no node could take for want of an address is sent back to the scheduler when the ranges grow', async () => {
  for (const name of ['p1', 'p2', 'p3']) expect(await world.bind(await world.pod({ name }), 'a1')).toBe('');
  const p4 = await world.pod({ name: 'p4' });
  expect((await world.filter(p4, ['a1'])).failed).toEqual({ a1: 'FloatingIPPlugin:NoFIPLeft' });
  await world.core.replaceNamespacedConfigMap({
    name: 'floatingip-config',
    namespace: 'kube-system',
    body: {
      metadata: { name: 'floatingip-config', namespace: 'kube-system' },
      data: { floatingips: JSON.stringify([{ ...CONFIG[0], ips: ['10.0.100.10~10.0.100.20'] }]) },
    },
  });
  await touched('p4');
  expect(await world.bind(await world.readPod('p4'), 'a1')).toBe('');
});
