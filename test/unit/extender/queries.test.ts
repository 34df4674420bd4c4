// The read-only verbs as units: an allocator in a known state, caches as plain maps, and the
// answers kube-scheduler would get. Nothing here writes, and nothing a request says is believed.
import { SchedulingQueries } from '../../../src/extender/queries.js';
import { NodeFacts } from '../../../src/extender/node-subnets.js';
import { Allocator, ReleasePolicy, parsePoolConfig } from '../../../src/ipam/index.js';
import { silentLogger } from '../../../src/log.js';
import { DEFAULT_RESOURCE, RELEASE_POLICY_ANNOTATION } from '../../../src/pods/pod-facts.js';
import { cluster, node, pod } from '../fakes.js';

const A = '10.0.1.0/24';
const B = '10.0.2.0/24';
const config = parsePoolConfig([
  { nodeSubnets: [A], ips: ['10.0.100.10~10.0.100.11'], subnet: '10.0.100.0/24', gateway: '10.0.100.1' },
  { nodeSubnets: [B], ips: ['10.0.101.10~10.0.101.13'], subnet: '10.0.101.0/24', gateway: '10.0.101.1' },
]);
const attrs = { policy: ReleasePolicy.PodDelete, nodeName: 'n', podUid: 'u' };

function setup(options: { replicas?: number } = {}) {
  const allocator = new Allocator(config);
  const nodes = new NodeFacts(allocator);
  const world = cluster([
    node('a1', '10.0.1.11'),
    node('b1', '10.0.2.11'),
    node('x1', '192.168.1.1'),
    node('none'),
  ]);
  for (const n of world.nodeMap.values()) nodes.observe(n);
  const refusals: string[] = [];
  const queries = new SchedulingQueries(
    allocator,
    nodes,
    world,
    {
      appFacts: () => ({ deployment: { replicas: options.replicas ?? 1, rolling: false, maxSurge: 0 } }),
      isScalable: () => false,
      readyFor: () => undefined,
    },
    silentLogger(),
    DEFAULT_RESOURCE,
    {
      refused: (ns, name) => refusals.push(`uid ${ns}/${name}`),
      refusedForApp: (prefix, ns, name) => refusals.push(`app ${prefix} ${ns}/${name}`),
      refusedForSubnets: (ns, name, _uid, subnets) =>
        refusals.push(`subnets ${[...subnets].join(',')} ${ns}/${name}`),
      bound: () => undefined,
    },
  );
  return { allocator, queries, world, refusals };
}

const NAMES = ['a1', 'b1', 'x1', 'none', 'ghost'];

test('filter by names: nodes whose subnet can serve pass; the others carry galaxy’s reasons', () => {
  const { queries } = setup();
  const result = queries.filter(pod('p1'), undefined, NAMES);
  expect(result.nodeNames).toEqual(['a1', 'b1']);
  expect({ ...result.failedNodes }).toEqual({
    x1: 'FloatingIPPlugin:NoFIPConfigNode',
    none: 'FloatingIPPlugin:UnknowNode',
    ghost: 'FloatingIPPlugin:UnknowNode',
  });
});

test('filter: a pod that wants no address gets every node back', () => {
  const { queries } = setup();
  expect(queries.filter(pod('p1', { wants: false }), undefined, NAMES).nodeNames).toEqual(NAMES);
});

test('filter: an exhausted subnet fails its nodes, and a cached pod no node can take waits for it', () => {
  const { allocator, queries, world, refusals } = setup();
  for (const key of ['NULL_ns1_NULL_q1', 'NULL_ns1_NULL_q2'])
    allocator.allocate({ key, nodeSubnet: A, attrs });
  const p1 = pod('p1');
  expect(queries.filter(p1, undefined, ['a1']).failedNodes.a1).toBe('FloatingIPPlugin:NoFIPLeft');
  // not remembered: the cache does not have this pod
  expect(refusals).toEqual([]);
  world.podMap.set('ns1/p1', p1);
  queries.filter(p1, undefined, ['a1']);
  expect(refusals).toEqual([`subnets ${A} ns1/p1`]);
});

test('filter: a refused pod the cache does not have yet is remembered once it has that incarnation', () => {
  const { allocator, queries, refusals } = setup();
  for (const key of ['NULL_ns1_NULL_q1', 'NULL_ns1_NULL_q2'])
    allocator.allocate({ key, nodeSubnet: A, attrs });
  const p1 = pod('p1');
  queries.filter(p1, undefined, ['a1']);
  // kube-scheduler's watch delivered the pod before floatip's: held, not yet told
  expect(refusals).toEqual([]);
  queries.podCached({ ...p1, metadata: { ...p1.metadata, uid: 'another-incarnation' } });
  expect(refusals).toEqual([]);
  queries.podCached(p1);
  expect(refusals).toEqual([`subnets ${A} ns1/p1`]);
  // once only
  queries.podCached(p1);
  expect(refusals).toEqual([`subnets ${A} ns1/p1`]);
  // a pod bound before the cache had it waits for nothing
  const p2 = pod('p2');
  queries.filter(p2, undefined, ['a1']);
  queries.podCached({ ...p2, spec: { ...p2.spec!, nodeName: 'a1' } });
  expect(refusals).toEqual([`subnets ${A} ns1/p1`]);
});

test('filter with full Nodes: the cache’s node decides, not the request’s; an unknown one is judged from it', () => {
  const { allocator, queries } = setup();
  for (let i = 0; i < 4; i++) allocator.allocate({ key: `NULL_ns1_NULL_q${i}`, nodeSubnet: B, attrs });
  const claim = (name: string, address: string) => ({
    ...node(name, address),
    metadata: { name, resourceVersion: '99' },
  });
  // only A can serve: a1 passes whatever it claims, b1 fails whatever it claims
  const result = queries.filter(
    pod('p1'),
    [claim('a1', '10.0.2.50'), claim('b1', '10.0.1.50'), claim('n9', '10.0.2.77'), claim('n8', '10.0.1.77')],
    undefined,
  );
  expect(result.nodes!.map((n) => n.metadata!.name)).toEqual(['a1', 'n8']);
  expect({ ...result.failedNodes }).toEqual({
    b1: 'FloatingIPPlugin:NoFIPLeft',
    n9: 'FloatingIPPlugin:NoFIPLeft',
  });
});

test('filter: a Deployment at its limit is refused with galaxy’s text, and waits when the cache has it', () => {
  const { allocator, queries, world, refusals } = setup({ replicas: 1 });
  const owner = { kind: 'ReplicaSet', name: 'web-5d8f7c9b4' };
  allocator.allocate({
    key: 'dp_ns1_web_web-5d8f7c9b4-a',
    nodeSubnet: A,
    attrs: { ...attrs, policy: ReleasePolicy.Never },
  });
  const p = pod('web-5d8f7c9b4-b', { owner, annotations: { [RELEASE_POLICY_ANNOTATION]: 'never' } });
  world.podMap.set('ns1/web-5d8f7c9b4-b', p);
  const result = queries.filter(p, undefined, ['a1', 'b1']);
  expect([result.nodeNames, result.error]).toEqual([
    [],
    'deployment web has allocated 1 ips with replicas of 1, wait for releasing',
  ]);
  expect(refusals).toEqual(['app dp_ns1_web_ ns1/web-5d8f7c9b4-b']);
});

test('prioritize: 10 where the pod keeps its address, else 0-9 by free room', () => {
  const { allocator, queries } = setup();
  expect(queries.prioritize(pod('p1'), undefined, ['a1', 'b1', 'x1'])).toEqual([
    { host: 'a1', score: 4 },
    { host: 'b1', score: 9 },
    { host: 'x1', score: 0 },
  ]);
  allocator.allocate({ key: 'NULL_ns1_NULL_p1', nodeSubnet: A, attrs });
  expect(queries.prioritize(pod('p1'), undefined, ['a1', 'b1']).map((p) => p.score)).toEqual([10, 9]);
});

test('prioritize by names, the same list asked again: the scores follow the free addresses and each pod’s own', () => {
  const { allocator, queries } = setup();
  const ask = (who: string) =>
    queries.prioritize(pod(who), undefined, ['a1', 'b1', 'x1']).map((p) => p.score);
  const takeInB = (who: string) => allocator.allocate({ key: `NULL_ns1_NULL_${who}`, nodeSubnet: B, attrs });
  // A has 2 addresses, B 4
  expect(ask('p1')).toEqual([4, 9, 0]);
  takeInB('q1');
  expect(ask('p2')).toEqual([6, 9, 0]);
  takeInB('q2');
  expect(ask('p3')).toEqual([9, 9, 0]);
  takeInB('q3');
  expect(ask('p4')).toEqual([9, 4, 0]);
  // a pod that holds an address in B, among pods that do not
  expect(ask('q1')).toEqual([9, 10, 0]);
  expect(ask('p5')).toEqual([9, 4, 0]);
  allocator.release('10.0.101.10', { key: 'NULL_ns1_NULL_q1', podUid: 'u' });
  expect(ask('q1')).toEqual([9, 9, 0]);
});

test('preempt keeps candidates whose subnet can serve the preemptor, and changes nothing', () => {
  const { allocator, queries } = setup();
  const victims = new Map([
    ['a1', { pods: [{ uid: 'v1' }], numPDBViolations: 0 }],
    ['x1', { pods: [{ uid: 'v2' }], numPDBViolations: 0 }],
    ['ghost', { pods: [{ uid: 'v3' }], numPDBViolations: 0 }],
  ]);
  expect([...queries.preempt(pod('p1'), victims)!.keys()]).toEqual(['a1']);
  expect(allocator.size).toBe(0);
});

test('preempt for a pod whose placement fails (galaxy keeps every candidate) still drops nodes no entry serves', () => {
  const { queries } = setup();
  const victims = new Map(
    ['a1', 'b1', 'x1', 'none', 'ghost'].map((n) => [n, { pods: [{ uid: `v-${n}` }], numPDBViolations: 0 }]),
  );
  // a bare pod kept by policy `never` needs a name ending in -<n>; this one has none
  const bare = pod('bare', { annotations: { [RELEASE_POLICY_ANNOTATION]: 'never' } });
  expect(queries.filter(bare, undefined, NAMES).error).not.toBe('');
  expect([...queries.preempt(bare, victims)!.keys()]).toEqual(['a1', 'b1']);
});
