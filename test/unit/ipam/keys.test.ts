import {
  AllocationKey,
  UnsupportedAppTypeError,
  appTypeName,
  appTypePrefix,
  type OwnerReference,
  typePrefixOfAppType,
} from '../../../src/ipam/index.js';

const pod = (name: string, owners: OwnerReference[] = [], pool = '', namespace = 'ns1') =>
  AllocationKey.forPod({ namespace, name, ownerReferences: owners, pool });

describe('keys from pods (docs/galaxy.md#keys-from-a-pod-formatkey)', () => {
  test.each<[string, string, OwnerReference[], string, string]>([
    [
      'Deployment pod',
      'dp-xxx-yyy',
      [{ kind: 'ReplicaSet', name: 'dp-69fd8dbc5c' }],
      '',
      'dp_ns1_dp_dp-xxx-yyy',
    ],
    ['StatefulSet pod', 'sts-1', [{ kind: 'StatefulSet', name: 'sts' }], '', 'sts_ns1_sts_sts-1'],
    ['TApp pod', 'tapp-1', [{ kind: 'TApp', name: 'tapp' }], '', 'tapp_ns1_tapp_tapp-1'],
    ['custom kind', 'worker-1', [{ kind: 'Spark', name: 'worker' }], '', 'spark_ns1_worker_worker-1'],
    ['bare pod', 'pod1', [], '', 'NULL_ns1_NULL_pod1'],
    [
      'pool Deployment pod',
      'dp-xxx-yyy',
      [{ kind: 'ReplicaSet', name: 'dp-69fd8dbc5c' }],
      'pl1',
      'pool__pl1_dp_ns1_dp_dp-xxx-yyy',
    ],
    [
      'pool StatefulSet pod',
      'sts-1',
      [{ kind: 'StatefulSet', name: 'sts' }],
      'pl1',
      'pool__pl1_sts_ns1_sts_sts-1',
    ],
    ['ReplicaSet name with dashes', 'p', [{ kind: 'ReplicaSet', name: 'dp2-1-xxxx' }], '', 'dp_ns1_dp2-1_p'],
    ['ReplicaSet name without a dash', 'p', [{ kind: 'ReplicaSet', name: 'plain' }], '', 'dp_ns1_plain_p'],
    ['lower-case statefulsets kind', 'p-0', [{ kind: 'statefulsets', name: 's' }], '', 'sts_ns1_s_p-0'],
    ['Deployment kind', 'p', [{ kind: 'Deployment', name: 'd' }], '', 'dp_ns1_d_p'],
    [
      'only the first owner counts',
      'p-0',
      [
        { kind: 'StatefulSet', name: 's' },
        { kind: 'Foo', name: 'f' },
      ],
      '',
      'sts_ns1_s_p-0',
    ],
  ])('%s', (_name, name, owners, pool, expected) => {
    expect(pod(name, owners, pool).text).toBe(expected);
  });

  test('a 63-character Deployment name works: the owner name is used, not the pod name', () => {
    const name = 'd'.repeat(63);
    expect(pod('short-pod', [{ kind: 'ReplicaSet', name: `${name}-5d8f7c9b4` }]).appName).toBe(name);
  });

  test.each<[string, OwnerReference[]]>([
    [
      'two owners, the first a ReplicaSet',
      [
        { kind: 'ReplicaSet', name: 'a-1' },
        { kind: 'Foo', name: 'b' },
      ],
    ],
    ['a ReplicaSet name starting with its only dash', [{ kind: 'ReplicaSet', name: '-abc' }]],
    ['an empty owner name', [{ kind: 'StatefulSet', name: '' }]],
  ])('unsupported app type: %s', (_name, owners) => {
    expect(() => pod('p', owners)).toThrow(UnsupportedAppTypeError);
    expect(() => pod('p', owners)).toThrow('unsupported app type (pod ns1/p)');
  });

  test('prefixes of a Deployment pod, with and without a pool', () => {
    const plain = pod('dp-x-y', [{ kind: 'ReplicaSet', name: 'dp-69fd8dbc5c' }]);
    expect(plain.poolPrefix).toBe('dp_ns1_dp_');
    expect(plain.poolAppPrefix).toBe('dp_ns1_dp_');
    const pooled = pod('dp-x-y', [{ kind: 'ReplicaSet', name: 'dp-69fd8dbc5c' }], 'pl1');
    expect(pooled.poolPrefix).toBe('pool__pl1_');
    expect(pooled.poolAppPrefix).toBe('pool__pl1_dp_ns1_dp_');
    expect(pooled.isDeployment()).toBe(true);
    expect(pooled.isStatefulSet()).toBe(false);
  });
});

describe('parsing keys (docs/galaxy.md#parsing-a-key-parsekey)', () => {
  const parts = (k: AllocationKey) => [k.pool, k.typePrefix, k.namespace, k.appName, k.podName];
  test.each<[string, string[]]>([
    ['sts_kube-system_fip-bj_fip-bj-111', ['', 'sts_', 'kube-system', 'fip-bj', 'fip-bj-111']],
    ['dp_ns1_dp_', ['', 'dp_', 'ns1', 'dp', '']],
    ['pool__pl1_', ['pl1', '', '', '', '']],
    ['pool__reserved-for-node_', ['reserved-for-node', '', '', '', '']],
    ['NULL_default_NULL_pod1', ['', 'NULL_', 'default', 'NULL', 'pod1']],
    ['pool__pl1_dp_ns1_dp_dp-x', ['pl1', 'dp_', 'ns1', 'dp', 'dp-x']],
    ['pool__nounderscore', ['', '', '', '', '']],
    // a pool name with `_`: the pool is what precedes the last four parts (galaxy: pool `my`, no pod)
    ['pool__my_pool_dp_ns1_dp_dp-x', ['my_pool', 'dp_', 'ns1', 'dp', 'dp-x']],
    ['pool__a_b_c_sts_ns1_web_web-0', ['a_b_c', 'sts_', 'ns1', 'web', 'web-0']],
    ['pool__my_pool_', ['my_pool', '', '', '', '']],
    ['pool__my_pool_dp_ns1_dp_', ['my_pool', 'dp_', 'ns1', 'dp', '']],
    ['ns_notexistpod', ['', '', '', '', '']],
    ['pod1', ['', '', '', '', '']],
    ['hello-xx', ['', '', '', '', '']],
    ['', ['', '', '', '', '']],
  ])('%j', (text, expected) => {
    const key = AllocationKey.parse(text);
    expect(parts(key)).toEqual(expected);
    expect(key.text).toBe(text);
  });

  test.each(['p1', 'my_pool', 'a_b_c'])(
    'a pod key of pool %j parses back to the parts it was made of',
    (pool) => {
      for (const made of [
        pod('web-0', [{ kind: 'StatefulSet', name: 'web' }], pool),
        pod('dp-x-y', [{ kind: 'ReplicaSet', name: 'dp-69fd8dbc5c' }], pool),
      ]) {
        expect(parts(AllocationKey.parse(made.text))).toEqual(parts(made));
        expect(AllocationKey.parse(made.poolPrefix).pool).toBe(pool);
      }
    },
  );
});

test.each([
  ['sts_ns1_web_web-0', { namespace: 'ns1', name: 'web-0' }],
  ['pool__p1_dp_ns1_app_app-x-y', { namespace: 'ns1', name: 'app-x-y' }],
  ['dp_ns1_app_', undefined],
  ['pool__p1_', undefined],
  ['hello', undefined],
])('the pod key %s names: %j', (text, pod) => {
  expect(AllocationKey.parse(text).pod).toEqual(pod);
});

describe('keys from parts (docs/galaxy.md#keys-from-parts-newkeyobj, the REST API)', () => {
  test.each<[[string, string, string, string, string], string]>([
    [['sts_', '', '', '', 'rami'], 'pool__rami_'],
    [['sts_', '', '', '', ''], ''],
    [['dp_', 'ns1', 'rami', '', 'rami'], 'pool__rami_dp_ns1_rami_'],
    [['dp_', 'ns1', 'rami', '', ''], 'dp_ns1_rami_'],
    [['sts_', 'ns1', 'rami', '', ''], 'sts_ns1_rami_'],
    [['dp_', 'ns1', 'rami', 'rami-xx-yy', 'rami'], 'pool__rami_dp_ns1_rami_rami-xx-yy'],
    [['sts_', 'ns1', 'rami', 'rami-xx-yy', 'rami'], 'pool__rami_sts_ns1_rami_rami-xx-yy'],
    [['sts_', 'ns1', '', '', ''], 'sts_ns1__'],
  ])('%j -> %j', (args, expected) => {
    expect(AllocationKey.fromParts(...args).text).toBe(expected);
  });
});

describe('app types', () => {
  test.each([
    ['dp_', 'deployment'],
    ['sts_', 'statefulset'],
    ['tapp_', 'tapp'],
    ['NULL_', 'NULL'],
    ['foo_', 'foo'],
    ['', ''],
  ])('prefix %j is app type %j', (prefix, name) => {
    expect(appTypeName(prefix)).toBe(name);
    expect(AllocationKey.parse(`${prefix}ns_app_pod`).appType).toBe(prefix === '' ? '' : name);
  });

  test.each([
    ['StatefulSet', 'sts_'],
    ['statefulsets', 'sts_'],
    ['replicaset', 'dp_'],
    ['Deployment', 'dp_'],
    ['deployments', 'deployments_'],
    ['TApp', 'tapp_'],
    ['', '_'],
  ])('kind %j has prefix %j', (kind, prefix) => {
    expect(appTypePrefix(kind)).toBe(prefix);
  });

  // what GET /v1/ip prints as appType, POST /v1/ip and the list's filter must read back
  test.each([
    [{ name: 'web-0', owner: 'StatefulSet' }, 'statefulset'],
    [{ name: 'api-5f7-x', owner: 'ReplicaSet' }, 'deployment'],
    [{ name: 'x', owner: undefined }, 'NULL'],
    [{ name: 't-1', owner: 'TApp' }, 'tapp'],
    [{ name: 'n-1', owner: 'Null' }, 'null'],
  ])('the appType of a key FormatKey writes reads back to its prefix: %j', ({ name, owner }, appType) => {
    const key = pod(name, owner ? [{ kind: owner, name: owner === 'ReplicaSet' ? 'api-5f7' : 'app' }] : []);
    expect(key.appType).toBe(appType);
    expect(typePrefixOfAppType(key.appType)).toBe(key.typePrefix);
  });

  test('an empty appType is statefulset; other spellings are case-insensitive as galaxy', () => {
    expect(typePrefixOfAppType('')).toBe('sts_');
    expect(typePrefixOfAppType('Deployment')).toBe('dp_');
    expect(typePrefixOfAppType('TApp')).toBe('tapp_');
  });
});
