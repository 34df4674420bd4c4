// One row per case of docs/galaxy.md#the-release-table (and floatip's rollout rule): the policy, the workload kind and
// its state decide what happens to a gone pod's address.
import {
  AllocationKey,
  ReleasePolicy,
  type WorkloadFacts,
  decideRelease,
  ordinalOf,
} from '../../../src/ipam/index.js';

const { PodDelete, Immutable, Never } = ReleasePolicy;
const dp = AllocationKey.parse('dp_ns1_app_app-5d8f7c9b4-x1');
const pooled = AllocationKey.parse('pool__p1_dp_ns1_app_app-5d8f7c9b4-x1');
const sts = AllocationKey.parse('sts_ns1_web_web-2');
const stsPooled = AllocationKey.parse('pool__p1_sts_ns1_web_web-2');
const tapp = AllocationKey.parse('tapp_ns1_t_t-1');
const bare = AllocationKey.parse('NULL_ns1_NULL_solo');

const app = (replicas: number, more: Partial<WorkloadFacts> = {}): WorkloadFacts => ({
  exists: true,
  replicas,
  ...more,
});
const gone: WorkloadFacts = { exists: false, replicas: 0 };

test.each<[string, AllocationKey, ReleasePolicy, WorkloadFacts, string]>([
  // Deployments
  ['dp, default policy', dp, PodDelete, app(3, { held: 3 }), 'release'],
  ['dp, never', dp, Never, app(3, { held: 3 }), 'park dp_ns1_app_'],
  ['dp, never, app deleted', dp, Never, gone, 'park dp_ns1_app_'],
  ['dp, never, in a pool', pooled, Never, app(3), 'park pool__p1_'],
  ['dp, immutable, app deleted', dp, Immutable, gone, 'release'],
  ['dp, immutable, scaled to 0', dp, Immutable, app(0, { held: 1 }), 'release'],
  ['dp, immutable, held = replicas', dp, Immutable, app(3, { held: 3 }), 'park dp_ns1_app_'],
  ['dp, immutable, scaled down (held > replicas)', dp, Immutable, app(2, { held: 3 }), 'release'],
  [
    'dp, immutable, rollout in progress (held > replicas)',
    dp,
    Immutable,
    app(3, { held: 4, rollingOut: true }),
    'park dp_ns1_app_',
  ],
  // StatefulSets and other named workloads
  ['sts, default policy', sts, PodDelete, app(3), 'release'],
  ['sts, never', sts, Never, app(3), 'keep'],
  ['sts, never, app deleted', sts, Never, gone, 'keep'],
  ['sts, never, in a pool: kept on the pod key', stsPooled, Never, app(3), 'keep'],
  ['sts, immutable, index < replicas', sts, Immutable, app(3), 'keep'],
  ['sts, immutable, scaled down (index >= replicas)', sts, Immutable, app(2), 'release'],
  ['sts, immutable, app deleted', sts, Immutable, gone, 'release'],
  [
    'sts, immutable, an ordinal that is no integer (galaxy’s unbind fails: the address stays)',
    AllocationKey.parse('sts_ns1_web_web-1e2'),
    Immutable,
    app(2),
    'keep',
  ],
  ['custom scalable workload, immutable', tapp, Immutable, app(2), 'keep'],
  [
    'custom workload without replicas, immutable',
    tapp,
    Immutable,
    app(2, { unsupported: 'parent workload has no replicas' }),
    'release',
  ],
  ['bare pod, default', bare, PodDelete, gone, 'release'],
  [
    'bare pod, never (name has no ordinal)',
    bare,
    Never,
    { ...gone, unsupported: "pod name doesn't match" },
    'release',
  ],
])('%s', (_name, key, policy, workload, expected) => {
  const action = decideRelease(key, policy, workload);
  expect(action.kind === 'park' ? `park ${action.to}` : action.kind).toBe(expected);
  expect(action.why).not.toBe('');
});

test('ordinals are the digits after the last dash', () => {
  expect(['web-0', 'web-12', 'a-b-3', 'web', 'web-x', 'web-'].map(ordinalOf)).toEqual([
    0,
    12,
    3,
    undefined,
    undefined,
    undefined,
  ]);
});
