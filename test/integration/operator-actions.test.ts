// Operator actions while pods are placed (the churn, test/e2e/churn.ts, runs no operator): what an
// operator does by hand to floatip's objects must never give one address to two pods, nor lose
// one a pod runs with.
import { eventually } from './helpers.js';
import { World } from './world.js';

const A = '10.0.1.0/24';
const CONFIG = [
  { nodeSubnets: [A], ips: ['10.0.100.10~10.0.100.12'], subnet: '10.0.100.0/24', gateway: '10.0.100.1' },
];
const FIP = { group: 'galaxy.k8s.io', version: 'v1alpha1', plural: 'floatingips' };

let world: World;

beforeEach(async () => {
  world = await World.start({ config: CONFIG });
  await world.node('a1', '10.0.1.11');
});

afterEach(async () => {
  await world.settle();
  await world.expectConsistent();
  await world.stop();
});

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
