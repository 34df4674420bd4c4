// galaxy-ipam's own test configuration (its pkg/ipam/utils TestConfig, as its unit tests use it),
// for the tests that play galaxy's unit-test scenarios against floatip. Written out from galaxy's
// tests, not copied: four entries by routableSubnet, then the nodeSubnets entries its
// request_ip_range and multi-subnet tests rely on (10.49.28.0/26 served from two pod subnets).

/** The four routableSubnet entries. */
export const ROUTABLE_POOLS = [
  {
    routableSubnet: '10.49.27.0/24',
    ips: ['10.49.27.205', '10.49.27.216~10.49.27.218'],
    subnet: '10.49.27.0/24',
    gateway: '10.49.27.1',
    vlan: 2,
  },
  {
    routableSubnet: '10.173.13.0/24',
    ips: ['10.173.13.2', '10.173.13.10~10.173.13.13', '10.173.13.15'],
    subnet: '10.173.13.0/24',
    gateway: '10.173.13.1',
    vlan: 2,
  },
  {
    routableSubnet: '10.180.1.2/32',
    ips: ['10.180.154.2~10.180.154.3'],
    subnet: '10.180.154.0/24',
    gateway: '10.180.154.1',
    vlan: 3,
  },
  {
    routableSubnet: '10.180.1.3/32',
    ips: ['10.180.154.7~10.180.154.8'],
    subnet: '10.180.154.0/24',
    gateway: '10.180.154.1',
    vlan: 3,
  },
] as const;

/** node5's and node6's pools: 10.49.28.0/26 can use 10.0.80.0/24 and 10.0.81.0/24, 10.49.29.0/24 only the first. */
export const RANGE_POOLS = [
  {
    nodeSubnets: ['10.49.28.0/26', '10.49.29.0/24'],
    ips: ['10.0.80.2~10.0.80.4'],
    subnet: '10.0.80.0/24',
    gateway: '10.0.80.1',
  },
  {
    nodeSubnets: ['10.49.28.0/26'],
    ips: ['10.0.81.2~10.0.81.4'],
    subnet: '10.0.81.0/24',
    gateway: '10.0.81.1',
    vlan: 3,
  },
] as const;
