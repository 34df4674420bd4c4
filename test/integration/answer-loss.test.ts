// Writes the API server applied but whose answer floatip never got (the connection reset after the
// commit): floatip must end where the API server is, with nothing lost, doubled or left unaudited.
import { REQUEUED_ANNOTATION } from '../../src/controller/requeue.js';
import { AnswerLossProxy } from './answer-loss-proxy.js';
import { eventually } from './helpers.js';
import { World } from './world.js';

const A = '10.0.1.0/24';
const CONFIG = [
  { nodeSubnets: [A], ips: ['10.0.100.10~10.0.100.40'], subnet: '10.0.100.0/24', gateway: '10.0.100.1' },
  { nodeSubnets: [A], ips: ['fd00:100::10~fd00:100::40'], subnet: 'fd00:100::/64', gateway: 'fd00:100::1' },
];
const FIP = /^\/apis\/galaxy\.k8s\.io\/v1alpha1\/floatingips\/.+$/;

let world: World;
let proxy: AnswerLossProxy;

beforeEach(async () => {
  world = await World.start({
    config: CONFIG,
    floatipKubeConfig: async (server) => {
      proxy = await AnswerLossProxy.start(server.url);
      return proxy.kubeConfig();
    },
  });
  await world.node('a1', '10.0.1.11');
});

afterEach(async () => {
  try {
    await world.checkAndStop({ settle: true });
  } finally {
    await proxy.close();
  }
});

const sts = (name: string, policy?: 'immutable' | 'never') => ({
  name,
  owner: { kind: 'StatefulSet', name: name.replace(/-\d+$/, '') },
  ...(policy ? { policy } : {}),
});
const dp = (app: string, suffix: string, policy?: 'immutable' | 'never') => ({
  name: `${app}-5d8f7c9b4-${suffix}`,
  owner: { kind: 'ReplicaSet', name: `${app}-5d8f7c9b4` },
  ...(policy ? { policy } : {}),
});

async function running(spec: Parameters<World['pod']>[0]): Promise<string[]> {
  const pod = await world.pod(spec);
  expect(await world.bind(pod, 'a1')).toBe('');
  return world.addressesOf(spec.name);
}

test('AL-1 a REST release whose delete was applied but not answered: reported released, and audited', async () => {
  const [ip] = await running(sts('web-0', 'never'));
  await world.deletePod('web-0');
  await world.settle();
  expect(world.floatip.allocator.get(ip!)?.key).toBe('sts_ns1_web_web-0');
  const lost = proxy.loseNextAnswer('DELETE', FIP);
  const res = await world.rest('POST', '/v1/ip', {
    ips: [{ ip, namespace: 'ns1', appName: 'web', podName: 'web-0', appType: 'statefulset' }],
  });
  await lost;
  expect([res.status, res.text]).toEqual([200, '{"code":200,"message":""}']);
  expect(world.floatip.allocator.get(ip!)).toBeUndefined();
  expect(await world.releasedEvents(ip!)).toEqual([
    expect.stringMatching(/^released 10\.0\.100\.10 from sts_ns1_web_web-0 \(by .* via rest\): /),
  ]);
});

test('AL-2 a deleted pod whose address’s delete was applied but not answered: released and audited like its other one', async () => {
  const ips = await running(sts('web-0'));
  expect(ips).toEqual(['10.0.100.10', 'fd00:100::10']);
  const lost = proxy.loseNextAnswer('DELETE', FIP);
  await world.deletePod('web-0');
  await lost;
  await world.settle();
  expect([...world.floatip.allocator.all()]).toEqual([]);
  for (const ip of ips) {
    expect(await world.releasedEvents(ip)).toEqual([
      `released ${ip} from sts_ns1_web_web-0 (by floatip lifecycle via pod-gone): deletedAndIPMutablePod`,
    ]);
  }
});

test('AL-3 a bind whose first FloatingIP create was applied but not answered fails, and its retry binds with that address', async () => {
  const pod = await world.pod(sts('web-0'));
  const lost = proxy.loseNextAnswer('POST', /\/floatingips$/);
  expect(await world.bind(pod, 'a1')).toMatch(/^create floatingips\.galaxy\.k8s\.io "10\.0\.100\.10": /);
  await lost;
  // the object was made: memory has it for the pod's key, and nothing else was left behind
  expect(world.held('sts_ns1_web_web-0')).toEqual(['10.0.100.10']);
  await world.expectConsistent();
  expect(await world.bind(pod, 'a1')).toBe('');
  expect(await world.addressesOf('web-0')).toEqual(['10.0.100.10', 'fd00:100::10']);
});

test('AL-4 a binding applied but not answered: read back, the bind succeeds with the addresses the pod was bound with', async () => {
  const pod = await world.pod(sts('web-0'));
  const lost = proxy.loseNextAnswer('POST', /\/binding$/);
  expect(await world.bind(pod, 'a1')).toBe('');
  await lost;
  expect(await world.addressesOf('web-0')).toEqual(['10.0.100.10', 'fd00:100::10']);
  expect(world.held('sts_ns1_web_web-0')).toEqual(['10.0.100.10', 'fd00:100::10']);
});

test('AL-5 immutable: a park and an unpark applied but not answered are done: the address is parked, then the new pod binds with it at once', async () => {
  await world.deployment('app', 2);
  const a = await running(dp('app', 'a', 'immutable'));
  await running(dp('app', 'b', 'immutable'));
  const parked = proxy.loseNextAnswer('PATCH', FIP);
  await world.deletePod(dp('app', 'a').name);
  await parked;
  await world.settle();
  expect(world.held('dp_ns1_app_')).toEqual(a);
  const unparked = proxy.loseNextAnswer('PATCH', FIP);
  const c = await world.pod(dp('app', 'c', 'immutable'));
  expect(await world.bind(c, 'a1')).toBe('');
  await unparked;
  expect(await world.addressesOf(c.metadata!.name!)).toEqual(a);
  expect(world.held('dp_ns1_app_')).toEqual([]);
  const parks = (await (await fetch(`${world.floatip.apiUrl}/metrics`)).text())
    .split('\n')
    .filter((l) => l.startsWith('floatip_releases_total{') && l.includes('action="park"'));
  expect(parks).toEqual([expect.stringMatching(/ 2$/)]);
});

test('AL-6 a create that lands after its bind gave up, unseen by floatip when the retry allocates: the pod ends with that address, not a second one of its family', async () => {
  const pod = await world.pod(sts('web-0', 'never'));
  world.server.faults.delayNext({ verb: 'create', resource: 'floatingips', name: 'fd00-100--10' }, 4600);
  expect(await world.bind(pod, 'a1')).toMatch(/"fd00-100--10": no answer within/);
  // floatip's FloatingIP watch is away (re-established 8 s late) while the late create lands
  world.server.faults.delayNext({ verb: 'watch', resource: 'floatingips' }, 8000);
  world.server.faults.dropWatches();
  await eventually('the late create to land', async () => {
    const objects = (await world.custom.listClusterCustomObject({
      group: 'galaxy.k8s.io',
      version: 'v1alpha1',
      plural: 'floatingips',
    })) as { items: { metadata: { name: string } }[] };
    return objects.items.some((o) => o.metadata.name === 'fd00-100--10');
  });
  expect(world.floatip.allocator.get('fd00:100::10')).toBeUndefined();
  expect(await world.bind(pod, 'a1')).toBe(
    'fd00:100::10 is already recorded for sts_ns1_web_web-0 by an earlier attempt whose create was not answered; the next attempt uses it',
  );
  expect(await world.bind(pod, 'a1')).toBe('');
  expect(await world.addressesOf('web-0')).toEqual(['10.0.100.10', 'fd00:100::10']);
  // nothing more is kept for the pod (never: it would be kept for ever) once the watch is back
  await world.createFloatingIP('10.0.100.40', { key: 'pool__marker_' });
  await eventually(
    'floatip’s watch to be back',
    async () => world.floatip.allocator.get('10.0.100.40') !== undefined,
    20_000,
  );
  expect(world.held('sts_ns1_web_web-0')).toEqual(['10.0.100.10', 'fd00:100::10']);
}, 40_000);

test('AL-7 a pod refused for its app’s limit is sent back when the app parks an address, though the park’s answers were lost', async () => {
  await world.deployment('app', 1);
  await running(dp('app', 'a', 'immutable'));
  const c = await world.pod(dp('app', 'c', 'immutable'));
  expect(await world.bind(c, 'a1')).toMatch(/wait for releasing/);
  const parked = [proxy.loseNextAnswer('PATCH', FIP), proxy.loseNextAnswer('PATCH', FIP)];
  await world.deletePod(dp('app', 'a').name);
  await Promise.all(parked);
  await world.settle();
  expect(world.held('dp_ns1_app_')).toEqual(['10.0.100.10', 'fd00:100::10']);
  await eventually(
    'the refused pod to be touched',
    async () =>
      (await world.readPod(c.metadata!.name!)).metadata?.annotations?.[REQUEUED_ANNOTATION] !== undefined,
  );
  expect(await world.bind(c, 'a1')).toBe('');
});
