// floatip_allocation_failures_total counts the pods that could not get addresses. With a real
// kube-scheduler, a pod whose candidate nodes' subnets have no free address is refused at filter
// (FloatingIPPlugin:NoFIPLeft on every node, no error) and never reaches bind: that refusal is the
// common one, and the Refusals panel must show it as no-free-ip, once per filter call.
import { World } from './world.js';

const CONFIG = [
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.10~10.0.100.10'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
  },
  {
    nodeSubnets: ['10.0.2.0/24'],
    ips: ['10.0.101.10~10.0.101.10'],
    subnet: '10.0.101.0/24',
    gateway: '10.0.101.1',
  },
];

async function failures(world: World): Promise<Record<string, number>> {
  const text = await world.floatip.metrics.registry.getSingleMetricAsString(
    'floatip_allocation_failures_total',
  );
  const values: Record<string, number> = {};
  for (const m of text.matchAll(/^floatip_allocation_failures_total\{(.*)\} (\S+)$/gm))
    values[m[1]!] = Number(m[2]);
  return values;
}

test('a filter that leaves no node for want of a free address is counted as a no-free-ip refusal', async () => {
  const world = await World.start({ config: CONFIG });
  try {
    await world.node('a1', '10.0.1.11');
    await world.node('b1', '10.0.2.11');
    const p1 = await world.pod({ name: 'p1' });
    expect(await world.bind(p1, 'a1')).toBe('');
    const p2 = await world.pod({ name: 'p2' });

    // b1's subnet still has room: p2 can go there, nothing is refused
    await world.filter(p2, ['a1', 'b1']);
    expect(await failures(world)).toEqual({});

    expect(await world.bind(p2, 'b1')).toBe('');
    const p3 = await world.pod({ name: 'p3' });
    for (const mode of ['names', 'objects'] as const) {
      const answer = await world.filter(p3, ['a1', 'b1'], mode);
      expect(answer).toMatchObject({ passed: [], error: '' });
      expect(Object.values(answer.failed)).toEqual([
        'FloatingIPPlugin:NoFIPLeft',
        'FloatingIPPlugin:NoFIPLeft',
      ]);
    }
    expect(await failures(world)).toEqual({ 'verb="filter",reason="no-free-ip"': 2 });
  } finally {
    await world.stop();
  }
});
