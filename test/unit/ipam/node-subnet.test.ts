import { NodeSubnetError, NodeSubnetIndex, parsePoolConfig } from '../../../src/ipam/index.js';

const index = new NodeSubnetIndex(
  parsePoolConfig([
    {
      nodeSubnets: ['10.49.28.0/26', '10.49.29.0/24'],
      ips: ['10.0.80.2~10.0.80.4'],
      subnet: '10.0.80.0/24',
      gateway: '10.0.80.1',
    },
    { nodeSubnets: ['fd00:1::/64'], ips: ['fd00:100::5'], subnet: 'fd00:100::/64', gateway: 'fd00:100::1' },
    // a wider node subnet in a later entry (by gateway) loses to the narrower one listed first
    { nodeSubnets: ['10.49.0.0/16'], ips: ['10.0.90.2'], subnet: '10.0.90.0/24', gateway: '10.0.90.1' },
  ]),
);

const reason = (addresses: string[]): string => {
  try {
    return index.of(addresses);
  } catch (err) {
    expect(err).toBeInstanceOf(NodeSubnetError);
    return (err as NodeSubnetError).reason;
  }
};

test.each<[string[], string]>([
  // the spec's worked example (docs/galaxy.md#node-subnet-of-a-node)
  [['10.49.28.3'], '10.49.28.0/26'],
  [['10.49.29.3'], '10.49.29.0/24'],
  [['10.48.28.2'], 'FloatingIPPlugin:NoFIPConfigNode'],
  // first matching entry in gateway order
  [['10.49.28.100'], '10.49.0.0/16'],
  // IPv6 node addresses
  [['fd00:1::11'], 'fd00:1::/64'],
  // the node's first InternalIP decides when it matches, as galaxy
  [['10.49.29.3', 'fd00:1::11'], '10.49.29.0/24'],
  // ... and a later one is tried when the first matches nothing (galaxy would give up)
  [['10.48.0.1', 'fd00:1::11'], 'fd00:1::/64'],
  [[], 'FloatingIPPlugin:UnknowNode'],
  [['not-an-ip'], 'FloatingIPPlugin:UnknowNode'],
])('node %j -> %s', (addresses, expected) => {
  expect(reason(addresses)).toBe(expected);
});
