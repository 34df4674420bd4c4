// Every metric is present and moves when floatip allocates, fails, releases, conflicts and leaks.
import { World } from './world.js';

const CONFIG = [
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.10~10.0.100.11'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
  },
];

/** metric name{labels} -> value, from the Prometheus text format. */
async function scrape(world: World): Promise<Map<string, number>> {
  const text = await world.floatip.metrics.registry.metrics();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    values.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return values;
}

const value = (m: Map<string, number>, name: string) => m.get(name) ?? 0;

test('E8-5 metrics move with allocations, failures, releases, conflicts and leaks', async () => {
  const world = await World.start({ config: CONFIG });
  try {
    await world.node('a1', '10.0.1.11');
    const before = await scrape(world);
    expect(
      value(before, 'galaxy_ip_counter{type="total",subnet="10.0.100.0/24",first_ip="10.0.100.10"}'),
    ).toBe(2);
    expect(value(before, 'floatip_leader')).toBe(1);

    const p1 = await world.pod({ name: 'p1' });
    expect(await world.bind(p1, 'a1')).toBe('');
    const p2 = await world.pod({ name: 'p2' });
    // a conflict on the way: the store re-reads and tries again
    world.server.faults.failNext({ verb: 'patch', resource: 'floatingips' }, 409);
    expect(await world.bind(p2, 'a1')).toBe('');
    await world.floatip.store.update(
      '10.0.100.11',
      { key: 'NULL_ns1_NULL_p2' },
      { policy: 0, nodeName: 'x', podUid: p2.metadata!.uid! },
    );
    const p3 = await world.pod({ name: 'p3' });
    expect(await world.bind(p3, 'a1')).toMatch(/^no enough available ips left/);
    await world.filter(p3, ['a1']);

    await world.deletePod('p1');
    await world.settle();
    // p3 found no node with a free address; p1's release sends it back to the scheduler
    let mid = await scrape(world);
    for (let i = 0; i < 100 && value(mid, 'floatip_requeued_pods_total{why="no-free-ip"}') === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      mid = await scrape(world);
    }
    expect(value(mid, 'floatip_requeued_pods_total{why="no-free-ip"}')).toBe(1);
    await world.restartFloatip(() =>
      world.core.deleteNamespacedPod({ name: 'p2', namespace: 'ns1' }).then(() => undefined),
    );
    await world.floatip.lifecycle.resync();
    await world.floatip.lifecycle.resync();
    await world.settle();
    const after = await scrape(world);
    // the new replica counts from zero: its leak and release are what it saw
    expect(value(after, 'floatip_leaks_total')).toBe(1);
    expect(value(after, 'floatip_releases_total{action="release",cause="leak"}')).toBe(1);
    expect(
      value(after, 'floatip_addresses{entry="0",family="ipv4",subnet="10.0.100.0/24",state="free"}'),
    ).toBe(2);
    expect(value(after, 'floatip_release_queue_depth')).toBe(0);
    expect(after.has('floatip_release_queue_oldest_seconds')).toBe(true);
    expect(after.has('floatip_addresses{entry="none",family="any",subnet="none",state="orphaned"}')).toBe(
      true,
    );
  } finally {
    await world.stop();
  }
});

test('E8-6 the extender’s latency, failures and galaxy’s schedule latency are recorded', async () => {
  const world = await World.start({ config: CONFIG });
  try {
    await world.node('a1', '10.0.1.11');
    const p1 = await world.pod({ name: 'p1' });
    await world.filter(p1, ['a1']);
    expect(await world.bind(p1, 'a1')).toBe('');
    // a pod that asks for no address passes, and galaxy's histogram does not count it (floatip's does)
    const other = await world.pod({ name: 'no-address', wants: false });
    await world.filter(other, ['a1']);
    expect(value(await scrape(world), 'galaxy_schedule_latency_count{func="filter"}')).toBe(1);
    world.server.faults.failNext({ verb: 'patch', resource: 'floatingips' }, 409);
    await world.floatip.store.update(
      '10.0.100.10',
      { key: 'NULL_ns1_NULL_p1' },
      { policy: 0, nodeName: 'y', podUid: p1.metadata!.uid! },
    );
    const m = await scrape(world);
    expect(value(m, 'floatip_extender_request_duration_seconds_count{verb="filter",outcome="success"}')).toBe(
      2,
    );
    expect(value(m, 'floatip_extender_request_duration_seconds_count{verb="bind",outcome="success"}')).toBe(
      1,
    );
    expect(value(m, 'galaxy_schedule_latency_count{func="bind"}')).toBe(1);
    expect(value(m, 'floatip_write_conflicts_total')).toBe(1);
    const p3 = await world.pod({ name: 'p3', policy: 'never' });
    await world.filter(p3, ['a1']);
    const after = await scrape(world);
    expect(
      value(after, 'floatip_allocation_failures_total{verb="filter",reason="policy-not-supported"}'),
    ).toBe(1);
  } finally {
    await world.stop();
  }
});

test('E8-6b a bind slower than 2.5 s is counted in a finite bucket, so its quantile reads its time', async () => {
  const world = await World.start({ config: CONFIG });
  try {
    await world.node('a1', '10.0.1.11');
    const p1 = await world.pod({ name: 'p1' });
    // within the 4 s bind budget, past what the buckets used to reach
    world.server.faults.delayNext({ verb: 'create', resource: 'floatingips' }, 3000);
    expect(await world.bind(p1, 'a1')).toBe('');
    const m = await scrape(world);
    const bucket = (le: string) =>
      value(m, `floatip_extender_request_duration_seconds_bucket{le="${le}",verb="bind",outcome="success"}`);
    expect(bucket('2.5')).toBe(0);
    expect(bucket('5')).toBe(1);
  } finally {
    await world.stop();
  }
});

test('E8-5b a release through the REST API is counted too, with cause rest', async () => {
  const world = await World.start({ config: CONFIG });
  try {
    await world.floatip.store.allocateIP('10.0.100.10', 'pool__p1_', { policy: 2, nodeName: '', podUid: '' });
    const { status } = await world.rest('POST', '/v1/ip', { ips: [{ ip: '10.0.100.10', poolName: 'p1' }] });
    expect(status).toBe(200);
    expect(value(await scrape(world), 'floatip_releases_total{action="release",cause="rest"}')).toBe(1);
  } finally {
    await world.stop();
  }
});
