// Issue 13.1: whatever the ranges say, no pod gets its subnet's network address, its IPv4 broadcast
// address or its gateway. With galaxy's ConfigMap written as one range over a whole /8, the first pods
// get 10.0.0.2/8 and 10.0.0.3/8 (galaxy: 10.0.0.0/8, then the gateway 10.0.0.1/8); the counts say how
// many were left out; a gateway that galaxy already handed out is kept and named in a Warning Event.
import { eventually } from './helpers.js';
import { World } from './world.js';

const A = '10.1.0.0/24';
const CONFIG = [
  { nodeSubnets: [A], ips: ['10.0.0.0~10.255.255.255'], subnet: '10.0.0.0/8', gateway: '10.0.0.1' },
];

let world: World;
afterEach(() => world.checkAndStop());

const annotationOf = async (name: string) =>
  JSON.parse((await world.readPod(name)).metadata!.annotations!['k8s.v1.cni.galaxy.io/args']!) as unknown;

test('13.1 pods never get the network address or the gateway; /v1/subnets and the metrics count them', async () => {
  world = await World.start({ config: CONFIG });
  await world.node('a1', '10.1.0.11');
  for (const name of ['p1', 'p2']) expect(await world.bind(await world.pod({ name }), 'a1')).toBe('');
  expect(await annotationOf('p1')).toEqual({
    common: { ipinfos: [{ ip: '10.0.0.2/8', vlan: 0, gateway: '10.0.0.1' }] },
  });
  expect(await annotationOf('p2')).toEqual({
    common: { ipinfos: [{ ip: '10.0.0.3/8', vlan: 0, gateway: '10.0.0.1' }] },
  });
  const subnets = await world.rest('GET', '/v1/subnets');
  expect((subnets.json as { content: { entries: unknown[] } }).content.entries).toEqual([
    expect.objectContaining({ total: String(2 ** 24), allocated: 2, excluded: 3, free: String(2 ** 24 - 5) }),
  ]);
  const metrics = (await world.rest('GET', '/metrics')).text;
  expect(metrics).toContain(
    'floatip_addresses{entry="0",family="ipv4",subnet="10.0.0.0/8",state="excluded"} 3',
  );
  expect(metrics).toContain(
    `floatip_addresses{entry="0",family="ipv4",subnet="10.0.0.0/8",state="free"} ${2 ** 24 - 5}`,
  );
});

test('13.1 a gateway galaxy handed out is kept for its pod, listed in a Warning Event, and never handed out again', async () => {
  world = await World.start({ config: CONFIG });
  await world.node('a1', '10.1.0.11');
  await world.statefulSet('web', 1);
  // stop floatip, and let "galaxy" write the gateway's object for web-0
  await world.restartFloatip(async () => {
    await world.createFloatingIP('10.0.0.1', {
      key: 'sts_ns1_web_web-0',
      attribute: '{"NodeName":"a1","Uid":""}',
      policy: 1,
      updateTime: '2024-01-30T07:30:59Z',
    });
  });
  expect(world.floatip.allocator.get('10.0.0.1')?.key).toBe('sts_ns1_web_web-0');
  await world.floatip.events.flush();
  const events = await world.core.listNamespacedEvent({ namespace: 'kube-system' });
  expect(
    events.items.filter((e) => e.reason === 'UnusableFloatingIPsInUse').map((e) => [e.type, e.message]),
  ).toEqual([
    [
      'Warning',
      'kept, but never handed out again once released: 10.0.0.1 (the gateway of floatingips[0]) held by sts_ns1_web_web-0',
    ],
  ]);
  // web-0 keeps it (its key holds it); another pod never gets it
  const web0 = await world.pod({
    name: 'web-0',
    owner: { kind: 'StatefulSet', name: 'web' },
    policy: 'immutable',
  });
  expect(await world.bind(web0, 'a1')).toBe('');
  expect(await world.addressesOf('web-0')).toEqual(['10.0.0.1']);
  expect(await world.bind(await world.pod({ name: 'p1' }), 'a1')).toBe('');
  expect(await world.addressesOf('p1')).toEqual(['10.0.0.2']);
  // once released, it stays out of circulation
  await world.deletePod('web-0');
  await world.scaleStatefulSet('web', 0);
  await eventually('the gateway to be released', async () => {
    await world.floatip.lifecycle.resync();
    return world.floatip.allocator.get('10.0.0.1') === undefined;
  });
  expect(await world.bind(await world.pod({ name: 'p2' }), 'a1')).toBe('');
  expect(await world.addressesOf('p2')).toEqual(['10.0.0.3']);
});
