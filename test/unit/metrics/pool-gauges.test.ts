// floatip_pool_addresses is read against floatip_pool_size (FloatipPoolAlmostFull, the dashboard's
// pool utilization): a Pool's size counts pods, so its gauges count pods' worth of addresses, as the
// size check at bind does; a pod in a dual-stack node subnet holds two addresses but one place.
import { Allocator, ReleasePolicy, parsePoolConfig } from '../../../src/ipam/index.js';
import { Metrics } from '../../../src/metrics/metrics.js';

const config = parsePoolConfig([
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.10~10.0.100.20'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
  },
  { nodeSubnets: ['10.0.1.0/24'], ips: ['fd00::10~fd00::20'], subnet: 'fd00::/64', gateway: 'fd00::1' },
  {
    nodeSubnets: ['10.0.2.0/24'],
    ips: ['10.0.101.10~10.0.101.20'],
    subnet: '10.0.101.0/24',
    gateway: '10.0.101.1',
  },
  { nodeSubnets: ['10.0.3.0/24'], ips: ['fd01::10~fd01::20'], subnet: 'fd01::/64', gateway: 'fd01::1' },
]);
const held = { policy: ReleasePolicy.Never, nodeName: 'n', podUid: 'u' };
const parked = { policy: ReleasePolicy.Never, nodeName: '', podUid: '' };

async function poolGauges(allocator: Allocator): Promise<Record<string, number>> {
  const metrics = new Metrics({ allocator, pools: () => [{ name: 'p', size: 4 }] });
  const text = await metrics.registry.getSingleMetricAsString('floatip_pool_addresses');
  const values: Record<string, number> = {};
  for (const m of text.matchAll(/^floatip_pool_addresses\{pool="p",state="([\w-]+)"\} (\S+)$/gm))
    values[m[1]!] = Number(m[2]);
  return values;
}

test("a dual-stack pool's in-use and parked gauges count pods, as its size does", async () => {
  const allocator = new Allocator(config);
  // two pods on the dual-stack node subnet (an address of each family), one on the IPv4-only one
  for (const [i, pod] of ['app-1', 'app-2'].entries()) {
    allocator.allocateIP(`10.0.100.1${i}`, `pool__p_dp_ns_app_${pod}`, held);
    allocator.allocateIP(`fd00::1${i}`, `pool__p_dp_ns_app_${pod}`, held);
  }
  allocator.allocateIP('10.0.101.10', 'pool__p_dp_ns_app_app-3', held);
  // and one pod's worth parked, in both families
  allocator.allocateIP('10.0.100.15', 'pool__p_', parked);
  allocator.allocateIP('fd00::15', 'pool__p_', parked);

  expect(await poolGauges(allocator)).toEqual({ 'in-use': 3, parked: 1 });
});

test('an IPv4-only pool counts one address per pod', async () => {
  const allocator = new Allocator(config);
  allocator.allocateIP('10.0.101.10', 'pool__p_dp_ns_app_app-1', held);
  allocator.allocateIP('10.0.101.11', 'pool__p_dp_ns_app_app-2', held);
  allocator.allocateIP('10.0.101.12', 'pool__p_', parked);
  // another pool whose name extends this one's is not this one's
  allocator.allocateIP('10.0.101.13', 'pool__p_x_dp_ns_app_app-1', held);

  expect(await poolGauges(allocator)).toEqual({ 'in-use': 2, parked: 1 });
});

test('a pod in an IPv6-only node subnet counts against the size like any other', async () => {
  const allocator = new Allocator(config);
  allocator.allocateIP('10.0.101.10', 'pool__p_dp_ns_app_app-1', held);
  allocator.allocateIP('10.0.101.11', 'pool__p_dp_ns_app_app-2', held);
  allocator.allocateIP('fd01::10', 'pool__p_dp_ns_app_app-3', held);

  expect(await poolGauges(allocator)).toEqual({ 'in-use': 3, parked: 0 });
});
