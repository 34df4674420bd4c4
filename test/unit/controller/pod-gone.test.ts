// A gone pod's addresses, through pod-gone alone: what each policy writes, ABA-safe, and that a
// release (and only a release) leaves its audit Event.
import { PodGone } from '../../../src/controller/pod-gone.js';
import { AllocationKey, ReleasePolicy } from '../../../src/ipam/index.js';
import { StaleDecisionError } from '../../../src/store/floating-ip-store.js';
import { lifecycleDeps, pod } from './fakes.js';

const IP = '10.0.100.10';
const cleared = (policy: ReleasePolicy) => ({ policy, nodeName: '', podUid: '' });
const web1 = pod({
  name: 'web-1',
  uid: 'u1',
  owner: { kind: 'StatefulSet', name: 'web' },
  policy: 'immutable',
});
const ofApp = (suffix: string, uid: string, policy: 'immutable' | 'never') =>
  pod({ name: `app-5d8f7c9b4-${suffix}`, uid, owner: { kind: 'ReplicaSet', name: 'app-5d8f7c9b4' }, policy });

test('default policy: released, conditional on the owner and the version decided on, and audited', async () => {
  const { deps, store, events, observed } = lifecycleDeps();
  store.hold(IP, 'NULL_ns1_NULL_solo', { nodeName: 'a1', podUid: 'u1' });
  const version = store.versionOf(IP);
  await new PodGone(deps).handle(pod({ name: 'solo', uid: 'u1' }));
  expect(store.writes).toEqual([
    { op: 'release', ip: IP, owner: { key: 'NULL_ns1_NULL_solo', podUid: 'u1' }, decidedAt: version },
  ]);
  expect(store.allocator.get(IP)).toBeUndefined();
  expect(events).toEqual([
    {
      reason: 'FloatingIPReleased',
      object: IP,
      message: `released ${IP} from NULL_ns1_NULL_solo (by floatip lifecycle via pod-gone): deletedAndIPMutablePod`,
    },
  ]);
  expect(observed).toEqual([`release ${IP} pod-gone`, 'settled ns1/solo']);
});

test('a successor the binding landed on (v1.20 ignores its UID): the address moves to it, not released', async () => {
  const { deps, store, pods, events } = lifecycleDeps();
  store.hold(IP, 'NULL_ns1_NULL_solo', { nodeName: 'a1', podUid: 'u1' });
  pods.server.set('ns1/solo', pod({ name: 'solo', uid: 'u2', nodeName: 'a1', ips: [IP] }));
  await new PodGone(deps).handle(pod({ name: 'solo', uid: 'u1' }));
  expect(store.writes).toEqual([
    {
      op: 'update',
      ip: IP,
      owner: { key: 'NULL_ns1_NULL_solo', podUid: 'u1' },
      attrs: { policy: ReleasePolicy.PodDelete, nodeName: 'a1', podUid: 'u2' },
    },
  ]);
  expect(store.allocator.get(IP)).toMatchObject({ key: 'NULL_ns1_NULL_solo', podUid: 'u2' });
  expect(events).toEqual([]);
});

test('a successor without the address, or not bound, or the pod itself: released as before', async () => {
  for (const now of [
    pod({ name: 'solo', uid: 'u2', nodeName: 'a1', ips: ['10.0.100.99'] }),
    pod({ name: 'solo', uid: 'u2', ips: [IP] }),
    pod({ name: 'solo', uid: 'u1', nodeName: 'a1', ips: [IP] }),
  ]) {
    const { deps, store, pods } = lifecycleDeps();
    store.hold(IP, 'NULL_ns1_NULL_solo', { nodeName: 'a1', podUid: 'u1' });
    pods.server.set('ns1/solo', now);
    await new PodGone(deps).handle(pod({ name: 'solo', uid: 'u1' }));
    expect(store.writes.map((w) => w.op)).toEqual(['release']);
  }
});

test('never, of a Deployment: parked at the app’s key, node and pod cleared; not a release', async () => {
  const { deps, store, events, observed } = lifecycleDeps();
  const key = 'dp_ns1_app_app-5d8f7c9b4-a';
  store.hold(IP, key, { policy: ReleasePolicy.Never, nodeName: 'a1', podUid: 'u1' });
  const version = store.versionOf(IP);
  await new PodGone(deps).handle(ofApp('a', 'u1', 'never'));
  expect(store.writes).toEqual([
    {
      op: 'rekey',
      ip: IP,
      owner: { key, podUid: 'u1' },
      to: 'dp_ns1_app_',
      attrs: cleared(ReleasePolicy.Never),
      decidedAt: version,
    },
  ]);
  expect(events).toEqual([]);
  expect(observed).toEqual([`park ${IP} pod-gone`, `app changed ${key}`, 'settled ns1/app-5d8f7c9b4-a']);
});

test('immutable, of a StatefulSet within its replicas: kept on the pod’s key, node and pod cleared', async () => {
  const { deps, store, apps, events, observed } = lifecycleDeps();
  apps.set('web', { exists: true, replicas: 2 });
  store.hold(IP, 'sts_ns1_web_web-1', { policy: ReleasePolicy.Immutable, nodeName: 'a1', podUid: 'u1' });
  await new PodGone(deps).handle(web1);
  expect(store.writes).toEqual([
    {
      op: 'update',
      ip: IP,
      owner: { key: 'sts_ns1_web_web-1', podUid: 'u1' },
      attrs: cleared(ReleasePolicy.Immutable),
      decidedAt: expect.any(BigInt),
    },
  ]);
  expect(events).toEqual([]);
  expect(observed).toEqual([`keep ${IP} pod-gone`, 'settled ns1/web-1']);
});

test('immutable, of a StatefulSet scaled below the pod’s index: released, with the decision’s reason', async () => {
  const { deps, store, apps, events } = lifecycleDeps();
  apps.set('web', { exists: true, replicas: 1 });
  store.hold(IP, 'sts_ns1_web_web-1', { policy: ReleasePolicy.Immutable, podUid: 'u1' });
  await new PodGone(deps).handle(web1);
  expect(store.allocator.get(IP)).toBeUndefined();
  expect(events.map((e) => e.message)).toEqual([
    `released ${IP} from sts_ns1_web_web-1 (by floatip lifecycle via pod-gone): deletedAndScaledDownAppPod: index 1 >= replicas 1`,
  ]);
});

test('immutable, of a Deployment: the app’s addresses of the same family decide between park and release', async () => {
  const { deps, store, apps, events } = lifecycleDeps();
  apps.set('app', { exists: true, replicas: 1, rollingOut: false });
  const attrs = { policy: ReleasePolicy.Immutable };
  store.hold('fd00:100::10', 'dp_ns1_app_', attrs); // parked, but IPv6: not counted for IPv4
  store.hold(IP, 'dp_ns1_app_app-5d8f7c9b4-a', { ...attrs, podUid: 'ua' });
  const podGone = new PodGone(deps);
  await podGone.handle(ofApp('a', 'ua', 'immutable'));
  expect(store.held('dp_ns1_app_')).toEqual(['10.0.100.10', 'fd00:100::10']); // 1 <= replicas 1: parked
  store.hold('10.0.100.11', 'dp_ns1_app_app-5d8f7c9b4-b', { ...attrs, podUid: 'ub' });
  await podGone.handle(ofApp('b', 'ub', 'immutable'));
  expect(store.allocator.get('10.0.100.11')).toBeUndefined(); // 2 > replicas 1
  expect(events.map((e) => e.message)).toEqual([
    'released 10.0.100.11 from dp_ns1_app_app-5d8f7c9b4-b (by floatip lifecycle via pod-gone): deletedAndScaledDownDpPod: allocated 2 > replicas 1',
  ]);
});

test('a re-created pod’s address (another UID) and a reserved one are not the gone pod’s to touch', async () => {
  const { deps, store, events, observed } = lifecycleDeps();
  store.hold(IP, 'sts_ns1_web_web-0', { podUid: 'u2' });
  store.allocator.allocateIP('10.0.100.11', 'sts_ns1_web_web-0', cleared(ReleasePolicy.PodDelete), {
    reserved: true,
  });
  await new PodGone(deps).handle(
    pod({ name: 'web-0', uid: 'u1', owner: { kind: 'StatefulSet', name: 'web' } }),
  );
  expect([store.writes, events]).toEqual([[], []]);
  expect(observed).toEqual(['settled ns1/web-0']); // dealt with: a newer incarnation may go on
});

test('a decision overtaken by a change of the object is refused, and neither audited nor counted', async () => {
  const { deps, store, events, observed } = lifecycleDeps();
  const held = store.hold(IP, 'NULL_ns1_NULL_solo', { podUid: 'u1' });
  const podGone = new PodGone(deps);
  // the decision sees an older version of the object than the one the write meets
  const versionOf = store.versionOf.bind(store);
  store.versionOf = (ip) => (versionOf(ip) ?? 0n) - 1n;
  await expect(
    podGone.settle(AllocationKey.parse(held.key), ReleasePolicy.PodDelete, [held], 'pod-gone'),
  ).rejects.toThrow(StaleDecisionError);
  expect(store.allocator.get(IP)?.key).toBe('NULL_ns1_NULL_solo');
  expect([events, observed]).toEqual([[], []]);
});
