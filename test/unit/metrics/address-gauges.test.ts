// What FloatipSubnetAlmostFull and the utilization panel divide: floatip_addresses' `allocated`
// counts every held address, reserved ones included (as /v1/subnets and galaxy_ip_counter), so
// `reserved` is a part of it, and allocated + free is every address the entry hands out.
import { Allocator, ReleasePolicy, parsePoolConfig } from '../../../src/ipam/index.js';
import { Metrics } from '../../../src/metrics/metrics.js';

const config = parsePoolConfig([
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.10~10.0.100.19'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
  },
]);
const attrs = { policy: ReleasePolicy.PodDelete, nodeName: 'n', podUid: 'u' };

test('reserved addresses are among the allocated ones, and allocated + free is the entry', async () => {
  const allocator = new Allocator(config);
  allocator.allocateIP('10.0.100.10', 'NULL_ns_NULL_pod', attrs);
  for (const ip of ['10.0.100.11', '10.0.100.12'])
    allocator.allocateIP(ip, 'NULL_ops_NULL_hold', attrs, { reserved: true });
  const text = await new Metrics({ allocator }).registry.getSingleMetricAsString('floatip_addresses');
  const state = (s: string) =>
    Number(new RegExp(`^floatip_addresses\\{entry="0",[^}]*state="${s}"\\} (\\S+)$`, 'm').exec(text)?.[1]);
  expect({ allocated: state('allocated'), reserved: state('reserved'), free: state('free') }).toEqual({
    allocated: 3,
    reserved: 2,
    free: 7,
  });
});
