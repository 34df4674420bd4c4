// An address an operator reserved (label `reserved`) under a key that names a pod is never the
// pod's: floatip does not hand a reserved address to anyone. Filter and bind must agree on that; a
// filter that pinned the pod to the reserved address's node subnet while bind refused to reuse it
// left the pod failing every bind for good.
import { World } from './world.js';

const CONFIG = [
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.2~10.0.100.3'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
  },
  {
    nodeSubnets: ['10.0.2.0/24'],
    ips: ['10.0.101.2~10.0.101.3'],
    subnet: '10.0.101.0/24',
    gateway: '10.0.101.1',
  },
];

let world: World;
beforeEach(async () => {
  world = await World.start({ config: CONFIG });
  await world.node('a1', '10.0.1.11');
  await world.node('b1', '10.0.2.11');
});
afterEach(() => world.checkAndStop());

const reserve = async (ip: string, key: string) => {
  await world.createFloatingIP(ip, { key, policy: 2 }, { reserved: 'set-aside' });
  for (let i = 0; i < 250 && !world.floatip.allocator.get(ip)?.reserved; i++)
    await new Promise((r) => setTimeout(r, 20));
};

test('a pod whose key names a reserved address is placed as if it held nothing, and gets an address of its own', async () => {
  await reserve('10.0.100.2', 'sts_ns1_web_web-0');
  const pod = await world.pod({ name: 'web-0', owner: { kind: 'StatefulSet', name: 'web' } });
  const filtered = await world.filter(pod, ['a1', 'b1']);
  expect(filtered).toEqual({ passed: ['a1', 'b1'], failed: {}, error: '' });
  expect(await world.bind(pod, 'b1')).toBe('');
  expect(await world.addressesOf('web-0')).toEqual(['10.0.101.2']);
  // the reservation is untouched: its key, its label, no node or pod
  expect(world.floatip.allocator.get('10.0.100.2')).toMatchObject({
    key: 'sts_ns1_web_web-0',
    reserved: true,
    nodeName: '',
    podUid: '',
  });
});

test('with request_ip_range, a reserved address in a group does not satisfy it', async () => {
  await reserve('10.0.100.2', 'sts_ns1_db_db-0');
  const pod = await world.pod({
    name: 'db-0',
    owner: { kind: 'StatefulSet', name: 'db' },
    ranges: [['10.0.100.2~10.0.100.3']],
  });
  expect(await world.filter(pod, ['a1', 'b1'])).toEqual({
    passed: ['a1'],
    failed: { b1: 'FloatingIPPlugin:NoFIPLeft' },
    error: '',
  });
  expect(await world.bind(pod, 'a1')).toBe('');
  expect(await world.addressesOf('db-0')).toEqual(['10.0.100.3']);
});
