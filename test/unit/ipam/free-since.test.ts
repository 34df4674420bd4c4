// Since when a free address is free (galaxy's updateTime of an unallocated IP): the configuration's
// time, then the release's; taking it again forgets the release, a new configuration restamps all.
import { Allocator, ReleasePolicy, parsePoolConfig } from '../../../src/ipam/index.js';

const entry = (ips: string[]) => ({
  nodeSubnets: ['10.0.1.0/24'],
  ips,
  subnet: '10.0.100.0/24',
  gateway: '10.0.100.1',
});
const attrs = { policy: ReleasePolicy.PodDelete, nodeName: 'n1', podUid: 'u1' };

test('free since the configuration, then since the release; a new configuration restamps every free address', () => {
  let now = Date.UTC(2026, 0, 1);
  const allocator = new Allocator(parsePoolConfig([entry(['10.0.100.2~10.0.100.4'])]), { clock: () => now });
  const configuredAt = now;
  expect(allocator.freeSinceOf('10.0.100.2')).toBe(configuredAt);

  now += 1000;
  const [a] = allocator.allocate({ key: 'sts_ns1_web_web-0', nodeSubnet: '10.0.1.0/24', attrs });
  expect(a?.ip).toBe('10.0.100.2');
  now += 1000;
  allocator.release('10.0.100.2', { key: 'sts_ns1_web_web-0' });
  const releasedAt = now;
  // IPv4-mapped spelling names the same address
  expect(allocator.freeSinceOf('::ffff:10.0.100.2')).toBe(releasedAt);
  expect(allocator.freeSinceOf('10.0.100.3')).toBe(configuredAt);

  // taken again and given back: the new release counts; a rekey (park, keep) frees nothing
  now += 1000;
  allocator.allocateIP('10.0.100.2', 'sts_ns1_web_web-0', attrs);
  now += 1000;
  allocator.rekey('10.0.100.2', { key: 'sts_ns1_web_web-0' }, 'sts_ns1_web_web-0', {
    ...attrs,
    nodeName: '',
  });
  now += 1000;
  allocator.release('10.0.100.2', { key: 'sts_ns1_web_web-0' });
  expect(allocator.freeSinceOf('10.0.100.2')).toBe(now);

  now += 1000;
  allocator.reconfigure(parsePoolConfig([entry(['10.0.100.2~10.0.100.5'])]));
  for (const ip of ['10.0.100.2', '10.0.100.3', '10.0.100.5']) expect(allocator.freeSinceOf(ip)).toBe(now);
});
