// A FloatingIP object named as its address but one floatip cannot read (a policy other than 0, 1, 2,
// written by hand or by a newer tool) still takes its address in the API server: a create of that
// name is refused AlreadyExists. floatip holds such an address aside from the start, so neither a
// pool's pre-allocation nor a bind ever picks it, and memory stays what the API server has, through
// the REST API, the statistics and the resync (the black-box tester's report, 2026-12-07).
import { World } from './world.js';

const A = '10.0.1.0/24';
const CONFIG = [
  { nodeSubnets: [A], ips: ['10.0.100.2~10.0.100.20'], subnet: '10.0.100.0/24', gateway: '10.0.100.1' },
  { nodeSubnets: [A], ips: ['fd00:100::2~fd00:100::20'], subnet: 'fd00:100::/64', gateway: 'fd00:100::1' },
];

let world: World;

beforeEach(async () => {
  // a policy floatip's CRD refuses can be stored only where galaxy's schema-less CRD is installed
  world = await World.start({ config: CONFIG, schemalessCrds: true });
  await world.node('a1', '10.0.1.11');
});

afterEach(() => world.checkAndStop());

type Json = Record<string, unknown>;
const ipsOf = (body: unknown) => ((body as { content?: Json[] }).content ?? []).map((i) => i.ip);

/** The addresses the API server's objects give `key`, by name. */
async function objectsOf(key: string): Promise<string[]> {
  const list = (await world.custom.listClusterCustomObject({
    group: 'galaxy.k8s.io',
    version: 'v1alpha1',
    plural: 'floatingips',
  })) as { items: { metadata: { name: string }; spec: { key: string } }[] };
  return list.items
    .filter((o) => o.spec.key === key)
    .map((o) => o.metadata.name)
    .sort();
}

test('pre-allocation past an object floatip cannot read: one pod’s worth, as the API server has it', async () => {
  // the lowest free IPv4, as the tester wrote it
  await world.createFloatingIP('10.0.100.2', {
    key: 'pool__zz_',
    attribute: '{"NodeName":"","Uid":""}',
    policy: 3,
    updateTime: '2026-12-07T00:00:00Z',
  });
  await world.restartFloatip();
  // taken, by the key the object names, and nobody's to release
  const shown = await world.rest('GET', '/v1/ip/10.0.100.2');
  expect((shown.json as { content: Json }).content).toMatchObject({
    ip: '10.0.100.2',
    key: 'pool__zz_',
    reserved: true,
  });
  expect((shown.json as { content: Json }).content.releasable).toBeUndefined();

  const made = await world.rest('POST', '/v1/pool', { name: 'fill2', size: 1, preAllocateIP: true });
  expect([made.status, made.json]).toEqual([200, { code: 200, message: '', realPoolSize: 1 }]);
  const listed = await world.rest('GET', '/v1/ip?poolName=fill2');
  expect(ipsOf(listed.json)).toEqual(['10.0.100.3', 'fd00:100::2']);
  expect(await objectsOf('pool__fill2_')).toEqual(['10.0.100.3', 'fd00-100--2']);
  expect(world.floatip.allocator.get('10.0.100.2')).toMatchObject({ key: 'pool__zz_', reserved: true });

  // the counts take it as held, never free
  const subnets = await world.rest('GET', '/v1/subnets');
  expect((subnets.json as { content: { entries: Json[] } }).content.entries[0]).toMatchObject({
    allocated: 2,
    reserved: 1,
    free: '17',
  });

  // releasing it for the pool that never got it changes nothing, dry run or not
  const release = { ips: [{ ip: '10.0.100.2', poolName: 'fill2' }] };
  for (const dryRun of ['true', 'false']) {
    const res = await world.rest('POST', `/v1/ip?dryRun=${dryRun}`, release);
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({
      reasons: ['releasable is false: 10.0.100.2 has a FloatingIP object floatip cannot read'],
      details: [
        'its FloatingIP 10.0.100.2: spec.policy 3 is not 0, 1 or 2; the address is held aside until the object is fixed or deleted (kubectl delete fip 10.0.100.2)',
      ],
    });
  }

  // and a resync pass leaves it so
  await world.floatip.lifecycle.resync();
  expect(world.floatip.allocator.byKey('pool__fill2_').map((a) => a.ip)).toEqual([
    '10.0.100.3',
    'fd00:100::2',
  ]);
});

test('a bind meeting an object it cannot read that names the very pod takes other addresses', async () => {
  const pod = await world.pod({ name: 'p1' });
  // its key, node and UID, but a policy floatip cannot read: not the pod's address, nor a create of
  // the pod's own that landed late (whose address the bind's retry would reuse)
  const key = 'NULL_ns1_NULL_p1';
  await world.createFloatingIP('10.0.100.2', {
    key,
    attribute: JSON.stringify({ NodeName: 'a1', Uid: pod.metadata!.uid }),
    policy: 7,
    updateTime: '2026-12-07T00:00:00Z',
  });
  // whether or not its watch event has come yet: the bind then meets it as AlreadyExists
  expect(await world.bind(pod, 'a1')).toBe('');
  expect(await world.addressesOf('p1')).toEqual(['10.0.100.3', 'fd00:100::2']);
  expect(world.floatip.allocator.get('10.0.100.2')).toMatchObject({ key, reserved: true });
  expect(
    world.floatip.allocator
      .byKey(key)
      .filter((a) => !a.reserved)
      .map((a) => a.ip),
  ).toEqual(['10.0.100.3', 'fd00:100::2']);
});
