import {
  AlreadyAllocatedError,
  Allocator,
  type Attrs,
  NoFreeIPError,
  NoParkedIPError,
  NotAllocatedError,
  NotInConfigError,
  OwnerConflictError,
  ReleasePolicy,
  ReservedIPError,
  parsePoolConfig,
  parseRange,
  type RangeGroup,
} from '../../../src/ipam/index.js';

const NODES_A = '10.49.27.0/24';
const NODES_B = '10.173.13.0/24';

/** The spec's worked example (Appendix C), plus an IPv6 entry for NODES_A (dual stack). */
const config = parsePoolConfig([
  {
    routableSubnet: NODES_A,
    ips: ['10.49.27.205', '10.49.27.216~10.49.27.218'],
    subnet: '10.49.27.0/24',
    gateway: '10.49.27.1',
    vlan: 2,
  },
  {
    nodeSubnets: [NODES_B],
    ips: ['10.173.13.2~10.173.13.10'],
    subnet: '10.173.13.0/24',
    gateway: '10.173.13.1',
  },
  {
    nodeSubnets: [NODES_A],
    ips: ['fd00:27::10~fd00:27::ffff'],
    subnet: 'fd00:27::/64',
    gateway: 'fd00:27::1',
  },
]);

const attrs = (nodeName = 'node3', podUid = 'u1', policy = ReleasePolicy.Immutable): Attrs => ({
  policy,
  nodeName,
  podUid,
});
const parked: Attrs = { policy: ReleasePolicy.Never, nodeName: '', podUid: '' };

function setup(): { allocator: Allocator; tick: (ms?: number) => void } {
  let now = Date.UTC(2026, 0, 1);
  const allocator = new Allocator(config, { clock: () => now });
  return { allocator, tick: (ms = 1000) => (now += ms) };
}

const group = (...ranges: string[]): RangeGroup => ranges.map(parseRange);
const ips = (allocations: { ip: string }[]) => allocations.map((a) => a.ip);

describe('allocate', () => {
  test('gives the lowest free address of each family serving the node subnet (dual stack)', () => {
    const { allocator } = setup();
    const got = allocator.allocate({ key: 'sts_ns1_web_web-0', nodeSubnet: NODES_A, attrs: attrs() });
    expect(ips(got)).toEqual(['10.49.27.205', 'fd00:27::10']);
    expect(got[0]).toMatchObject({
      key: 'sts_ns1_web_web-0',
      nodeName: 'node3',
      podUid: 'u1',
      policy: 1,
      reserved: false,
    });
    expect(ips(allocator.allocate({ key: 'k2', nodeSubnet: NODES_A, attrs: attrs() }))).toEqual([
      '10.49.27.216',
      'fd00:27::11',
    ]);
  });

  test('a single-family node subnet gives one address; families can be asked for', () => {
    const { allocator } = setup();
    expect(ips(allocator.allocate({ key: 'a', nodeSubnet: NODES_B, attrs: attrs() }))).toEqual([
      '10.173.13.2',
    ]);
    expect(ips(allocator.allocate({ key: 'b', nodeSubnet: NODES_A, attrs: attrs(), families: [6] }))).toEqual(
      ['fd00:27::10'],
    );
  });

  test('is all or nothing: an exhausted family fails the request and takes nothing', () => {
    const { allocator } = setup();
    for (let i = 0; i < 4; i++)
      allocator.allocate({ key: `k${i}`, nodeSubnet: NODES_A, attrs: attrs(), families: [4] });
    expect(() => allocator.allocate({ key: 'late', nodeSubnet: NODES_A, attrs: attrs() })).toThrow(
      NoFreeIPError,
    );
    expect(() => allocator.allocate({ key: 'late', nodeSubnet: NODES_A, attrs: attrs() })).toThrow(
      'no enough available ips left: no free IPv4 address for late in node subnet 10.49.27.0/24',
    );
    expect(allocator.byKey('late')).toEqual([]);
    expect(allocator.stats()[2]!.allocated).toBe(0);
  });

  test('a node subnet no entry serves is an error naming it', () => {
    const { allocator } = setup();
    expect(() => allocator.allocate({ key: 'k', nodeSubnet: '192.168.0.0/16', attrs: attrs() })).toThrow(
      'no configured entry serves it for k in node subnet 192.168.0.0/16',
    );
  });

  test('a released address is handed out again, lowest first', () => {
    const { allocator } = setup();
    for (let i = 0; i < 3; i++) allocator.allocate({ key: `k${i}`, nodeSubnet: NODES_B, attrs: attrs() });
    allocator.release('10.173.13.3', { key: 'k1' });
    expect(ips(allocator.allocate({ key: 'k9', nodeSubnet: NODES_B, attrs: attrs() }))).toEqual([
      '10.173.13.3',
    ]);
  });
});

describe('allocate with request_ip_range groups', () => {
  test('one address per group, in group order', () => {
    const { allocator } = setup();
    const got = allocator.allocate({
      key: 'k',
      nodeSubnet: NODES_B,
      attrs: attrs(),
      groups: [group('10.173.13.8~10.173.13.10'), group('10.173.13.2~10.173.13.3')],
    });
    expect(ips(got)).toEqual(['10.173.13.8', '10.173.13.2']);
  });

  test('overlapping groups get distinct addresses where galaxy fails: [["a~b"],["a"]]', () => {
    const { allocator } = setup();
    const got = allocator.allocate({
      key: 'k',
      nodeSubnet: NODES_B,
      attrs: attrs(),
      groups: [group('10.173.13.2~10.173.13.4'), group('10.173.13.2')],
    });
    expect(ips(got)).toEqual(['10.173.13.3', '10.173.13.2']);
  });

  test('identical groups get distinct addresses, or fail when there are not enough', () => {
    const { allocator } = setup();
    const same = group('10.173.13.5~10.173.13.6');
    expect(
      ips(allocator.allocate({ key: 'k', nodeSubnet: NODES_B, attrs: attrs(), groups: [same, same] })),
    ).toEqual(['10.173.13.5', '10.173.13.6']);
    expect(() =>
      allocator.allocate({
        key: 'k2',
        nodeSubnet: NODES_B,
        attrs: attrs(),
        groups: [group('10.173.13.7'), group('10.173.13.7')],
      }),
    ).toThrow(/no free address in request_ip_range group 1 \[10\.173\.13\.7\] for k2/);
    expect(allocator.get('10.173.13.7')).toBeUndefined();
  });

  test('groups only draw from entries serving the node subnet', () => {
    const { allocator } = setup();
    expect(() =>
      allocator.allocate({
        key: 'k',
        nodeSubnet: NODES_A,
        attrs: attrs(),
        groups: [group('10.173.13.2~10.173.13.10')],
      }),
    ).toThrow(NoFreeIPError);
  });

  test('an IPv4 and an IPv6 group give one of each', () => {
    const { allocator } = setup();
    const got = allocator.allocate({
      key: 'k',
      nodeSubnet: NODES_A,
      attrs: attrs(),
      groups: [group('10.49.27.216~10.49.27.218'), group('fd00:27::100~fd00:27::200')],
    });
    expect(ips(got)).toEqual(['10.49.27.216', 'fd00:27::100']);
  });
});

describe('specific addresses, parking and re-keying', () => {
  test('allocateIP takes exactly that address, once', () => {
    const { allocator } = setup();
    expect(allocator.allocateIP('10.49.27.217', 'k', attrs()).ip).toBe('10.49.27.217');
    expect(() => allocator.allocateIP('10.49.27.217', 'other', attrs())).toThrow(AlreadyAllocatedError);
    expect(() => allocator.allocateIP('10.49.27.217', 'other', attrs())).toThrow(
      '10.49.27.217 already been allocated to k',
    );
    expect(() => allocator.allocateIP('10.49.27.219', 'k', attrs())).toThrow(NotInConfigError);
    expect(allocator.allocateIP('FD00:27::0010', 'k', attrs()).ip).toBe('fd00:27::10');
  });

  test('unpark takes the most recently parked address serving the node subnet', () => {
    const { allocator, tick } = setup();
    const prefix = 'dp_ns1_app_';
    for (const pod of ['app-1', 'app-2', 'app-3']) {
      const [a] = allocator.allocate({
        key: `${prefix}${pod}`,
        nodeSubnet: NODES_B,
        attrs: attrs(),
        families: [4],
      });
      tick();
      allocator.rekey(a!.ip, { key: `${prefix}${pod}` }, prefix, parked);
    }
    // parked in order .2, .3, .4: the last parked (.4) comes back first
    tick();
    const back = allocator.unpark(
      prefix,
      `${prefix}app-9`,
      NODES_B,
      attrs('node4', 'u9', ReleasePolicy.Never),
    );
    expect(back).toMatchObject({ ip: '10.173.13.4', key: `${prefix}app-9`, nodeName: 'node4', podUid: 'u9' });
    expect(
      allocator
        .byKey(prefix)
        .map((a) => a.ip)
        .sort(),
    ).toEqual(['10.173.13.2', '10.173.13.3']);
    expect(() => allocator.unpark(prefix, 'x', NODES_A, attrs())).toThrow(NoParkedIPError);
    expect(() => allocator.unpark(prefix, 'x', NODES_A, attrs())).toThrow(
      'failed to find floatIP by key dp_ns1_app_ in node subnet 10.49.27.0/24',
    );
  });

  test('chooseParked says what unpark would take, changes nothing, and can skip addresses', () => {
    const { allocator, tick } = setup();
    allocator.allocateIP('10.173.13.2', 'dp_ns1_app_', parked);
    tick();
    allocator.allocateIP('10.173.13.3', 'dp_ns1_app_', parked);
    expect(allocator.chooseParked('dp_ns1_app_', NODES_B)?.ip).toBe('10.173.13.3');
    expect(allocator.chooseParked('dp_ns1_app_', NODES_B, { skip: (ip) => ip === '10.173.13.3' })?.ip).toBe(
      '10.173.13.2',
    );
    expect(allocator.chooseParked('dp_ns1_app_', NODES_B, { family: 6 })).toBeUndefined();
    expect(allocator.byKey('dp_ns1_app_')).toHaveLength(2);
  });

  test('unpark never hands out a reserved address, even under a pool-shaped key', () => {
    const { allocator } = setup();
    allocator.allocateIP('10.173.13.9', 'pool__reserved-for-node_', parked, { reserved: true });
    expect(() => allocator.unpark('pool__reserved-for-node_', 'k', NODES_B, attrs())).toThrow(
      NoParkedIPError,
    );
  });

  test('planChange and checkOwner validate like rekey and release, and change nothing', () => {
    const { allocator, tick } = setup();
    const [a] = allocator.allocate({ key: 'k1', nodeSubnet: NODES_B, attrs: attrs() });
    tick();
    const planned = allocator.planChange(a!.ip, { key: 'k1' }, 'dp_ns1_app_', parked);
    expect(planned).toMatchObject({ ip: a!.ip, key: 'dp_ns1_app_', nodeName: '', podUid: '', policy: 2 });
    expect(planned.updateTime).toBeGreaterThan(a!.updateTime);
    expect(allocator.get(a!.ip)).toBe(a);
    expect(() => allocator.planChange(a!.ip, { key: 'k0' }, 'x', parked)).toThrow(OwnerConflictError);
    expect(allocator.checkOwner(a!.ip, { key: 'k1', podUid: 'u1' })).toBe(a);
    expect(() => allocator.checkOwner(a!.ip, { key: 'k1', podUid: 'u2' })).toThrow(OwnerConflictError);
    allocator.load(planned);
    expect(allocator.byKey('dp_ns1_app_')).toMatchObject([{ ip: a!.ip, updateTime: planned.updateTime }]);
  });

  test('rekey and update refuse when the address changed hands', () => {
    const { allocator } = setup();
    const [a] = allocator.allocate({ key: 'k1', nodeSubnet: NODES_B, attrs: attrs() });
    expect(() => allocator.rekey(a!.ip, { key: 'k0' }, 'x', parked)).toThrow(OwnerConflictError);
    expect(() => allocator.update(a!.ip, { key: 'k1', podUid: 'other' }, attrs())).toThrow(
      '10.173.13.2 is held by k1 (pod uid u1), not k1 (pod uid other)',
    );
    const updated = allocator.update(a!.ip, { key: 'k1', podUid: 'u1' }, attrs('node9', 'u2'));
    expect(updated).toMatchObject({ key: 'k1', nodeName: 'node9', podUid: 'u2' });
    expect(allocator.get(a!.ip)).toBe(updated);
  });
});

describe('release', () => {
  test('frees the address when the owner is as expected', () => {
    const { allocator } = setup();
    const [a] = allocator.allocate({ key: 'k', nodeSubnet: NODES_B, attrs: attrs() });
    expect(allocator.release(a!.ip, { key: 'k', podUid: 'u1' })).toMatchObject({ ip: a!.ip, key: 'k' });
    expect(allocator.get(a!.ip)).toBeUndefined();
    expect(allocator.byKey('k')).toEqual([]);
  });

  test('refuses an address that now belongs to someone else, and leaves it alone', () => {
    const { allocator } = setup();
    const [a] = allocator.allocate({ key: 'k', nodeSubnet: NODES_B, attrs: attrs() });
    allocator.release(a!.ip, { key: 'k' });
    allocator.allocate({ key: 'newcomer', nodeSubnet: NODES_B, attrs: attrs('n', 'u2') });
    expect(() => allocator.release(a!.ip, { key: 'k' })).toThrow(OwnerConflictError);
    expect(() => allocator.release(a!.ip, { key: 'newcomer', podUid: 'u1' })).toThrow(OwnerConflictError);
    expect(allocator.get(a!.ip)?.key).toBe('newcomer');
  });

  test('refuses a free address and a reserved one', () => {
    const { allocator } = setup();
    expect(() => allocator.release('10.173.13.2', { key: 'k' })).toThrow(NotAllocatedError);
    allocator.allocateIP('10.173.13.3', 'pool__ops_', parked, { reserved: true });
    expect(() => allocator.release('10.173.13.3', { key: 'pool__ops_' })).toThrow(ReservedIPError);
    expect(allocator.get('10.173.13.3')?.reserved).toBe(true);
  });
});

describe('lookups', () => {
  function populated(): Allocator {
    const { allocator } = setup();
    for (const key of [
      'sts_ns1_web_web-1',
      'sts_ns1_web_web-10',
      'sts_ns1_web_web-2',
      'dp_ns1_app_',
      'pool__p1_dp_ns2_a_a-x',
    ]) {
      allocator.allocate({ key, nodeSubnet: NODES_B, attrs: attrs() });
    }
    allocator.allocate({ key: 'sts_ns1_web_web-1', nodeSubnet: NODES_A, attrs: attrs() });
    return allocator;
  }
  const keys = (list: { key: string }[]) => list.map((a) => a.key).sort();

  test('by key gives every address of the key', () => {
    expect(populated().byKey('sts_ns1_web_web-1')).toHaveLength(3);
  });

  test('by prefix: an app, part of a pod name, a pool, everything', () => {
    const allocator = populated();
    expect(keys(allocator.byPrefix('sts_ns1_web_')).length).toBe(5);
    expect(keys(allocator.byPrefix('sts_ns1_web_web-1'))).toEqual([
      'sts_ns1_web_web-1',
      'sts_ns1_web_web-1',
      'sts_ns1_web_web-1',
      'sts_ns1_web_web-10',
    ]);
    expect(keys(allocator.byPrefix('pool__p1_'))).toEqual(['pool__p1_dp_ns2_a_a-x']);
    expect(keys(allocator.byPrefix('dp_'))).toEqual(['dp_ns1_app_']);
    expect(allocator.byPrefix('')).toHaveLength(allocator.size);
    expect(allocator.countByPrefix('sts_')).toBe(5);
    expect(allocator.byPrefix('nothing_')).toEqual([]);
  });

  test('counting keys by prefix counts pods, not addresses', () => {
    const allocator = populated();
    expect(allocator.countKeysByPrefix('sts_ns1_web_')).toBe(3);
    expect(allocator.countByPrefix('sts_ns1_web_')).toBe(5);
    expect(allocator.countKeysByPrefix('sts_ns1_web_web-1')).toBe(2);
    expect(allocator.countKeysByPrefix('')).toBe(5);
  });

  test('by keyword is a case-sensitive substring match on keys', () => {
    const allocator = populated();
    expect(keys(allocator.byKeyword('web-1'))).toEqual([
      'sts_ns1_web_web-1',
      'sts_ns1_web_web-1',
      'sts_ns1_web_web-1',
      'sts_ns1_web_web-10',
    ]);
    expect(allocator.byKeyword('WEB')).toEqual([]);
  });

  test('get accepts any textual form of the address', () => {
    const allocator = populated();
    expect(allocator.get('fd00:27:0:0::10')?.key).toBe('sts_ns1_web_web-1');
  });
});

describe('matchHeld and nodeSubnetsFor', () => {
  test('held addresses are matched to groups distinctly', () => {
    const { allocator } = setup();
    allocator.allocateIP('10.173.13.2', 'k', attrs());
    const g = group('10.173.13.2~10.173.13.5');
    expect(allocator.matchHeld('k', [g, g]).map((a) => a?.ip)).toEqual(['10.173.13.2', undefined]);
    allocator.allocateIP('10.173.13.4', 'k', attrs());
    expect(allocator.matchHeld('k', [group('10.173.13.2'), g]).map((a) => a?.ip)).toEqual([
      '10.173.13.2',
      '10.173.13.4',
    ]);
  });

  test('a held address below, above or of another family than every range of a group satisfies none', () => {
    const { allocator } = setup();
    for (const ip of ['10.173.13.2', '10.173.13.9', 'fd00:27::10']) allocator.allocateIP(ip, 'k', attrs());
    const g = group('10.173.13.4~10.173.13.6');
    expect(allocator.matchHeld('k', [g])).toEqual([undefined]);
    allocator.allocateIP('10.173.13.6', 'k', attrs());
    expect(allocator.matchHeld('k', [g]).map((a) => a?.ip)).toEqual(['10.173.13.6']);
  });

  test('an IPv6 address whose number is inside an IPv4 group (::10.0.0.5 and 10.0.0.5) satisfies none', () => {
    const allocator = new Allocator(
      parsePoolConfig([
        { nodeSubnets: [NODES_A], subnet: '::/96', gateway: '::1', ips: ['::10.0.0.5'] },
        { nodeSubnets: [NODES_A], subnet: '10.0.0.0/24', gateway: '10.0.0.1', ips: ['10.0.0.5'] },
      ]),
    );
    allocator.allocateIP('::10.0.0.5', 'k', attrs());
    expect(allocator.matchHeld('k', [group('10.0.0.5')])).toEqual([undefined]);
    allocator.allocateIP('10.0.0.5', 'k', attrs());
    expect(allocator.matchHeld('k', [group('10.0.0.5')]).map((a) => a?.ip)).toEqual(['10.0.0.5']);
  });

  test('node subnets that can still serve: any family exhausted removes a dual-stack subnet', () => {
    const { allocator } = setup();
    expect(allocator.nodeSubnetsFor()).toEqual(new Set([NODES_A, NODES_B]));
    for (let i = 0; i < 4; i++)
      allocator.allocate({ key: `k${i}`, nodeSubnet: NODES_A, attrs: attrs(), families: [4] });
    expect(allocator.nodeSubnetsFor()).toEqual(new Set([NODES_B]));
    expect(allocator.nodeSubnetsFor([], [6])).toEqual(new Set([NODES_A]));
  });

  test('with groups, a subnet counts only if every group can get a distinct address', () => {
    const { allocator } = setup();
    const one = group('10.173.13.7');
    expect(allocator.nodeSubnetsFor([one])).toEqual(new Set([NODES_B]));
    expect(allocator.nodeSubnetsFor([one, one])).toEqual(new Set());
    expect(allocator.nodeSubnetsFor([group('10.49.27.205', '10.173.13.2')])).toEqual(
      new Set([NODES_A, NODES_B]),
    );
  });
});

test('networkOf gives what a pod needs to configure an address', () => {
  const { allocator } = setup();
  expect(allocator.networkOf('10.49.27.216')).toEqual({
    entry: 0,
    family: 4,
    prefix: 24,
    gateway: '10.49.27.1',
    vlan: 2,
  });
  expect(allocator.networkOf('fd00:27::10')).toEqual({
    entry: 2,
    family: 6,
    prefix: 64,
    gateway: 'fd00:27::1',
    vlan: 0,
  });
  expect(allocator.networkOf('10.49.27.219')).toBeUndefined();
});

test('what serves what: node subnets of an address, families and free room of a node subnet', () => {
  const { allocator } = setup();
  expect(allocator.nodeSubnetsServing('10.49.27.205')).toEqual([NODES_A]);
  expect(allocator.nodeSubnetsServing('10.1.1.1')).toEqual([]);
  expect(allocator.familiesServing(NODES_A)).toEqual([4, 6]);
  expect(allocator.familiesServing('1.2.3.0/24')).toEqual([]);
  // NODES_A: 4 IPv4 and 65,520 IPv6 addresses: a pod needs one of each
  expect(allocator.freeFor(NODES_A)).toBe(4n);
  allocator.allocate({ key: 'k', nodeSubnet: NODES_A, attrs: attrs() });
  expect(allocator.freeFor(NODES_A)).toBe(3n);
  expect(allocator.freeFor(NODES_B)).toBe(9n);
  expect(allocator.freeFor('1.2.3.0/24')).toBe(0n);
});

describe('statistics', () => {
  test('per entry: total, allocated, reserved, free; counts follow every change', () => {
    const { allocator } = setup();
    allocator.allocate({ key: 'a', nodeSubnet: NODES_A, attrs: attrs() });
    allocator.allocateIP('10.49.27.218', 'pool__ops_', parked, { reserved: true });
    const [v4a, v4b, v6] = allocator.stats();
    expect(v4a).toEqual({
      entry: 0,
      family: 4,
      subnet: '10.49.27.0/24',
      firstIP: '10.49.27.205',
      total: 4n,
      allocated: 2,
      reserved: 1,
      excluded: 0,
      free: 2n,
    });
    expect(v4b).toMatchObject({ entry: 1, total: 9n, allocated: 0, free: 9n });
    expect(v6).toMatchObject({ entry: 2, family: 6, total: 0xfff0n, allocated: 1, free: 0xffefn });
    allocator.release('10.49.27.205', { key: 'a' });
    expect(allocator.stats()[0]).toMatchObject({ allocated: 1, free: 3n });
  });
});

describe('addresses no pod may get, whatever the ranges say', () => {
  const entry = (subnet: string, gateway: string, ips: string[]) =>
    new Allocator(parsePoolConfig([{ nodeSubnets: [NODES_A], subnet, gateway, ips }]));
  const take = (allocator: Allocator, n: number) =>
    Array.from({ length: n }, (_, i) => {
      try {
        return allocator.allocate({ key: `k${i}`, nodeSubnet: NODES_A, attrs: attrs() })[0]!.ip;
      } catch (err) {
        return (err as Error).constructor.name;
      }
    });

  test('a /8 written as one range: neither the network address nor the gateway (the issue’s config)', () => {
    const allocator = entry('10.0.0.0/8', '10.0.0.1', ['10.0.0.0~10.255.255.255']);
    expect(take(allocator, 2)).toEqual(['10.0.0.2', '10.0.0.3']);
    expect(allocator.stats()[0]).toMatchObject({ total: 2n ** 24n, excluded: 3, allocated: 2 });
    expect(allocator.stats()[0]!.free).toBe(2n ** 24n - 5n);
  });

  test('the IPv4 broadcast address is never handed out; the last range runs dry before it', () => {
    const allocator = entry('10.0.0.0/24', '10.0.0.1', ['10.0.0.253~10.0.0.255']);
    expect(take(allocator, 3)).toEqual(['10.0.0.253', '10.0.0.254', 'NoFreeIPError']);
    expect(allocator.nodeSubnetsFor().has(NODES_A)).toBe(false);
    expect(allocator.freeFor(NODES_A)).toBe(0n);
  });

  test('a gateway inside the range is skipped, and so by request_ip_range groups', () => {
    const allocator = entry('10.0.0.0/24', '10.0.0.5', ['10.0.0.4~10.0.0.6']);
    const got = allocator.allocate({
      key: 'g',
      nodeSubnet: NODES_A,
      attrs: attrs(),
      groups: [group('10.0.0.5~10.0.0.6'), group('10.0.0.4~10.0.0.5')],
    });
    expect(ips(got)).toEqual(['10.0.0.6', '10.0.0.4']);
    expect(() =>
      allocator.allocate({ key: 'h', nodeSubnet: NODES_A, attrs: attrs(), groups: [group('10.0.0.5')] }),
    ).toThrow(NoFreeIPError);
    expect(allocator.nodeSubnetsFor([group('10.0.0.5')]).size).toBe(0);
  });

  test('IPv6: the subnet-router anycast address (all host bits zero) and the gateway', () => {
    const allocator = entry('fd00::/64', 'fd00::1', ['fd00::~fd00::3']);
    expect(take(allocator, 3)).toEqual(['fd00::2', 'fd00::3', 'NoFreeIPError']);
    expect(allocator.stats()[0]).toMatchObject({ excluded: 2, free: 0n });
  });

  test('point-to-point prefixes have no network or broadcast address: only the gateway is kept out', () => {
    expect(take(entry('10.0.0.0/31', '10.0.0.0', ['10.0.0.0~10.0.0.1']), 2)).toEqual([
      '10.0.0.1',
      'NoFreeIPError',
    ]);
    expect(take(entry('fd00::/127', 'fd00::1', ['fd00::~fd00::1']), 2)).toEqual(['fd00::', 'NoFreeIPError']);
    expect(take(entry('10.0.0.4/32', '10.0.0.4', ['10.0.0.4']), 1)).toEqual(['NoFreeIPError']);
  });

  test('an allocation of one (written by galaxy) is kept, listed, counted, and its release does not free it', () => {
    const allocator = entry('10.0.0.0/24', '10.0.0.1', ['10.0.0.0~10.0.0.3']);
    const held = (ip: string) => ({
      ip,
      key: `sts_ns_web_web-${ip.slice(-1)}`,
      policy: ReleasePolicy.Immutable,
      nodeName: 'node3',
      podUid: 'u1',
      updateTime: 1,
      reserved: false,
    });
    expect(allocator.restore([held('10.0.0.1'), held('10.0.0.2')]).rejected).toEqual([]);
    expect(allocator.excludedInUse()).toEqual([
      { allocation: expect.objectContaining({ ip: '10.0.0.1' }), entry: 0, why: 'gateway' },
    ]);
    expect(allocator.stats()[0]).toMatchObject({ allocated: 2, excluded: 2, free: 1n });
    expect(take(allocator, 2)).toEqual(['10.0.0.3', 'NoFreeIPError']);
    allocator.release('10.0.0.1', { key: 'sts_ns_web_web-1' });
    expect(allocator.excludedInUse()).toEqual([]);
    expect(allocator.stats()[0]).toMatchObject({ allocated: 2, free: 0n });
    expect(take(allocator, 1)).toEqual(['NoFreeIPError']);
    // a running pod's annotation naming one is recorded as it is (adoption), never handed to another
    expect(allocator.allocateIP('10.0.0.0', 'sts_ns_web_web-0', attrs()).ip).toBe('10.0.0.0');
    expect(allocator.excludedInUse().map((x) => [x.allocation.ip, x.why])).toEqual([
      ['10.0.0.0', 'network address'],
    ]);
  });
});

describe('restore and reconfigure', () => {
  const record = (ip: string, key: string, extra: Partial<{ reserved: boolean; policy: number }> = {}) => ({
    ip,
    key,
    policy: (extra.policy ?? 1) as ReleasePolicy,
    nodeName: 'node3',
    podUid: 'u1',
    updateTime: 1_700_000_000_000,
    reserved: extra.reserved ?? false,
  });

  test('restore loads records, keeps those outside the config as orphans, rejects bad ones', () => {
    const { allocator } = setup();
    const report = allocator.restore([
      record('10.49.27.216', 'sts_ns1_web_web-0'),
      record('10.49.27.217', 'pool__ops_', { reserved: true }),
      record('10.99.0.1', 'sts_ns1_web_web-1'),
      record('10.49.27.216', 'dp_ns1_x_x-1'),
      record('not-an-ip', 'k'),
      record('10.49.27.218', 'k', { policy: 7 }),
    ]);
    expect(report.loaded).toBe(3);
    expect(report.orphaned.map((a) => a.ip)).toEqual(['10.99.0.1']);
    expect(report.rejected.map((r) => r.reason)).toEqual([
      '10.49.27.216 already been allocated to sts_ns1_web_web-0',
      'invalid IP address: "not-an-ip"',
      'invalid release policy for 10.49.27.218: "7"',
    ]);
    // restored addresses are taken: allocation skips them
    expect(ips(allocator.allocate({ key: 'n', nodeSubnet: NODES_A, attrs: attrs(), families: [4] }))).toEqual(
      ['10.49.27.205'],
    );
    expect(
      ips(allocator.allocate({ key: 'n2', nodeSubnet: NODES_A, attrs: attrs(), families: [4] })),
    ).toEqual(['10.49.27.218']);
    expect(allocator.orphanedCount).toBe(1);
  });

  test('reconfigure keeps and reports allocations outside the new config, and adopts them back', () => {
    const { allocator } = setup();
    allocator.allocateIP('10.173.13.5', 'k5', attrs());
    allocator.allocateIP('10.173.13.9', 'k9', attrs());
    const narrower = parsePoolConfig([
      {
        nodeSubnets: [NODES_B],
        ips: ['10.173.13.2~10.173.13.6'],
        subnet: '10.173.13.0/24',
        gateway: '10.173.13.1',
      },
    ]);
    const report = allocator.reconfigure(narrower);
    expect(report.orphaned.map((a) => a.ip)).toEqual(['10.173.13.9']);
    expect(allocator.get('10.173.13.9')?.key).toBe('k9');
    expect(allocator.orphaned().map((a) => a.ip)).toEqual(['10.173.13.9']);
    expect(allocator.stats()).toEqual([expect.objectContaining({ total: 5n, allocated: 1 })]);
    // an orphan can still be released by its owner
    expect(allocator.release('10.173.13.9', { key: 'k9' }).ip).toBe('10.173.13.9');
    allocator.allocateIP('10.173.13.6', 'k6', attrs());
    expect(allocator.reconfigure(config).orphaned).toEqual([]);
    expect(allocator.stats()[1]).toMatchObject({ allocated: 2 });
    expect(ips(allocator.allocate({ key: 'n', nodeSubnet: NODES_B, attrs: attrs() }))).toEqual([
      '10.173.13.2',
    ]);
  });

  test('every allocation carries its address family, however it was made, loaded or moved', () => {
    const { allocator } = setup();
    const families = (list: readonly { family: number }[]) => list.map((a) => a.family);
    expect(families(allocator.allocate({ key: 'a', nodeSubnet: NODES_A, attrs: attrs() }))).toEqual([4, 6]);
    const v6Group = group('fd00:27::100~fd00:27::1ff');
    expect(
      families(allocator.allocate({ key: 'g', nodeSubnet: NODES_A, attrs: attrs(), groups: [v6Group] })),
    ).toEqual([6]);
    expect(allocator.allocateIP('fd00:27::50', 'b', attrs()).family).toBe(6);
    expect(allocator.rekey('fd00:27::50', { key: 'b' }, 'pool__p_', parked).family).toBe(6);
    expect(allocator.unpark('pool__p_', 'c', NODES_A, attrs(), 6).family).toBe(6);
    // loaded from a record, which has no family: any textual form, orphans included
    expect(allocator.load(record('FD00:27:0::60', 'd')).family).toBe(6);
    expect(allocator.load(record('10.173.13.4', 'e')).family).toBe(4);
    const report = allocator.restore([record('fd00:99::1', 'orphan'), record('10.99.0.1', 'orphan4')]);
    expect(families(report.orphaned)).toEqual([6, 4]);
    // an IPv6 orphan is adopted back into the IPv6 entry once the configuration has it again
    allocator.reconfigure(parsePoolConfig([]));
    const fd = parsePoolConfig([
      {
        nodeSubnets: [NODES_A],
        ips: ['fd00:99::1~fd00:99::f'],
        subnet: 'fd00:99::/64',
        gateway: 'fd00:99::ff',
      },
    ]);
    expect(allocator.reconfigure(fd).orphaned.map((a) => a.ip)).toEqual(['10.99.0.1']);
    expect(allocator.stats()).toEqual([expect.objectContaining({ family: 6, allocated: 1 })]);
    expect(allocator.get('fd00:99::1')?.family).toBe(6);
  });

  test('load replaces memory with the persisted truth; unload forgets', () => {
    const { allocator } = setup();
    allocator.allocateIP('10.173.13.5', 'k5', attrs());
    allocator.load(record('10.173.13.5', 'someone-else'));
    expect(allocator.byKey('k5')).toEqual([]);
    expect(allocator.get('10.173.13.5')?.key).toBe('someone-else');
    expect(allocator.unload('10.173.13.5')?.key).toBe('someone-else');
    expect(allocator.unload('10.173.13.5')).toBeUndefined();
    expect(allocator.stats()[1]!.allocated).toBe(0);
  });
});
