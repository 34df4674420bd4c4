// Leaks found by resync, through the leak sweep alone: two sightings before acting, unless the API
// server proves the pod re-created; running pods, kept and parked addresses are left alone.
import { Leaks } from '../../../src/controller/leaks.js';
import { PodGone } from '../../../src/controller/pod-gone.js';
import { ReleasePolicy } from '../../../src/ipam/index.js';
import { lifecycleDeps, pod } from './fakes.js';

const IP = '10.0.100.10';
const web0 = (uid: string, phase = 'Running') =>
  pod({ name: 'web-0', uid, owner: { kind: 'StatefulSet', name: 'web' }, phase });

function sweeper() {
  const faked = lifecycleDeps();
  return { ...faked, leaks: new Leaks(faked.deps, new PodGone(faked.deps)) };
}

test('an address whose pod is gone is released on the second sighting, not the first, and audited', async () => {
  const { leaks, store, events, observed } = sweeper();
  store.hold(IP, 'NULL_ns1_NULL_solo', { nodeName: 'a1', podUid: 'u1' });
  await leaks.sweep();
  expect([store.writes, observed]).toEqual([[], []]);
  await leaks.sweep();
  expect(store.allocator.get(IP)).toBeUndefined();
  expect(observed).toEqual([`leak ${IP}: pod not found`, `release ${IP} leak`]);
  expect(events.map((e) => e.message)).toEqual([
    `released ${IP} from NULL_ns1_NULL_solo (by floatip lifecycle via leak): deletedAndIPMutablePod`,
  ]);
});

test('a finished pod’s address is a leak too, settled per the stored policy', async () => {
  const { leaks, store, pods, apps, observed } = sweeper();
  apps.set('web', { exists: true, replicas: 1 });
  pods.add(web0('u1', 'Failed'));
  store.hold(IP, 'sts_ns1_web_web-0', { policy: ReleasePolicy.Immutable, nodeName: 'a1', podUid: 'u1' });
  await leaks.sweep();
  await leaks.sweep();
  // immutable within replicas: kept on the pod's key, no longer on the finished pod
  expect(store.allocator.get(IP)).toMatchObject({ key: 'sts_ns1_web_web-0', nodeName: '', podUid: '' });
  expect(observed).toEqual([`leak ${IP}: pod finished`, `keep ${IP} leak`]);
});

test('a pod re-created with another UID, as the API server says: settled at the first sighting', async () => {
  const { leaks, store, pods, apps, observed } = sweeper();
  apps.set('web', { exists: true, replicas: 1 });
  pods.add(web0('u2'));
  store.hold(IP, 'sts_ns1_web_web-0', { policy: ReleasePolicy.Immutable, nodeName: 'a1', podUid: 'u1' });
  await leaks.sweep();
  expect(store.allocator.get(IP)).toMatchObject({ key: 'sts_ns1_web_web-0', podUid: '' });
  expect(observed).toEqual([
    `leak ${IP}: pod current uid u2 missmatch stored uid u1`,
    `keep ${IP} leak`,
    'settled ns1/web-0', // the refused new incarnation may go on
  ]);
});

test.each([
  ['has the address’s pod', false],
  ['cannot be reached', true],
])(
  'another UID in the cache only, while the API server %s: no proof, the first sighting waits',
  async (_, fails) => {
    const { leaks, store, pods, observed } = sweeper();
    store.hold(IP, 'sts_ns1_web_web-0', { nodeName: 'a1', podUid: 'u1' });
    pods.cache.set('ns1/web-0', web0('u-older')); // a lagging cache
    pods.server.set('ns1/web-0', web0('u1'));
    pods.serverFails = fails;
    await leaks.sweep();
    expect([store.writes, observed]).toEqual([[], []]);
  },
);

test('a running pod’s address, a kept one and a parked one are never leaks', async () => {
  const { leaks, store, pods } = sweeper();
  pods.add(web0('u1'));
  store.hold(IP, 'sts_ns1_web_web-0', { nodeName: 'a1', podUid: 'u1' });
  store.hold('10.0.100.11', 'sts_ns1_web_web-1', { policy: ReleasePolicy.Never }); // kept on its key
  store.hold('10.0.100.12', 'dp_ns1_app_', { policy: ReleasePolicy.Never }); // parked: the TTL's business
  for (let pass = 0; pass < 3; pass++) await leaks.sweep();
  expect(store.writes).toEqual([]);
});

test('a suspect that changed between the passes (the address re-bound) starts over', async () => {
  const { leaks, store } = sweeper();
  store.hold(IP, 'NULL_ns1_NULL_solo', { podUid: 'u1' });
  await leaks.sweep();
  store.allocator.update(IP, { key: 'NULL_ns1_NULL_solo' }, { policy: 0, nodeName: 'a2', podUid: 'u2' });
  await leaks.sweep();
  expect(store.allocator.get(IP)?.podUid).toBe('u2');
  await leaks.sweep();
  expect(store.allocator.get(IP)).toBeUndefined();
});
