// The parked-IP TTL, through the parked-ttl piece alone and its injected clock: only `never`
// addresses parked at the key of a gone workload, for longer than the TTL, are released (audited).
import { ParkedTtl } from '../../../src/controller/parked-ttl.js';
import { ReleasePolicy } from '../../../src/ipam/index.js';
import { lifecycleDeps } from './fakes.js';

const TTL = 60_000;
const never = { policy: ReleasePolicy.Never };

/** Addresses held as of time 0, the TTL's clock at `now`. */
function expiry(now: number) {
  const faked = lifecycleDeps({ clock: () => 0 });
  return { ...faked, ttl: (ms = TTL) => new ParkedTtl(faked.deps, ms, () => now) };
}

test('a never address parked at a gone Deployment’s key past the TTL is released and audited', async () => {
  const { ttl, store, events, observed } = expiry(TTL + 1);
  store.hold('10.0.100.10', 'dp_ns1_gone_', never);
  await ttl().expire();
  expect(store.writes).toEqual([
    {
      op: 'release',
      ip: '10.0.100.10',
      owner: { key: 'dp_ns1_gone_', podUid: '' },
      decidedAt: expect.any(BigInt),
    },
  ]);
  expect(events.map((e) => e.message)).toEqual([
    'released 10.0.100.10 from dp_ns1_gone_ (by floatip lifecycle via ttl): parked longer than --parked-ip-ttl; its workload is gone',
  ]);
  expect(observed).toEqual(['release 10.0.100.10 ttl']);
});

test('everything else stays: workload alive, a pool’s, not never, on a pod, reserved', async () => {
  const { ttl, store, apps } = expiry(TTL + 1);
  apps.set('alive', { exists: true, replicas: 1 });
  store.hold('10.0.100.11', 'dp_ns1_alive_', never);
  store.hold('10.0.100.12', 'pool__shared_', never);
  store.hold('10.0.100.13', 'dp_ns1_gone_', { policy: ReleasePolicy.Immutable });
  store.hold('10.0.100.14', 'sts_ns1_web_web-0', { ...never, nodeName: 'a1', podUid: 'u1' });
  store.allocator.allocateIP(
    '10.0.100.15',
    'dp_ns1_gone_',
    { ...never, nodeName: '', podUid: '' },
    { reserved: true },
  );
  await ttl().expire();
  await expiry(TTL - 1)
    .ttl()
    .expire(); // (another store: nothing in it expires early either)
  expect(store.writes).toEqual([]);
});

test('within the TTL, a gone workload’s parked address stays; 0 turns the expiry off', async () => {
  const early = expiry(TTL - 1);
  early.store.hold('10.0.100.10', 'dp_ns1_gone_', never);
  await early.ttl().expire();
  const off = expiry(10 * TTL);
  off.store.hold('10.0.100.10', 'dp_ns1_gone_', never);
  await off.ttl(0).expire();
  expect([early.store.writes, off.store.writes]).toEqual([[], []]);
});

test('a never address kept on a StatefulSet pod’s key counts as parked: it expires once the StatefulSet is gone', async () => {
  const { ttl, store, events } = expiry(TTL + 1);
  store.hold('10.0.100.10', 'sts_ns1_web_web-0', never);
  await ttl().expire();
  expect(events.map((e) => e.message)).toEqual([
    'released 10.0.100.10 from sts_ns1_web_web-0 (by floatip lifecycle via ttl): parked longer than --parked-ip-ttl; its workload is gone',
  ]);
});
