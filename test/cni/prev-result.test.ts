// CHECK's comparison of what ADD added with the runtime's prevResult.
import { missingFromPrevResult } from '../../src/cni-plugin/prev-result.js';
import type { Result } from '../../src/cni-plugin/protocol.js';

const sandbox = '/var/run/netns/pod0';
const added: Result = {
  cniVersion: '1.0.0',
  interfaces: [{ name: 'eth0', mac: '0a:58:0a:00:00:0a', sandbox }],
  ips: [
    { interface: 0, address: '198.51.100.10/24', gateway: '198.51.100.1' },
    { interface: 0, address: '2001:db8::10/64', gateway: '2001:db8::1' },
  ],
};

test('what ADD returned, as the runtime kept it, lacks nothing (any case, any MAC, any version)', () => {
  expect(missingFromPrevResult([added], added)).toEqual([]);
  const kept: Result = {
    cniVersion: '0.4.0',
    interfaces: [{ name: 'eth0', mac: '0A:58:0A:00:00:FF', sandbox }],
    ips: [
      { version: '4', interface: 0, address: '198.51.100.10/24' },
      { version: '6', interface: 0, address: '2001:DB8::10/64' },
    ],
  };
  expect(missingFromPrevResult([added], kept)).toEqual([]);
});

test('in a chain, our interface after another plugin’s: indexes are read in each result', () => {
  const chained: Result = {
    cniVersion: '1.0.0',
    interfaces: [{ name: 'lo0', sandbox }, ...added.interfaces!],
    ips: [
      { interface: 0, address: '192.0.2.1/32' },
      { interface: 1, address: '198.51.100.10/24' },
      { interface: 1, address: '2001:db8::10/64' },
    ],
  };
  expect(missingFromPrevResult([added], chained)).toEqual([]);
  // the same address said to be on the other plugin's interface is not ours
  const elsewhere = { ...chained, ips: [{ interface: 0, address: '198.51.100.10/24' }, chained.ips![2]!] };
  expect(missingFromPrevResult([added], elsewhere)).toEqual(['address 198.51.100.10/24 on eth0']);
});

test('an address, an interface or a sandbox the runtime does not list is named', () => {
  expect(missingFromPrevResult([added], { ...added, ips: [added.ips![1]!] })).toEqual([
    'address 198.51.100.10/24 on eth0',
  ]);
  expect(
    missingFromPrevResult([added], {
      ...added,
      interfaces: [{ name: 'eth0', sandbox: '/var/run/netns/pod1' }],
    }),
  ).toEqual([`interface eth0 in ${sandbox}`]);
  expect(missingFromPrevResult([added], { cniVersion: '1.0.0' })).toEqual([
    `interface eth0 in ${sandbox}`,
    'address 198.51.100.10/24 on eth0',
    'address 2001:db8::10/64 on eth0',
  ]);
});
