// galaxy-ipam's unit tests of its configuration and node-subnet lookup
// (tkestack/galaxy: pkg/ipam/floatingip/{floatingip,ipam}_test.go, pkg/utils/nets/ip_test.go,
// pkg/utils/ips/ips_test.go), played against floatip's pure
// counterparts: parsePoolConfig / serializePoolEntry (galaxy's FloatingIP unmarshalling) and
// Allocator.nodeSubnetOf (galaxy's RoutableSubnet / NodeSubnet). Named after galaxy's tests.
import {
  Allocator,
  InvalidConfigError,
  parsePoolConfig,
  serializePoolEntry,
} from '../../../src/ipam/index.js';
import { ROUTABLE_POOLS } from '../../galaxy/test-config.js';

function problems(config: unknown): string[] {
  try {
    parsePoolConfig(config);
  } catch (err) {
    if (err instanceof InvalidConfigError) return err.problems.map((p) => p.message);
    throw err;
  }
  return [];
}

/** The node subnet floatip finds for a node IP; undefined where galaxy finds none. */
function nodeSubnet(allocator: Allocator, ip: string): string | undefined {
  try {
    return allocator.nodeSubnetOf([ip]);
  } catch {
    return undefined;
  }
}

describe('floatingip_test.go', () => {
  test('TestUnmarshalFloatingIP: a routableSubnet written with host bits is its network; ranges, gateway and vlan read as written', () => {
    const [entry] = parsePoolConfig([
      {
        routableSubnet: '10.173.14.1/24',
        ips: ['10.173.14.203', '10.173.14.206~10.173.14.208'],
        subnet: '10.173.14.0/24',
        gateway: '10.173.14.1',
        vlan: 2,
      },
    ]).entries;
    expect(serializePoolEntry(entry!)).toEqual({
      nodeSubnets: ['10.173.14.0/24'],
      ips: ['10.173.14.203', '10.173.14.206~10.173.14.208'],
      subnet: '10.173.14.0/24',
      gateway: '10.173.14.1',
      vlan: 2,
    });
  });

  // galaxy's test declares wrongStr (.205 next to .206~.208) but unmarshals confStr again, which
  // only fails there because it decodes into the already-filled struct: the scenario meant is
  // wrongStr's, refused by galaxy's validation (docs/galaxy.md#entries-and-validation: ranges must not be adjacent)
  test('TestUnmarshalFloatingIP: adjacent ranges (wrongStr) are refused with galaxy’s message', () => {
    expect(
      problems([
        {
          routableSubnet: '10.173.14.0/24',
          ips: ['10.173.14.205', '10.173.14.206~10.173.14.208'],
          subnet: '10.173.14.0/24',
          gateway: '10.173.14.1',
          vlan: 2,
        },
      ]),
    ).toEqual([
      expect.stringContaining(
        'ip range 10.173.14.205 and 10.173.14.206~10.173.14.208 can be merge to one or has wrong order',
      ),
    ]);
  });
});

describe('ipam_test.go', () => {
  test('TestRoutableSubnet: node IPs inside and outside galaxy’s routable subnets', () => {
    const allocator = new Allocator(parsePoolConfig([ROUTABLE_POOLS[0], ROUTABLE_POOLS[1]]));
    expect(
      Object.fromEntries(
        ['10.173.13.3', '10.173.13.254', '10.173.14.1', '10.49.26.254', '10.49.27.1'].map((ip) => [
          ip,
          nodeSubnet(allocator, ip),
        ]),
      ),
    ).toEqual({
      '10.173.13.3': '10.173.13.0/24',
      '10.173.13.254': '10.173.13.0/24',
      '10.173.14.1': undefined,
      '10.49.26.254': undefined,
      '10.49.27.1': '10.49.27.0/24',
    });
  });

  test('TestGetRoutableSubnet: a /22 routable subnet holds node IPs beyond its first /24, its pod subnet elsewhere', () => {
    const allocator = new Allocator(
      parsePoolConfig([
        {
          routableSubnet: '10.239.228.0/22',
          ips: [
            '10.239.238.3~10.239.238.6',
            '10.239.238.11',
            '10.239.238.26~10.239.238.61',
            '10.239.238.115~10.239.238.116',
            '10.239.238.164',
            '10.239.238.166',
            '10.239.238.207',
            '10.239.238.226',
            '10.239.238.236',
          ],
          subnet: '10.239.236.0/22',
          gateway: '10.239.236.1',
          vlan: 13,
        },
      ]),
    );
    expect(nodeSubnet(allocator, '10.239.229.142')).toBe('10.239.228.0/22');
    expect(nodeSubnet(allocator, '10.239.230.32')).toBe('10.239.228.0/22');
  });

  // galaxy sorts its pools by gateway, as numbers (docs/galaxy.md#configmap), and looks a node's IP up in that order
  // (docs/galaxy.md#node-subnet-of-a-node): 10.0.9.1 comes before 10.0.10.1, which text order would put first
  test('TestNodeSubnet: a node IP in two entries’ node subnets takes the one of the lower gateway, as numbers', () => {
    const allocator = new Allocator(
      parsePoolConfig([
        { nodeSubnets: ['10.49.0.0/16'], ips: ['10.0.10.2'], subnet: '10.0.10.0/24', gateway: '10.0.10.1' },
        { nodeSubnets: ['10.49.28.0/26'], ips: ['10.0.9.2'], subnet: '10.0.9.0/24', gateway: '10.0.9.1' },
      ]),
    );
    expect(nodeSubnet(allocator, '10.49.28.3')).toBe('10.49.28.0/26');
    expect(nodeSubnet(allocator, '10.49.29.3')).toBe('10.49.0.0/16');
  });
});

// galaxy's address parsers (pkg/utils/nets/ip_test.go, pkg/utils/ips/ips_test.go), as a ConfigMap
// entry reaches them: its `ips` through ParseIPRange, its subnets through ParseCIDR
describe('nets/ip_test.go, ips/ips_test.go', () => {
  const entry = (ips: string[], subnet = '192.168.0.0/16') => ({
    nodeSubnets: [subnet],
    ips,
    subnet,
    gateway: '192.168.0.1',
  });

  test('TestParseIPRange: `a~b` and a single address are ranges, read back as written', () => {
    const [parsed] = parsePoolConfig([entry(['192.168.0.0~192.168.1.2', '192.168.2.0'])]).entries;
    expect(serializePoolEntry(parsed!).ips).toEqual(['192.168.0.0~192.168.1.2', '192.168.2.0']);
  });

  test('TestParseIPRange: an end that is no address (192.168.0.256) refuses the entry, naming the range', () => {
    expect(problems([entry(['192.168.0.0~192.168.0.256'])])).toEqual([
      expect.stringContaining('invalid ip range 192.168.0.0~192.168.0.256'),
    ]);
  });

  test('TestParseCIDR: a subnet that is no CIDR (192.256.1.0/24) refuses the entry, in Go’s words', () => {
    // the entry names it twice, as its node subnet and as its subnet
    expect(problems([entry(['192.168.0.2'], '192.256.1.0/24')])).toEqual([
      expect.stringContaining('invalid CIDR address: "192.256.1.0/24"'),
      expect.stringContaining('invalid CIDR address: "192.256.1.0/24"'),
    ]);
  });
});
