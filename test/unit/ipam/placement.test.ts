// The placement rules, one row per case: where a pod may get its addresses (allowedSubnets), its
// app's limit (appLimit), galaxy's supportReserveIPPolicy (reservationRefusal), where prioritize
// scores highest (homeSubnets) and the one ordinal parser. Pure: an allocator in a known state in,
// a set of node subnets or a refusal out.
import {
  type AllocationKey,
  Allocator,
  AppLimitError,
  HeldOutsideConfigError,
  type AppFacts,
  AllocationKey as Key,
  PolicyNotSupportedError,
  ReleasePolicy,
  allowedSubnets,
  appLimit,
  heldForNode,
  homeSubnets,
  ordinalOf,
  parsePoolConfig,
  parseRange,
  reservationRefusal,
} from '../../../src/ipam/index.js';

const A = '10.0.1.0/24';
const B = '10.0.2.0/24';
const config = parsePoolConfig([
  { nodeSubnets: [A], ips: ['10.0.100.10~10.0.100.12'], subnet: '10.0.100.0/24', gateway: '10.0.100.1' },
  { nodeSubnets: [B], ips: ['10.0.101.10~10.0.101.12'], subnet: '10.0.101.0/24', gateway: '10.0.101.1' },
]);
const { PodDelete, Immutable, Never } = ReleasePolicy;
const attrs = (policy = PodDelete) => ({ policy, nodeName: 'n', podUid: 'u' });
const parked = { policy: Never, nodeName: '', podUid: '' };

const dp = Key.parse('dp_ns1_app_app-5d8f7c9b4-x1');
const pooled = Key.parse('pool__p1_dp_ns1_app_app-5d8f7c9b4-x1');
const sts = Key.parse('sts_ns1_web_web-0');
const bare = Key.parse('NULL_ns1_NULL_solo');
const bareOrdinal = Key.parse('NULL_ns1_NULL_solo-3');
const tapp = Key.parse('tapp_ns1_t_t-1');

const rollout = (replicas: number, rolling = false, maxSurge = 1): AppFacts => ({
  deployment: { replicas, rolling, maxSurge },
});

/** An allocator in a state: `taken` addresses held under these keys. */
function state(taken: [ip: string, key: string][] = []): Allocator {
  const allocator = new Allocator(config);
  for (const [ip, key] of taken) allocator.allocateIP(ip, key, key.endsWith('_') ? parked : attrs());
  return allocator;
}
const fullA: [string, string][] = [
  ['10.0.100.10', 'NULL_ns1_NULL_a'],
  ['10.0.100.11', 'NULL_ns1_NULL_b'],
  ['10.0.100.12', 'NULL_ns1_NULL_c'],
];

interface Row {
  taken?: [string, string][];
  key: AllocationKey;
  policy?: ReleasePolicy;
  ranges?: string[][];
  app?: AppFacts;
  scalable?: boolean;
}

test.each<[string, Row, string[] | string]>([
  ['a new pod, default policy: every subnet with a free address', { key: sts }, [A, B]],
  ['an exhausted subnet is left out', { key: sts, taken: fullA }, [B]],
  ['a pod holding an address: where it can use it', { key: sts, taken: [['10.0.101.11', sts.text]] }, [B]],
  [
    'no ranges, a key holding addresses in both subnets (left from groups asked once): where any serves',
    {
      key: sts,
      taken: [
        ['10.0.100.11', sts.text],
        ['10.0.101.11', sts.text],
      ],
    },
    [A, B],
  ],
  [
    'request_ip_range: where every group can get an address',
    { key: sts, ranges: [['10.0.101.10~10.0.101.12']] },
    [B],
  ],
  [
    'request_ip_range, one group held: where the held one works and the rest can be had',
    { key: sts, ranges: [['10.0.100.10'], ['10.0.100.11~10.0.101.12']], taken: [['10.0.100.10', sts.text]] },
    [A],
  ],
  ['ranges nobody can serve: nowhere', { key: sts, ranges: [['10.0.200.1']] }, []],
  [
    'Deployment never, nothing parked: anywhere with room',
    { key: dp, policy: Never, app: rollout(2) },
    [A, B],
  ],
  [
    'Deployment never, an address parked in B: B',
    { key: dp, policy: Never, app: rollout(2), taken: [['10.0.101.10', 'dp_ns1_app_']] },
    [B],
  ],
  [
    'Deployment immutable at its replicas: wait, in galaxy’s words',
    { key: dp, policy: Immutable, app: rollout(1), taken: [['10.0.100.10', 'dp_ns1_app_app-5d8f7c9b4-x0']] },
    'AppLimitError: deployment app has allocated 1 ips with replicas of 1, wait for releasing',
  ],
  [
    'Deployment immutable rolling out: replicas + maxSurge',
    {
      key: dp,
      policy: Immutable,
      app: rollout(1, true),
      taken: [['10.0.100.10', 'dp_ns1_app_app-5d8f7c9b4-x0']],
    },
    [A, B],
  ],
  [
    'a parked address does not count as a pod',
    {
      key: dp,
      policy: Immutable,
      app: rollout(1),
      taken: [
        ['10.0.100.10', 'dp_ns1_app_'],
        ['10.0.100.11', 'dp_ns1_app_'],
      ],
    },
    [A],
  ],
  [
    'a Deployment that does not exist has no room',
    { key: dp, policy: Never, app: {} },
    'AppLimitError: deployment app has allocated 0 ips with replicas of 0, wait for releasing',
  ],
  [
    'a Pool object caps its pods',
    {
      key: pooled,
      policy: Never,
      app: { pool: { name: 'p1', size: 1 } },
      taken: [['10.0.100.10', 'pool__p1_dp_ns2_other_other-x-y']],
    },
    'AppLimitError: reached pool p1 size limit of 1',
  ],
  [
    'a Pool of size 0 blocks it',
    { key: pooled, policy: Never, app: { pool: { name: 'p1', size: 0 } } },
    'AppLimitError: reached pool p1 size limit of 0',
  ],
  [
    'ranges with a non-default policy on a Deployment',
    { key: dp, policy: Never, app: rollout(2), ranges: [['10.0.100.10']] },
    'PolicyNotSupportedError: request ip ranges for deployment pod with release policy other than ReleasePolicyPodDelete is not supported',
  ],
  [
    'a bare pod whose name has no ordinal cannot keep its address by name',
    { key: bare, policy: Never },
    "PolicyNotSupportedError: release policy never is not supported for pod solo: pod name doesn't match '.*-[0-9]*$', assume its parent is not a stateful workload",
  ],
  ['a bare pod with an ordinal can, with never', { key: bareOrdinal, policy: Never }, [A, B]],
  [
    'immutable needs a scalable parent',
    { key: tapp, policy: Immutable },
    'PolicyNotSupportedError: release policy immutable is not supported for pod t-1: parent workload has no replicas',
  ],
  ['immutable with a scalable parent', { key: tapp, policy: Immutable, scalable: true }, [A, B]],
  [
    'held addresses win over the policy check',
    { key: bare, policy: Never, taken: [['10.0.100.12', bare.text]] },
    [A],
  ],
])('%s', (_name, row, expected) => {
  const allocator = state(row.taken);
  let asked = false;
  const request = {
    key: row.key,
    groups: (row.ranges ?? []).map((g) => g.map(parseRange)),
    policy: row.policy ?? PodDelete,
    isScalable: () => row.scalable ?? false,
    appFacts: () => {
      asked = true;
      return row.app ?? {};
    },
  };
  let got: string[] | string;
  try {
    got = [...allowedSubnets(allocator, request)].sort();
  } catch (err) {
    if (!(err instanceof AppLimitError || err instanceof PolicyNotSupportedError)) throw err;
    got = `${err.name}: ${err.message}`;
  }
  expect(got).toEqual(expected);
  // the app's facts are read only where its limit applies
  const shares = row.key.isDeployment() && (row.policy ?? PodDelete) !== PodDelete;
  if (!shares) expect(asked).toBe(false);
});

test.each<[string, AllocationKey, AppFacts, number, string, number, string]>([
  [
    'replicas',
    dp,
    rollout(3),
    3,
    'dp_ns1_app_',
    3,
    'deployment app has allocated 3 ips with replicas of 3, wait for releasing',
  ],
  [
    'surge while rolling',
    dp,
    rollout(3, true, 2),
    5,
    'dp_ns1_app_',
    5,
    'deployment app has allocated 5 ips with replicas of 3 (+2 surge during its rollout), wait for releasing',
  ],
  [
    'no Deployment',
    dp,
    {},
    0,
    'dp_ns1_app_',
    0,
    'deployment app has allocated 0 ips with replicas of 0, wait for releasing',
  ],
  [
    'a Pool object',
    pooled,
    { pool: { name: 'p1', size: 4 } },
    4,
    'pool__p1_',
    4,
    'reached pool p1 size limit of 4',
  ],
  [
    'a pool annotation without a Pool object: the Deployment, counted within the pool',
    pooled,
    rollout(2),
    2,
    'pool__p1_dp_ns1_app_',
    2,
    'deployment app has allocated 2 ips with replicas of 2, wait for releasing',
  ],
])('appLimit: %s', (_name, key, facts, limit, countPrefix, used, message) => {
  const got = appLimit(key, facts);
  expect([got.limit, got.countPrefix, got.reached(used)]).toEqual([limit, countPrefix, message]);
});

test.each<[AllocationKey, ReleasePolicy, boolean, string | undefined]>([
  [dp, Immutable, false, undefined],
  [sts, Never, false, undefined],
  [bare, Never, false, "pod name doesn't match '.*-[0-9]*$', assume its parent is not a stateful workload"],
  [bareOrdinal, Never, false, undefined],
  [bareOrdinal, Immutable, false, 'parent workload has no replicas'],
  [tapp, Immutable, true, undefined],
])('reservationRefusal(%s, %s, scalable %s) is %s', (key, policy, scalable, refusal) => {
  expect(reservationRefusal(key, policy, () => scalable)).toBe(refusal);
});

test('homeSubnets: where a pod (or, sharing its app’s, its app) already holds addresses', () => {
  const allocator = state([
    ['10.0.101.10', sts.text],
    ['10.0.100.10', 'dp_ns1_app_'],
  ]);
  expect([...homeSubnets(allocator, sts, Immutable)]).toEqual([B]);
  expect([...homeSubnets(allocator, dp, Never)]).toEqual([A]);
  expect([...homeSubnets(allocator, dp, PodDelete)]).toEqual([]);
  expect([...homeSubnets(allocator, bare, PodDelete)]).toEqual([]);
});

test.each<[string, number | undefined]>([
  ['web-0', 0],
  ['web-12', 12],
  ['web-+3', 3],
  ['7', 7],
  ['web', undefined],
  ['web-', undefined],
  ['web-1a', undefined],
  ['web-9223372036854775807', Number(2n ** 63n - 1n)],
  ['web-9223372036854775808', undefined],
])('ordinalOf(%j) is %j, as Go’s strconv.Atoi reads it', (name, ordinal) => {
  expect(ordinalOf(name)).toBe(ordinal);
});

test('without ranges a pod uses one held address per family: the first that serves the node subnet', () => {
  const allocator = state([
    ['10.0.100.11', sts.text],
    ['10.0.100.10', sts.text],
    ['10.0.101.12', sts.text],
  ]);
  const held = allocator.byKey(sts.text);
  const ips = (subnet: string) => heldForNode(allocator, held, subnet).map((a) => a.ip);
  expect(ips(B)).toEqual(['10.0.101.12']);
  expect(ips(A)).toEqual([held.find((a) => a.ip.startsWith('10.0.100.'))!.ip]);
  // a subnet none serves: still one (bind refuses it by name)
  expect(ips('10.0.9.0/24')).toEqual([held[0]!.ip]);
});

test('parked addresses a configuration change left outside every entry do not pin the app to nowhere', () => {
  // a never Deployment parked two addresses in A; A's range is then taken out of the configuration
  // (kept as orphans, README "Configuration"): they can never be unparked, so its next pod goes
  // where there is room, as with nothing parked, not refused on every node for good
  const allocator = state([
    ['10.0.100.10', 'dp_ns1_app_'],
    ['10.0.100.11', 'dp_ns1_app_'],
  ]);
  allocator.reconfigure(
    parsePoolConfig([
      { nodeSubnets: [A], ips: ['10.0.100.12'], subnet: '10.0.100.0/24', gateway: '10.0.100.1' },
      { nodeSubnets: [B], ips: ['10.0.101.10~10.0.101.12'], subnet: '10.0.101.0/24', gateway: '10.0.101.1' },
    ]),
  );
  expect(allocator.orphaned().map((a) => a.ip)).toEqual(['10.0.100.10', '10.0.100.11']);
  const request = {
    key: dp,
    groups: [],
    policy: Never,
    isScalable: () => false,
    appFacts: () => rollout(2),
  };
  expect([...allowedSubnets(allocator, request)].sort()).toEqual([A, B]);
  // one parked address that can still be used: the app goes there, the orphans aside
  allocator.allocateIP('10.0.101.11', 'dp_ns1_app_', parked);
  expect([...allowedSubnets(allocator, request)]).toEqual([B]);
  expect([...homeSubnets(allocator, dp, Never)]).toEqual([B]);
});

test('a pod whose own addresses a configuration change left outside every entry is told why, not NoFIPLeft', () => {
  // an immutable StatefulSet pod kept 10.0.100.10; the range is then narrowed past it (kept as an
  // orphan): no node can use it, and the reason names the address and what to do
  const allocator = state([['10.0.100.10', sts.text]]);
  allocator.reconfigure(
    parsePoolConfig([
      { nodeSubnets: [A], ips: ['10.0.100.11~10.0.100.12'], subnet: '10.0.100.0/24', gateway: '10.0.100.1' },
      { nodeSubnets: [B], ips: ['10.0.101.10~10.0.101.12'], subnet: '10.0.101.0/24', gateway: '10.0.101.1' },
    ]),
  );
  const request = {
    key: sts,
    groups: [],
    policy: Immutable,
    isScalable: () => false,
    appFacts: () => ({}),
  };
  expect(() => allowedSubnets(allocator, request)).toThrow(
    new HeldOutsideConfigError(sts.text, ['10.0.100.10']),
  );
  expect(() => allowedSubnets(allocator, request)).toThrow(
    '10.0.100.10 of sts_ns1_web_web-0 is outside the floating IP configuration (kept as an orphan), so no node can use it: release it (POST /v1/ip, kubectl fip release) or add it to the configuration again',
  );
  // configured again: it pins the pod to its subnet as before
  allocator.reconfigure(config);
  expect([...allowedSubnets(allocator, request)]).toEqual([A]);
});
