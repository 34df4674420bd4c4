// The trim at a rollout's end, through the rollout-trim piece alone: the oldest parked surplus is
// released (and audited), addresses of pods never; `never` apps go back to what they held before.
import type { V1Deployment } from '@kubernetes/client-node';
import { RolloutTrim } from '../../../src/controller/rollout-trim.js';
import { ReleasePolicy } from '../../../src/ipam/index.js';
import { lifecycleDeps } from './fakes.js';

const APP = 'dp_ns1_app_';
const POD = (suffix: string) => `dp_ns1_app_app-5d8f7c9b4-${suffix}`;

/** The Deployment as its controller leaves it: rolling out, or done. */
const deployment = (replicas: number, rolling: boolean) =>
  ({
    metadata: { name: 'app', namespace: 'ns1', generation: 2 },
    spec: { replicas },
    status: rolling
      ? { observedGeneration: 2, replicas: replicas + 1, updatedReplicas: 0 }
      : { observedGeneration: 2, replicas, updatedReplicas: replicas },
  }) as V1Deployment;

function trimmer() {
  let now = 0;
  const faked = lifecycleDeps({ clock: () => now });
  /** Holds an address as of time `at` (its updateTime). */
  const hold = (at: number, ip: string, key: string, policy: ReleasePolicy) => {
    now = at;
    return faked.store.hold(ip, key, { policy, ...(key === APP ? {} : { podUid: `uid-${ip}` }) });
  };
  return { ...faked, hold, trim: new RolloutTrim(faked.deps) };
}

test('immutable: at the end, parked surplus beyond replicas is released, oldest parked first; pods’ addresses stay', async () => {
  const { trim, hold, store, events, observed } = trimmer();
  const immutable = ReleasePolicy.Immutable;
  await trim.onDeployment(deployment(2, true), deployment(2, false));
  hold(50, '10.0.100.10', POD('new1'), immutable); // the oldest, but a pod's
  hold(300, '10.0.100.13', APP, immutable);
  hold(100, '10.0.100.11', APP, immutable);
  hold(200, '10.0.100.12', APP, immutable);
  observed.length = 0;
  await trim.onDeployment(deployment(2, false), deployment(2, true));
  expect(store.writes).toEqual([
    { op: 'release', ip: '10.0.100.11', owner: { key: APP, podUid: '' }, decidedAt: expect.any(BigInt) },
    { op: 'release', ip: '10.0.100.12', owner: { key: APP, podUid: '' }, decidedAt: expect.any(BigInt) },
  ]);
  expect(store.held(APP)).toEqual(['10.0.100.13']);
  expect(store.held(POD('new1'))).toEqual(['10.0.100.10']);
  expect(events.map((e) => e.message)).toEqual([
    'released 10.0.100.11 from dp_ns1_app_ (by floatip lifecycle via rollout): rollout ended: 4 addresses for 2',
    'released 10.0.100.12 from dp_ns1_app_ (by floatip lifecycle via rollout): rollout ended: 4 addresses for 2',
  ]);
  expect(observed).toEqual([
    `app changed ${APP}`,
    'release 10.0.100.11 rollout',
    'release 10.0.100.12 rollout',
    `app changed ${APP}`,
  ]);
});

test('never: back to what the app held when its rollout began, not to replicas', async () => {
  const { trim, hold, store } = trimmer();
  const never = ReleasePolicy.Never;
  hold(10, '10.0.100.10', APP, never); // parked before the rollout: the app held 3 for 2 replicas
  hold(20, '10.0.100.11', POD('old1'), never);
  hold(30, '10.0.100.12', POD('old2'), never);
  await trim.onDeployment(deployment(2, true), deployment(2, false));
  hold(40, '10.0.100.13', POD('new1'), never); // the surge pod's
  store.allocator.rekey('10.0.100.11', { key: POD('old1') }, APP, {
    policy: never,
    nodeName: '',
    podUid: '',
  });
  await trim.onDeployment(deployment(2, false), deployment(2, true));
  expect(store.writes.map((w) => `${w.op} ${w.ip}`)).toEqual(['release 10.0.100.10']);
  expect(store.held(APP)).toEqual(['10.0.100.11']);
});

test('never: an app not seen starting its rollout keeps everything (galaxy’s never)', async () => {
  const { trim, hold, store } = trimmer();
  hold(10, '10.0.100.10', APP, ReleasePolicy.Never);
  hold(20, '10.0.100.11', APP, ReleasePolicy.Never);
  await trim.onDeployment(deployment(1, false), deployment(1, true));
  expect(store.writes).toEqual([]);
});

test('each family is trimmed to its own count', async () => {
  const { trim, hold, store } = trimmer();
  const immutable = ReleasePolicy.Immutable;
  await trim.onDeployment(deployment(1, true), deployment(1, false));
  hold(10, '10.0.100.10', APP, immutable);
  hold(20, 'fd00:100::10', APP, immutable);
  hold(30, '10.0.100.11', POD('new1'), immutable);
  hold(40, 'fd00:100::11', POD('new1'), immutable);
  hold(50, '10.0.100.12', APP, immutable);
  await trim.onDeployment(deployment(1, false), deployment(1, true));
  // IPv4: 3 for 1, the two parked go; IPv6: 2 for 1, the parked one goes
  expect(store.writes.map((w) => w.ip).sort()).toEqual(['10.0.100.10', '10.0.100.12', 'fd00:100::10']);
});

test('a Deployment that changes without a rollout ending trims nothing', async () => {
  const { trim, hold, store, observed } = trimmer();
  hold(10, '10.0.100.10', APP, ReleasePolicy.Immutable);
  await trim.onDeployment(deployment(0, false), deployment(1, false)); // scaled down: pods decide
  await trim.onDeployment(deployment(0, false), undefined); // added
  expect(store.writes).toEqual([]);
  expect(observed).toEqual([`app changed ${APP}`]);
});
