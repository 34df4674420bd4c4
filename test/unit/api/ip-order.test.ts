import { AddressSpace } from '../../../src/api/address-space.js';
import { RUN, compareOrders, ipOrder, sortedSlice, sortedSliceSliced } from '../../../src/api/ip-order.js';
import { type Allocation, parsePoolConfig } from '../../../src/ipam/index.js';

test('IPs order numerically, IPv4 before IPv6', () => {
  const ips = ['fd00::1', '10.0.0.10', '::5', '10.0.0.9', '9.255.255.255', '255.255.255.255', 'fd00::a'];
  expect(
    ips
      .map((ip) => ({ ip, o: ipOrder(ip) }))
      .sort((a, b) => compareOrders(a.o, b.o))
      .map((x) => x.ip),
  ).toEqual(['9.255.255.255', '10.0.0.9', '10.0.0.10', '255.255.255.255', '::5', 'fd00::1', 'fd00::a']);
});

describe('sortedSlice', () => {
  // a small deterministic generator, so a failure can be replayed
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

  test.each([
    [50, 0, 10],
    [5000, 0, 10],
    [5000, 20, 30],
    [5000, 4990, 5000],
    [5000, 100, 5200],
    [3000, 10, 200],
  ])('of %p items, [%p, %p) equals the full sort', (n, start, end) => {
    // duplicates on purpose: ties must not break the selection
    const items = Array.from({ length: n }, () => Math.floor(random() * n));
    expect(sortedSlice(items, (a, b) => a - b, start, end)).toEqual(
      [...items].sort((a, b) => a - b).slice(start, end),
    );
  });
});

describe('sortedSliceSliced: the same answer, in pieces the event loop can breathe between', () => {
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  test.each([
    [RUN - 1, 0, 10],
    [RUN * 3 + 5, 0, 10],
    [RUN * 3 + 5, 5000, 5010],
    [RUN * 3 + 5, RUN * 3, RUN * 3 + 5],
    [RUN * 3 + 5, 0, RUN * 3 + 5],
    [RUN * 2, 100, RUN + 100],
  ])('of %p items, [%p, %p) equals the full sort', async (n, start, end) => {
    // a total order, as the list's comparator is (ties go to the lower address)
    const items = Array.from({ length: n }, (_, i) => ({ v: Math.floor(random() * 50), i }));
    const compare = (a: { v: number; i: number }, b: { v: number; i: number }) => a.v - b.v || a.i - b.i;
    let pauses = 0;
    const got = await sortedSliceSliced(items, compare, start, end, async () => void pauses++);
    expect(got).toEqual([...items].sort(compare).slice(start, end));
    if (n > RUN) expect(pauses).toBeGreaterThanOrEqual(Math.ceil(n / RUN));
  });
});

describe('AddressSpace', () => {
  const config = parsePoolConfig([
    { nodeSubnets: ['10.0.1.0/24'], ips: ['10.0.0.5~10.0.0.7'], subnet: '10.0.0.0/24', gateway: '10.0.0.1' },
    {
      nodeSubnets: ['10.0.1.0/24'],
      ips: ['fd00::1~fd00::ffff:ffff:ffff:ffff'],
      subnet: 'fd00::/64',
      gateway: 'fd00::1',
    },
    // a later entry with a lower address: the walk goes by address, not by entry
    { nodeSubnets: ['10.0.2.0/24'], ips: ['10.0.0.2'], subnet: '10.0.0.0/24', gateway: '10.0.0.1' },
  ]);
  const orphan = { ip: '10.0.0.200' } as Allocation;
  const space = new AddressSpace(config, [orphan]);
  const order = (ip: string) => BigInt(ipOrder(ip));

  test('size counts every configured address and the orphans, beyond 2^53', () => {
    expect(space.size).toBe(4n + 1n + (2n ** 64n - 1n));
  });

  test('walks ranges in address order, orphans in place', () => {
    expect(space.slice(0n, 7)).toEqual([
      '10.0.0.2',
      '10.0.0.5',
      '10.0.0.6',
      '10.0.0.7',
      '10.0.0.200',
      'fd00::1',
      'fd00::2',
    ]);
    expect(space.slice(3n, 3)).toEqual(['10.0.0.7', '10.0.0.200', 'fd00::1']);
    expect(space.slice(space.size - 2n, 5)).toEqual([
      'fd00::ffff:ffff:ffff:fffe',
      'fd00::ffff:ffff:ffff:ffff',
    ]);
  });

  test('leaves out excluded addresses, counting ranks without them', () => {
    const excluded = ['10.0.0.5', '10.0.0.6', 'fd00::2'].map(order);
    expect(space.slice(0n, 5, excluded)).toEqual([
      '10.0.0.2',
      '10.0.0.7',
      '10.0.0.200',
      'fd00::1',
      'fd00::3',
    ]);
    expect(space.slice(1n, 2, excluded)).toEqual(['10.0.0.7', '10.0.0.200']);
    expect(space.slice(4n, 2, excluded)).toEqual(['fd00::3', 'fd00::4']);
  });

  test('matches a brute-force walk', () => {
    const small = new AddressSpace(
      parsePoolConfig([
        {
          nodeSubnets: ['10.0.1.0/24'],
          ips: ['10.0.0.2~10.0.0.9', '10.0.0.20~10.0.0.29'],
          subnet: '10.0.0.0/24',
          gateway: '10.0.0.1',
        },
      ]),
      [],
    );
    const all = small.slice(0n, 100);
    const excludedIps = ['10.0.0.3', '10.0.0.4', '10.0.0.9', '10.0.0.20', '10.0.0.28'];
    const kept = all.filter((ip) => !excludedIps.includes(ip));
    const excluded = excludedIps.map(order);
    for (let start = 0; start <= kept.length; start++) {
      for (const count of [1, 3, 100]) {
        expect(small.slice(BigInt(start), count, excluded)).toEqual(kept.slice(start, start + count));
      }
    }
  });
});
