// floatip killed (SIGKILL, as the API server sees it: every connection reset, nothing sent
// afterwards lands) while one of its writes is held short of the API server, then started again:
// the state converges, the pod's next bind succeeds, and nothing is lost, doubled or leaked beyond
// what resync reclaims (two passes). A proxy per floatip start holds the chosen request.
import { AnswerLossProxy } from './answer-loss-proxy.js';
import { World } from './world.js';

const A = '10.0.1.0/24';
const CONFIG = [
  { nodeSubnets: [A], ips: ['10.0.100.10~10.0.100.40'], subnet: '10.0.100.0/24', gateway: '10.0.100.1' },
  { nodeSubnets: [A], ips: ['fd00:100::10~fd00:100::40'], subnet: 'fd00:100::/64', gateway: 'fd00:100::1' },
];
const FIP = /^\/apis\/galaxy\.k8s\.io\/v1alpha1\/floatingips\/.+$/;

let world: World;
let proxies: AnswerLossProxy[];
const proxy = () => proxies[proxies.length - 1]!;

beforeEach(async () => {
  proxies = [];
  world = await World.start({
    config: CONFIG,
    floatipKubeConfig: async (server) => {
      proxies.push(await AnswerLossProxy.start(server.url));
      return proxy().kubeConfig();
    },
  });
  await world.node('a1', '10.0.1.11');
});

afterEach(async () => {
  try {
    await world.checkAndStop({ settle: true });
  } finally {
    for (const p of proxies) await p.close();
  }
});

/** Kills floatip once `held` (a request held by the proxy) is, and starts a new one. */
async function killWhen(held: Promise<void>, pending?: Promise<unknown>): Promise<void> {
  await held;
  const dead = proxy();
  dead.sever();
  await pending?.catch(() => undefined);
  await world.restartFloatip();
  expect(dead.lost).toHaveLength(1);
}

const twoPasses = async () => {
  for (let i = 0; i < 2; i++) {
    await world.floatip.lifecycle.resync();
    await world.settle();
  }
};

const dp = (app: string, suffix: string) => ({
  name: `${app}-5d8f7c9b4-${suffix}`,
  owner: { kind: 'ReplicaSet', name: `${app}-5d8f7c9b4` },
  policy: 'immutable' as const,
});

test('KP-1 killed between the two creates of a dual-stack bind: the next bind keeps the recorded address and adds the other', async () => {
  const pod = await world.pod({ name: 'p1' });
  // the two creates go out together: one is held, the other lands
  const create = proxy().holdNext('POST', /\/floatingips$/);
  const first = world.bind(pod, 'a1');
  await killWhen(create, first);
  expect(world.held('NULL_ns1_NULL_p1').length).toBeLessThanOrEqual(1);
  expect(await world.bind(pod, 'a1')).toBe('');
  expect(await world.addressesOf('p1')).toEqual(['10.0.100.10', 'fd00:100::10']);
});

test('KP-2 killed while the binding is held: the objects stay the pod’s, and the next bind binds with them', async () => {
  const pod = await world.pod({ name: 'p1' });
  const binding = proxy().holdNext('POST', /\/pods\/p1\/binding$/);
  const first = world.bind(pod, 'a1');
  await killWhen(binding, first);
  expect(world.held('NULL_ns1_NULL_p1')).toEqual(['10.0.100.10', 'fd00:100::10']);
  expect(await world.bind(pod, 'a1')).toBe('');
  expect(await world.addressesOf('p1')).toEqual(['10.0.100.10', 'fd00:100::10']);
  // and the pod's deletion releases them
  await world.deletePod('p1');
  await world.settle();
  expect(world.held('NULL_ns1_NULL_p1')).toEqual([]);
});

test('KP-3 killed while the release of a deleted pod is held: resync releases its addresses at its second pass', async () => {
  const pod = await world.pod({ name: 'p1' });
  expect(await world.bind(pod, 'a1')).toBe('');
  const release = proxy().holdNext('DELETE', FIP);
  await world.core.deleteNamespacedPod({ name: 'p1', namespace: 'ns1' });
  await killWhen(release);
  expect(world.held('NULL_ns1_NULL_p1')).toHaveLength(2);
  await twoPasses();
  expect(world.held('NULL_ns1_NULL_p1')).toEqual([]);
});

test('KP-4 immutable: killed while the park of a deleted pod is held, then while the unpark is: the address is parked by resync, then the new pod gets it', async () => {
  await world.deployment('app', 2);
  const a = await world.pod(dp('app', 'a'));
  expect(await world.bind(a, 'a1')).toBe('');
  const ips = await world.addressesOf(a.metadata!.name!);
  const b = await world.pod(dp('app', 'b'));
  expect(await world.bind(b, 'a1')).toBe('');
  const park = proxy().holdNext('PATCH', FIP);
  await world.core.deleteNamespacedPod({ name: a.metadata!.name!, namespace: 'ns1' });
  await killWhen(park);
  await twoPasses();
  expect(world.held('dp_ns1_app_')).toEqual(ips);
  const c = await world.pod(dp('app', 'c'));
  const unpark = proxy().holdNext('PATCH', FIP);
  const first = world.bind(c, 'a1');
  await killWhen(unpark, first);
  expect(await world.bind(c, 'a1')).toBe('');
  expect(await world.addressesOf(c.metadata!.name!)).toEqual(ips);
  expect(world.held('dp_ns1_app_')).toEqual([]);
});

test('KP-5 killed in the middle of a pool’s pre-allocation: what was recorded stays the pool’s, and asking again reaches the size', async () => {
  // the first pod's worth is two creates (IPv4, IPv6) going out together: one is held
  const create = proxy().holdNext('POST', /\/floatingips$/);
  const first = world.rest('POST', '/v1/pool', { name: 'pp', size: 3, preAllocateIP: true });
  await killWhen(create, first);
  const recorded = world.held('pool__pp_');
  expect(recorded.length).toBeLessThanOrEqual(1); // the other create may not have gone out yet
  const again = await world.rest('POST', '/v1/pool', { name: 'pp', size: 3, preAllocateIP: true });
  expect([again.status, again.json]).toEqual([200, { code: 200, message: '', realPoolSize: 3 }]);
  expect(world.held('pool__pp_')).toEqual(expect.arrayContaining(recorded));
});
