// Who holds an address: the states of kubectl fip ls, its filters, usage's counts and rate.
import { filterHolders, holders } from '../../../src/fip/holders.js';
import { formatHolders } from '../../../src/fip/output.js';
import { find, holderFields } from '../../../src/fip/show.js';
import { usage } from '../../../src/fip/usage.js';
import { NOW, fipObject, pod, snapshot } from './world.js';

const world = () =>
  snapshot({
    floatingIPs: [
      fipObject('10.2.0.10', 'dp_ns_web_web-a', { node: 'n1', uid: 'uid-web-a', createdAgoMs: 10 * 60_000 }),
      fipObject('10.2.0.11', 'dp_ns_web_', { policy: 2 }),
      fipObject('10.2.0.12', 'sts_ns_db_db-0', { policy: 1, createdAgoMs: 20 * 60_000 }),
      fipObject('10.2.0.13', 'pool__p_', { reserved: true }),
      fipObject('10.2.0.14', 'NULL_ns_NULL_gone', { node: 'n2', uid: 'uid-gone' }),
      fipObject('10.2.0.15', 'NULL_ns_NULL_new', { node: 'n2', uid: 'uid-old' }),
      fipObject('10.2.0.9', 'pool__p_dp_ns_api_api-x', { node: 'n1', uid: 'uid-api-x' }),
    ],
    pods: [
      pod('ns', 'web-a', { ips: ['10.2.0.10'], owner: { kind: 'ReplicaSet', name: 'web-5d' } }),
      pod('ns', 'new', { ips: ['10.2.0.15'], uid: 'uid-new' }),
    ],
    pools: [{ metadata: { name: 'p' }, size: 4 }],
  });

test('each allocation has one state, in numeric address order', () => {
  expect(holders(world()).map((h) => `${h.allocation.ip} ${h.state}`)).toEqual([
    '10.2.0.9 leaked',
    '10.2.0.10 in-use',
    '10.2.0.11 parked',
    '10.2.0.12 kept',
    '10.2.0.13 reserved',
    '10.2.0.14 leaked',
    '10.2.0.15 leaked',
  ]);
  const replaced = holders(world()).find((h) => h.allocation.ip === '10.2.0.15')!;
  expect(replaced.why).toBe('pod ns/new is another incarnation (uid uid-new, the object names uid-old)');
});

test('filters: pod, app, pool, node, parked, leaked, namespace', () => {
  const list = holders(world());
  const ips = (f: Parameters<typeof filterHolders>[1]) => filterHolders(list, f).map((h) => h.allocation.ip);
  expect(ips({ pod: 'web-a' })).toEqual(['10.2.0.10']);
  expect(ips({ app: 'web' })).toEqual(['10.2.0.10', '10.2.0.11']);
  expect(ips({ pool: 'p' })).toEqual(['10.2.0.9', '10.2.0.13']);
  expect(ips({ node: 'n2' })).toEqual(['10.2.0.14', '10.2.0.15']);
  expect(ips({ parked: true })).toEqual(['10.2.0.11', '10.2.0.12']);
  expect(ips({ leaked: true })).toEqual(['10.2.0.9', '10.2.0.14', '10.2.0.15']);
  expect(ips({ namespace: 'other' })).toEqual([]);
});

test('usage per subnet and pool, and the time to exhaustion from the objects created in the window', () => {
  const [subnet, pool] = usage(world(), 3_600_000);
  // 10 addresses 10.2.0.10~19; 10.2.0.9 is outside the ranges (an orphan), so not in the entry
  expect(subnet).toMatchObject({
    kind: 'subnet',
    name: '10.2.0.0/24',
    total: 10n,
    used: 3,
    parked: 2,
    reserved: 1,
    free: 4n,
    recent: 2,
  });
  // 2 still-held allocations in the last hour, 4 free: 2 hours
  expect(subnet!.exhaustedInMs).toBe(2 * 3_600_000);
  expect(pool).toMatchObject({
    kind: 'pool',
    name: 'p',
    total: 4n,
    used: 1,
    reserved: 1,
    free: 2n,
    recent: 0,
    exhaustedInMs: undefined,
  });
  expect(NOW).toBeGreaterThan(0);
});

test("show's fate of each state reads as one sentence", () => {
  const snap = world();
  const fate = (ip: string) => {
    const h = holders(snap).find((x) => x.allocation.ip === ip)!;
    return holderFields(snap, h, '-').find(([field]) => field === 'When its pod goes')![1];
  };
  expect(fate('10.2.0.13')).toBe('nothing happens: floatip never releases a reserved address');
  expect(fate('10.2.0.11')).toBe(
    'it has none: parked, it waits for the next pod of its app or pool (an immutable one is released once its Deployment is gone, a never one of a gone app after the parked-address TTL, when one is set)',
  );
  expect(fate('10.2.0.10')).toMatch(/^floatip will (release|park|keep) it/);
});

test("a dual-stack pool's usage counts pods' worth, as its size does: one address of each family is one", () => {
  const dual = snapshot({
    configText: JSON.stringify([
      {
        nodeSubnets: ['10.1.0.0/24'],
        ips: ['10.2.0.10~10.2.0.19'],
        subnet: '10.2.0.0/24',
        gateway: '10.2.0.1',
      },
      { nodeSubnets: ['10.1.0.0/24'], ips: ['fd00::10~fd00::19'], subnet: 'fd00::/64', gateway: 'fd00::1' },
    ]),
    floatingIPs: [10, 11, 12].flatMap((n) => [
      fipObject(`10.2.0.${n}`, 'pool__p_', { policy: 2 }),
      fipObject(`fd00--${n}`, 'pool__p_', { policy: 2 }),
    ]),
    pools: [{ metadata: { name: 'p' }, size: 3 }],
  });
  const pool = usage(dual, 3_600_000).find((r) => r.kind === 'pool');
  expect(pool).toMatchObject({ name: 'p', total: 3n, used: 0, parked: 3, reserved: 0, free: 0n });
});

test('an object written without an updateTime is aged by its creation, not from 1970', () => {
  const object = fipObject('10.2.0.16', 'NULL_ns_NULL_ghost', { node: 'n1', createdAgoMs: 7_000 });
  const { updateTime: _none, ...spec } = object.spec;
  const snap = snapshot({ floatingIPs: [{ ...object, spec }] });
  const h = holders(snap)[0]!;
  const table = formatHolders(snap, [h], false);
  expect(table.split('\n')[1]).toMatch(/^10\.2\.0\.16\s+leaked\s+ns\/ghost\s+n1\s+delete\s+7s\s*$/);
  const fields = new Map(holderFields(snap, h, '-'));
  expect(fields.get('Since')).toBe('unknown (the object has no updateTime)');
  expect(fields.get('Created')).toMatch(/\(7s ago\)$/);
});

test('an empty list says whether nothing is held or nothing matched the filters', () => {
  const object = fipObject('10.2.0.16', 'NULL_ns_NULL_ghost', { node: 'n1' });
  const snap = snapshot({ floatingIPs: [object] });
  expect(formatHolders(snap, [], false, holders(snap).length)).toBe('No address matches (1 held).\n');
  expect(formatHolders(snapshot({}), [], false)).toBe('No addresses held.\n');
});

test('show finds a pod as namespace/name, an IPv6 address by its object name, and clips what it cannot find', () => {
  const snap = world();
  expect(find(snap, 'ns/web-a', 'other').holders.map((h) => h.allocation.ip)).toEqual(['10.2.0.10']);
  expect(() => find(snap, 'ns/nope', 'other')).toThrow(
    '"ns/nope" is no IP address, FloatingIP name or pod that exists',
  );
  expect(() => find(snap, 'nope', 'ns')).toThrow(
    '"nope" is no IP address, FloatingIP name or pod of namespace ns that exists',
  );
  const long = 'x'.repeat(5000);
  expect(() => find(snap, long, 'ns')).toThrow(`"${'x'.repeat(300)}"... (5000 characters) is no IP address`);
  const v6 = fipObject('fd00:2::10', 'NULL_ns_NULL_six', { node: 'n1', uid: 'uid-six' });
  const six = snapshot({
    configText: JSON.stringify([
      {
        nodeSubnets: ['10.1.0.0/24'],
        ips: ['fd00:2::10~fd00:2::19'],
        subnet: 'fd00:2::/64',
        gateway: 'fd00:2::1',
      },
    ]),
    floatingIPs: [{ ...v6, metadata: { ...v6.metadata, name: 'fd00-2--10' } }],
  });
  expect(find(six, 'fd00-2--10', 'ns').holders.map((h) => h.allocation.ip)).toEqual(['fd00:2::10']);
  expect(find(six, 'fd00-2--11', 'ns').freeIP).toBe('fd00:2::11');
});

test('usage reads a stored Pool as floatip does: a negative size shown as stored, a missing one as 0', () => {
  const snap = snapshot({ pools: [{ metadata: { name: 'neg' }, size: -5 }, { metadata: { name: 'none' } }] });
  const pools = usage(snap, 3_600_000).filter((r) => r.kind === 'pool');
  expect(pools.map((r) => [r.name, r.total, r.free])).toEqual([
    ['neg', -5n, 0n],
    ['none', 0n, 0n],
  ]);
});

test('a pod not on a node yet holds what its bind recorded, and says its binding may still land', () => {
  // a bind whose binding's answer was lost: the address is the pod's until it is bound or gone
  const s = snapshot({
    floatingIPs: [fipObject('10.2.0.18', 'NULL_ns_NULL_p1', { node: 'n1', uid: 'uid-p1' })],
    pods: [pod('ns', 'p1', { node: '', phase: 'Pending' })],
  });
  const [held] = holders(s);
  expect(held).toMatchObject({ state: 'in-use' });
  expect(held!.why).toBe('pod ns/p1 holds it (not on a node yet: its binding may still land)');
});
