// GET /v1/dashboard over real HTTP, on floatip started as in production on the embedded API
// server: its counts are /v1/subnets' split by state, its lists find what a user searches for,
// parked addresses carry the TTL left, a pod deleted while floatip was down is a leak candidate,
// the latest Events are floatip's own, and the time to exhaustion follows floatip's own rate.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DashboardJson, HolderJson } from '../../src/api/dashboard-wire.js';
import { RELEASED_EVENT_REASON } from '../../src/store/release-audit.js';
import { silentLogger } from '../../src/log.js';
import { DASHBOARD_CONFIG, RESERVED_IP, type Seeded, runningPod, seed } from './dashboard-world.js';
import { eventually } from './helpers.js';
import { World } from './world.js';

const TTL_MS = 3_600_000;
let world: World;
let seeded: Seeded;
/** How far floatip's clock is ahead of the wall clock. */
let later = 0;

beforeAll(async () => {
  world = await World.start({
    config: DASHBOARD_CONFIG,
    // galaxy's schema-less CRDs, so that a Pool of size 1.5 or -2 can be stored, as on such a cluster
    schemalessCrds: true,
    parkedIpTtlMs: TTL_MS,
    clock: () => Date.now() + later,
  });
  seeded = await seed(world);
}, 60_000);

afterAll(async () => {
  await world.stop();
});

async function dashboard(query = ''): Promise<DashboardJson> {
  const answer = await world.rest('GET', `/v1/dashboard${query}`);
  expect(answer.status).toBe(200);
  return (answer.json as { content: DashboardJson }).content;
}

const row = (rows: HolderJson[], ip: string) => rows.find((r) => r.ip === ip);

test('per subnet: /v1/subnets counts, split into used, parked and reserved', async () => {
  await eventually('pool p1 to reach the cache', async () => (await dashboard()).pools.length === 1);
  const { content: subnets } = (await world.rest('GET', '/v1/subnets')).json as {
    content: { entries: { total: string; allocated: number; reserved: number; free: string }[] };
  };
  const [entry] = subnets.entries;
  const [usage] = (await dashboard()).subnets;
  // two running pods; the shop pod's address and the pool's two parked; one reserved by an operator
  expect(usage).toMatchObject({ subnet: '10.0.100.0/24', used: 2, parked: 3, reserved: 1 });
  expect(usage!.used + usage!.parked + usage!.reserved).toBe(entry!.allocated);
  expect(usage!.reserved).toBe(entry!.reserved);
  expect(usage!.free).toBe(entry!.free);
  expect(usage!.total).toBe(entry!.total);
});

test('per pool: its size, what it holds, what it has still to take', async () => {
  expect((await dashboard()).pools).toEqual([
    expect.objectContaining({ name: 'p1', size: 2, used: 0, parked: 2, reserved: 0, free: '0' }),
  ]);
});

test('holders: IP, key, pod, node, policy, age and state; parked ones with the TTL left', async () => {
  const d = await dashboard();
  expect(row(d.holders, seeded.running.solo!)).toMatchObject({
    key: 'NULL_ns1_NULL_solo',
    namespace: 'ns1',
    pod: 'solo',
    node: 'a1',
    policy: 'delete',
    state: 'used',
    releasable: false,
  });
  expect(d.now - row(d.holders, seeded.running.solo!)!.since).toBeLessThan(60_000);
  expect(row(d.holders, RESERVED_IP)).toMatchObject({ state: 'reserved', releasable: false });
  const shop = row(d.parked, seeded.parked)!;
  expect(shop).toMatchObject({ key: 'dp_ns1_shop_', policy: 'never', state: 'parked', releasable: true });
  expect(shop.ttlLeftMs).toBeGreaterThan(TTL_MS - 60_000);
  expect(shop.ttlLeftMs).toBeLessThanOrEqual(TTL_MS);
  // a pool's addresses are the pool's to keep: no TTL
  const pool = d.parked.filter((h) => h.pool === 'p1');
  expect(pool).toHaveLength(2);
  expect(pool.map((h) => h.ttlLeftMs)).toEqual([undefined, undefined]);
  expect(d.parkedTtlMs).toBe(TTL_MS);
  expect(d.matched).toEqual({ holders: 6, parked: 3, leaks: 0 });
  // address order
  const ips = d.holders.map((h) => h.ip.split('.').map(Number)[3]!);
  expect(ips).toEqual([...ips].sort((a, b) => a - b));
});

test('search: by pod name, by node (any case), by address; limit cuts the lists, not the count', async () => {
  expect((await dashboard('?q=solo')).holders.map((h) => h.pod)).toEqual(['solo']);
  expect((await dashboard('?q=A1')).holders.map((h) => h.pod).sort()).toEqual(['api-0', 'solo']);
  expect((await dashboard(`?q=${seeded.parked}`)).parked.map((h) => h.key)).toEqual(['dp_ns1_shop_']);
  expect((await dashboard('?q=nothing-like-this')).matched).toEqual({ holders: 0, parked: 0, leaks: 0 });
  const cut = await dashboard('?limit=2');
  expect(cut.holders).toHaveLength(2);
  expect(cut.matched.holders).toBe(6);
});

test('bad parameters are a 400 naming them', async () => {
  const answer = await world.rest('GET', '/v1/dashboard?limit=100000');
  expect(answer.status).toBe(400);
  expect(answer.text).toContain('limit');
});

test('the latest Events are those floatip wrote, newest first', async () => {
  const answer = await world.rest('POST', '/v1/ip', {
    ips: [{ ip: seeded.parked, namespace: 'ns1', appName: 'shop', appType: 'deployment' }],
  });
  expect(answer.status).toBe(200);
  const [latest] = (await dashboard()).events;
  expect(latest).toMatchObject({
    type: 'Normal',
    reason: RELEASED_EVENT_REASON,
    object: `FloatingIP ${seeded.parked}`,
  });
  expect(latest!.message).toContain(`released ${seeded.parked} from dp_ns1_shop_`);
});

test('a pod deleted while floatip was down is a leak candidate until the resync settles it', async () => {
  const ip = await runningPod(world, { name: 'gone' });
  await world.restartFloatip(() =>
    world.core.deleteNamespacedPod({ name: 'gone', namespace: 'ns1' }).then(() => undefined),
  );
  const d = await dashboard();
  expect(d.leaks.map((h) => [h.ip, h.pod, h.leak])).toEqual([[ip, 'gone', 'pod not found']]);
  expect(row(d.leaks, ip)!.releasable).toBe(true);
  await world.floatip.lifecycle.resync();
  await world.floatip.lifecycle.resync();
  await world.settle();
  expect((await dashboard()).leaks).toEqual([]);
});

test('time to exhaustion: unknown at first, then the free count over the net rate of the last hour', async () => {
  // a new floatip: its history starts now
  await world.restartFloatip();
  const before = (await dashboard()).subnets[0]!;
  expect(before.exhaustion).toMatchObject({ perHour: null, seconds: null });
  for (const name of ['rate-1', 'rate-2']) await runningPod(world, { name });
  later += 30 * 60_000;
  const after = (await dashboard()).subnets[0]!;
  expect(Number(before.free) - Number(after.free)).toBe(2);
  // 2 addresses in 30 minutes (and the seconds this test took)
  expect(after.exhaustion.perHour).toBeCloseTo(4, 1);
  expect(after.exhaustion.windowSeconds).toBeGreaterThanOrEqual(1800);
  expect(after.exhaustion.seconds! / 3600).toBeCloseTo(Number(after.free) / after.exhaustion.perHour!, 1);
  // addresses given back count against those taken: the free count no longer shrinks
  for (const name of ['rate-1', 'rate-2', 'solo']) await world.deletePod(name);
  await world.settle();
  expect((await dashboard()).subnets[0]!.exhaustion).toMatchObject({ seconds: null });
});

test('the page is public, its files are only those built; unbuilt, it says how to build it', async () => {
  const url = await world.serveRest({
    log: silentLogger(),
    dashboardAssets: mkdtempSync(path.join(tmpdir(), 'floatip-unbuilt-')),
  });
  const page = await fetch(`${url}/`);
  expect(page.status).toBe(404);
  expect(await page.json()).toEqual({
    code: 404,
    message: expect.stringMatching(/^not found: the dashboard is not built .*run npm run build$/),
  });
  for (const file of ['index.html', 'package.json', '..%2Fpackage.json', 'dashboard.ts'])
    expect((await fetch(`${url}/dashboard/${file}`)).status).toBe(404);
});

test('a Pool that admits no pod whatever it holds says why: a stored size no integer, or below 0', async () => {
  // kubectl can store both where galaxy's CRD has no schema (floatip's refuses them); floatip
  // reads 1.5 as 0, and the page showed `size 0` with nothing to say kubectl shows 1.5
  await world.createPool('fraction', 1.5);
  await world.createPool('negative', -2);
  await eventually('both pools to reach the cache', async () => (await dashboard()).pools.length === 3);
  const pools = (await dashboard()).pools;
  expect(pools.find((p) => p.name === 'fraction')).toMatchObject({
    size: 0,
    problem:
      'its stored size 1.5 is not an integer: read as 0, so it admits no pod until the Pool object is fixed',
  });
  expect(pools.find((p) => p.name === 'negative')).toMatchObject({
    size: -2,
    problem: 'its size -2 is below 0, so it admits no pod',
  });
  expect(pools.find((p) => p.name === 'p1')).not.toHaveProperty('problem');
});
