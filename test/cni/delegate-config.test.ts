// The exact configuration floatip-cni hands each delegate: what the standard plugins configure is
// decided here. The vlan path runs for real only on a kernel with 802.1Q (errors.test.ts), so its
// configuration is held exactly here.
import { interfaceNames, planInterfaces } from '../../src/cni-plugin/delegate.js';
import { groupIPInfos } from '../../src/cni-plugin/ipinfo-checks.js';
import { parseNetworkConfig } from '../../src/cni-plugin/protocol.js';

const v4 = (n: number, vlan = 0) => ({ ip: `10.49.27.${n}/24`, vlan, gateway: '10.49.27.1' });
const v6 = (n: number, vlan = 0) => ({ ip: `2001:db8:27::${n}/64`, vlan, gateway: '2001:db8:27::1' });

test('the vlan delegate gets each ipinfo’s VLAN id, static IPAM with its addresses and both default routes', () => {
  const network = { name: 'underlay', delegate: { type: 'vlan', master: 'eth1', mtu: 1500 } };
  expect(planInterfaces(network, 'eth0', groupIPInfos([v4(205, 2), v6(205, 2)], false))).toEqual([
    {
      ifname: 'eth0',
      delegate: {
        cniVersion: '1.0.0',
        name: 'underlay',
        type: 'vlan',
        master: 'eth1',
        mtu: 1500,
        vlanId: 2,
        ipam: {
          type: 'static',
          addresses: [
            { address: '10.49.27.205/24', gateway: '10.49.27.1' },
            { address: '2001:db8:27::205/64', gateway: '2001:db8:27::1' },
          ],
          routes: [
            { dst: '0.0.0.0/0', gw: '10.49.27.1' },
            { dst: '::/0', gw: '2001:db8:27::1' },
          ],
        },
      },
    },
  ]);
});

test('ipinfos of two subnets of one family on one VLAN (galaxy’s daemon hands over groups unmarked): one interface, the first’s default route only', () => {
  const network = { name: 'underlay', delegate: { type: 'macvlan', master: 'eth1' } };
  const other = { ip: '10.49.28.7/24', vlan: 0, gateway: '10.49.28.1' };
  const [planned, ...more] = planInterfaces(network, 'eth0', groupIPInfos([v4(205), other, v6(205)], false));
  expect(more).toEqual([]);
  expect(planned!.delegate.ipam).toEqual({
    type: 'static',
    addresses: [
      { address: '10.49.27.205/24', gateway: '10.49.27.1' },
      { address: '10.49.28.7/24', gateway: '10.49.28.1' },
      { address: '2001:db8:27::205/64', gateway: '2001:db8:27::1' },
    ],
    routes: [
      { dst: '0.0.0.0/0', gw: '10.49.27.1' },
      { dst: '::/0', gw: '2001:db8:27::1' },
    ],
  });
});

test('request_ip_range groups: one interface per ipinfo, each its own VLAN, default routes on the first only', () => {
  const network = { name: 'underlay', delegate: { type: 'vlan', master: 'bond0' } };
  const planned = planInterfaces(network, 'eth0', groupIPInfos([v4(10, 2), v4(11, 3), v4(12, 0)], true));
  expect(planned.map((p) => [p.ifname, p.delegate.type, p.delegate.vlanId, p.delegate.ipam])).toEqual([
    [
      'eth0',
      'vlan',
      2,
      {
        type: 'static',
        addresses: [{ address: '10.49.27.10/24', gateway: '10.49.27.1' }],
        routes: [{ dst: '0.0.0.0/0', gw: '10.49.27.1' }],
      },
    ],
    [
      'eth1',
      'vlan',
      3,
      { type: 'static', addresses: [{ address: '10.49.27.11/24', gateway: '10.49.27.1' }] },
    ],
    // VLAN 0 is untagged: the pod sits on the master itself, through macvlan
    [
      'eth2',
      'macvlan',
      undefined,
      { type: 'static', addresses: [{ address: '10.49.27.12/24', gateway: '10.49.27.1' }] },
    ],
  ]);
  expect(planned[2]!.delegate).toMatchObject({ master: 'bond0', mode: 'bridge' });
});

test('each delegate’s own way of saying a VLAN: the node’s VLAN interface for macvlan and ipvlan, vlan for bridge', () => {
  const plan = (delegate: { type: string } & Record<string, unknown>) =>
    planInterfaces({ name: 'n', delegate }, 'eth0', [[v4(1, 7)]])[0]!.delegate;
  expect(plan({ type: 'macvlan', master: 'eth1', mode: 'bridge' })).toMatchObject({
    master: 'eth1.7',
    mode: 'bridge',
  });
  expect(plan({ type: 'ipvlan', master: 'eth1' })).toMatchObject({ master: 'eth1.7' });
  expect(plan({ type: 'bridge', bridge: 'br0' })).toMatchObject({ bridge: 'br0', vlan: 7 });
  expect(() => plan({ type: 'ptp' })).toThrow(
    'VLAN 7: delegate ptp has no VLAN setting floatip-cni knows (vlan, macvlan, ipvlan, bridge do)',
  );
});

test('interface names follow the runtime’s first one', () => {
  expect(interfaceNames('eth0', 3)).toEqual(['eth0', 'eth1', 'eth2']);
  expect(interfaceNames('net1', 2)).toEqual(['net1', 'net2']);
  expect(interfaceNames('pod', 2)).toEqual(['pod', 'pod1']);
});

test('an ipinfo that is not an address, a gateway of another family or a VLAN out of range is refused', () => {
  for (const bad of [
    { ip: '10.0.0.1', vlan: 0, gateway: '10.0.0.254' },
    { ip: '10.0.0.1/33', vlan: 0, gateway: '' },
    { ip: '10.0.0.1/24', vlan: 0, gateway: '2001:db8::1' },
    { ip: '10.0.0.1/24', vlan: 4095, gateway: '' },
    { ip: 'fe80::5%eth0/64', vlan: 0, gateway: '' },
    { ip: '2001:db8::5/64', vlan: 0, gateway: 'fe80::1%eth1' },
  ]) {
    expect(() => groupIPInfos([bad], false)).toThrow(
      `ipinfo ${JSON.stringify(bad)} is not an address/prefix`,
    );
  }
});

test.each([
  ['vlanId', { type: 'vlan', master: 'eth1', vlanId: 9 }],
  ['vlan', { type: 'bridge', bridge: 'br0', vlan: 7 }],
])(
  'a VLAN in the operator’s delegate (%s) is refused (code 2): the VLAN is the pod’s (vlan at VLAN 0 dropped it, bridge put a VLAN-0 pod on it)',
  (field, delegate) => {
    const stdin = JSON.stringify({ cniVersion: '1.0.0', name: 'underlay', type: 'floatip-cni', delegate });
    expect(() => parseNetworkConfig(stdin, 'ADD')).toThrow(
      expect.objectContaining({
        code: 2,
        message: `delegate.${field}: floatip-cni sets the VLAN of each pod interface from the pod's ipinfos`,
      }),
    );
  },
);

test('a delegate’s other fields of those names are its own: macvlan’s and ipvlan’s have no VLAN field', () => {
  const stdin = JSON.stringify({
    cniVersion: '1.0.0',
    name: 'underlay',
    type: 'floatip-cni',
    delegate: { type: 'macvlan', master: 'eth1', vlan: 3 },
  });
  expect(parseNetworkConfig(stdin, 'ADD').delegate).toEqual({ type: 'macvlan', master: 'eth1', vlan: 3 });
});
