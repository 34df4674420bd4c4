// What following the objects does when one is deleted behind floatip's back, through settleGone
// alone (no API server: the watch is never started, and restore is recorded): kept for the holder
// the observer names, with a log line that says why, or freed.
import { KubeConfig } from '@kubernetes/client-node';
import { type Allocation, Allocator, ReleasePolicy, parsePoolConfig } from '../../../src/ipam/index.js';
import type { CustomResourceClient } from '../../../src/kube/custom-resources.js';
import { AddressVersions } from '../../../src/store/address-versions.js';
import { FloatingIPFollower, type Holder } from '../../../src/store/floating-ip-follower.js';
import { capturedLog } from '../../integration/helpers.js';

const CONFIG = parsePoolConfig([
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.10~10.0.100.20'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
  },
]);
const attrs = { policy: ReleasePolicy.PodDelete, nodeName: 'a1', podUid: 'u1' };

function follower(holder: Holder | undefined) {
  const allocator = new Allocator(CONFIG);
  const { log, lines } = capturedLog();
  const restored: Allocation[] = [];
  const freed: string[] = [];
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromClusterAndUser(
    { name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: false },
    { name: 'u' },
  );
  const api = { path: '/apis/galaxy.k8s.io/v1alpha1/floatingips' } as unknown as CustomResourceClient;
  const f = new FloatingIPFollower(
    api,
    kubeConfig,
    allocator,
    new AddressVersions(),
    log,
    { stillHeld: () => holder, freed: (ip) => freed.push(ip) },
    (a) => restored.push(a),
  );
  const held = allocator.allocateIP('10.0.100.10', 'NULL_ns1_NULL_p1', attrs);
  return { f, held, allocator, lines, restored, freed };
}

test('a pod not on a node yet whose binding may land keeps the address, and the warning says why', () => {
  const why = 'it is not on a node yet, and a binding of it with this address may still land';
  const { f, held, allocator, lines, restored, freed } = follower({ key: 'NULL_ns1_NULL_p1', attrs, why });
  f.settleGone(held, false);
  expect(allocator.get('10.0.100.10')).toBe(held);
  expect(restored).toEqual([held]);
  expect(freed).toEqual([]);
  expect(lines.filter((l) => l.level === 40)).toEqual([
    expect.objectContaining({
      ip: '10.0.100.10',
      key: 'NULL_ns1_NULL_p1',
      podUid: 'u1',
      node: 'a1',
      msg: `FloatingIP 10.0.100.10 was deleted while pod NULL_ns1_NULL_p1 (uid u1) may hold 10.0.100.10: ${why}; it stays held and its object is written again`,
    }),
  ]);
});

test('a pod on a node keeps it as before; with no holder the address is free', () => {
  const running = follower({ key: 'NULL_ns1_NULL_p1', attrs });
  running.f.settleGone(running.held, false);
  expect(running.lines.map((l) => l.msg)).toEqual([
    'FloatingIP 10.0.100.10 was deleted while pod NULL_ns1_NULL_p1 (uid u1) still holds 10.0.100.10; it stays held and its object is written again',
  ]);
  const none = follower(undefined);
  none.f.settleGone(none.held, false);
  expect(none.allocator.get('10.0.100.10')).toBeUndefined();
  expect(none.freed).toEqual(['10.0.100.10']);
  expect(none.restored).toEqual([]);
});
