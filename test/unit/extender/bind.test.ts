// Bind as a unit: a store that writes straight to an allocator (recording each write), caches as
// plain maps, a binding call that can be made to fail. What it must never do: write before it has
// decided, leave a write behind when it fails, or hand a pod an address it cannot use.
import { Binder } from '../../../src/extender/bind.js';
import { NodeFacts } from '../../../src/extender/node-subnets.js';
import { Allocator, ReleasePolicy, parsePoolConfig } from '../../../src/ipam/index.js';
import { KubeApiError } from '../../../src/kube/custom-resources.js';
import pino from 'pino';
import { silentLogger, type Logger } from '../../../src/log.js';
import { CNI_ARGS_ANNOTATION } from '../../../src/cni/args.js';
import { DEFAULT_RESOURCE, POOL_ANNOTATION, RELEASE_POLICY_ANNOTATION } from '../../../src/pods/pod-facts.js';
import { DecisionLocks } from '../../../src/store/decision-locks.js';
import { cluster, memoryStore, node, pod, recordedEvents } from '../fakes.js';

const A = '10.0.1.0/24';
const config = parsePoolConfig([
  {
    nodeSubnets: [A],
    ips: ['10.0.100.10~10.0.100.11'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
    vlan: 3,
  },
  { nodeSubnets: [A], ips: ['fd00::10~fd00::11'], subnet: 'fd00::/64', gateway: 'fd00::1' },
]);

function setup(replicas = 1, log: Logger = silentLogger()) {
  const allocator = new Allocator(config);
  const store = memoryStore(allocator);
  const nodes = new NodeFacts(allocator);
  const world = cluster([node('a1', '10.0.1.11')]);
  const bindings: { pod: string; node: string; annotations: Record<string, string>; timeoutMs?: number }[] =
    [];
  let bindFails: Error | undefined;
  // the binding's answer as the API server gives it, one per attempt, after the default (bindFails)
  const answers: ((target: string) => Error | undefined)[] = [];
  const time = { now: 0 };
  const events = recordedEvents();
  const binder = new Binder(
    store,
    new DecisionLocks(),
    {
      ...world,
      fetchNode: (name: string) => Promise.resolve(world.node(name)),
      bind: (namespace, name, _uid, target, annotations, timeoutMs) => {
        const answer = answers.shift();
        const failure = answer ? answer(target) : bindFails;
        if (failure) return Promise.reject(failure);
        bindings.push({ pod: `${namespace}/${name}`, node: target, annotations, timeoutMs });
        return Promise.resolve();
      },
    },
    nodes,
    {
      appFacts: () => ({ deployment: { replicas, rolling: false, maxSurge: 0 } }),
      isScalable: () => false,
      readyFor: () => undefined,
    },
    events,
    log,
    { resource: DEFAULT_RESOURCE, clock: () => time.now },
  );
  const add = (p: ReturnType<typeof pod>) =>
    world.podMap.set(`${p.metadata!.namespace}/${p.metadata!.name}`, p);
  return {
    allocator,
    store,
    world,
    binder,
    bindings,
    events,
    add,
    time,
    answers,
    failBinding: (e: Error) => (bindFails = e),
  };
}

test('a new pod gets one address per family, written first, then bound with galaxy’s annotation', async () => {
  const { binder, store, bindings, add } = setup();
  add(pod('p1'));
  expect(await binder.bind('ns1', 'p1', 'uid-p1', 'a1')).toBe('');
  expect(store.writes).toEqual(['allocate NULL_ns1_NULL_p1']);
  expect(bindings).toEqual([
    {
      pod: 'ns1/p1',
      node: 'a1',
      annotations: {
        [CNI_ARGS_ANNOTATION]:
          '{"common":{"ipinfos":[{"ip":"10.0.100.10/24","vlan":3,"gateway":"10.0.100.1"},{"ip":"fd00::10/64","vlan":0,"gateway":"fd00::1"}]}}',
      },
      // galaxy's 3 s of retries, inside the bind's 4 s
      timeoutMs: 3000,
    },
  ]);
});

test('the UID rule: a re-created pod waits for its old incarnation, and nothing is written', async () => {
  const { binder, store, allocator, add, events } = setup();
  allocator.allocate({
    key: 'sts_ns1_web_web-0',
    nodeSubnet: A,
    attrs: { policy: ReleasePolicy.Immutable, nodeName: 'a1', podUid: 'old' },
  });
  add(pod('web-0', { uid: 'new', owner: { kind: 'StatefulSet', name: 'web' } }));
  expect(await binder.bind('ns1', 'web-0', 'new', 'a1')).toBe(
    'waiting for delete event of sts_ns1_web_web-0 before reuse this ip',
  );
  expect(store.writes).toEqual([]);
  expect(events.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'FloatingIPWaiting']]);
});

test('a failed binding undoes every write, and the Event says it failed', async () => {
  const { binder, store, allocator, add, failBinding, events } = setup();
  add(pod('p1'));
  failBinding(new KubeApiError(409, 'Conflict', 'pods "p1" is already assigned'));
  expect(await binder.bind('ns1', 'p1', 'uid-p1', 'a1')).toBe(
    'update pod NULL_ns1_NULL_p1: pods "p1" is already assigned',
  );
  expect(store.writes).toEqual(['allocate NULL_ns1_NULL_p1', 'release fd00::10', 'release 10.0.100.10']);
  expect(allocator.size).toBe(0);
  expect(events.events.map((e) => e.reason)).toEqual(['FloatingIPBindFailed']);
});

test('a failed binding whose address someone else freed meanwhile: the rest is undone, and that one is a warning, not an error', async () => {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const { binder, allocator, add, answers, failBinding } = setup(1, log);
  add(pod('p1'));
  const refused = new KubeApiError(409, 'Conflict', 'pods "p1" is already assigned');
  failBinding(refused);
  // its object deleted by hand while the binding was written, which memory follows
  answers.push(() => {
    allocator.unload('10.0.100.10');
    return refused;
  });
  expect(await binder.bind('ns1', 'p1', 'uid-p1', 'a1')).toBe(
    'update pod NULL_ns1_NULL_p1: pods "p1" is already assigned',
  );
  expect(allocator.size).toBe(0);
  expect(lines.filter((l) => Number(l.level) >= 40).map((l) => [l.level, l.msg, l.err])).toEqual([
    [40, 'a bind step was undone by someone else meanwhile', '10.0.100.10 is not allocated'],
    [40, 'bind failed', 'update pod NULL_ns1_NULL_p1: pods "p1" is already assigned'],
  ]);
});

const unanswered = () => new KubeApiError(0, '', 'bind pod ns1/p1 to a1: This operation was aborted');

test.each([
  // its answer was lost (timeout, connection reset, a restart)
  ['never answered', unanswered],
  // etcd took the write, the API server answered before it heard back
  [
    'failed inside the API server (5xx)',
    () => new KubeApiError(500, 'InternalError', 'etcdserver: request timed out'),
  ],
])(
  'a binding %s but applied is a bind: the 409 that follows is its own, nothing is undone',
  async (_, failure) => {
    const { binder, store, allocator, add, answers, time } = setup();
    add(pod('p1'));
    answers.push(
      (target) => {
        add(pod('p1', { nodeName: target }));
        time.now += 500;
        return failure();
      },
      () => new KubeApiError(409, 'Conflict', 'pod p1 is already assigned to node "a1"'),
    );
    expect(await binder.bind('ns1', 'p1', 'uid-p1', 'a1')).toBe('');
    expect(store.writes).toEqual(['allocate NULL_ns1_NULL_p1']);
    expect(allocator.byKey('NULL_ns1_NULL_p1').map((a) => a.ip)).toEqual(['10.0.100.10', 'fd00::10']);
  },
);

test('5xx until the budget is spent, the pod still unbound: the binding may yet be applied, so nothing is undone', async () => {
  const { binder, store, allocator, add, answers, time } = setup();
  add(pod('p1'));
  for (let i = 0; i < 3; i++) {
    answers.push(() => {
      time.now += 1000;
      return new KubeApiError(503, 'ServiceUnavailable', 'etcdserver: leader changed');
    });
  }
  expect(await binder.bind('ns1', 'p1', 'uid-p1', 'a1')).toMatch(
    /^update pod NULL_ns1_NULL_p1: the binding to a1 failed inside the API server, which may have applied it \(.*leader changed\) and the pod is not bound yet; its addresses stay held for it$/,
  );
  expect(allocator.byKey('NULL_ns1_NULL_p1')).toHaveLength(2);
  expect(store.writes).toEqual(['allocate NULL_ns1_NULL_p1']);
});

test('a binding never answered, the pod still unbound: it may land yet, so the pod keeps its addresses', async () => {
  const { binder, store, allocator, add, answers, time } = setup();
  add(pod('p1'));
  // three attempts fit galaxy's 3 s of retries
  for (let i = 0; i < 3; i++) {
    answers.push(() => {
      time.now += 1000;
      return unanswered();
    });
  }
  const error = await binder.bind('ns1', 'p1', 'uid-p1', 'a1');
  expect(error).toMatch(
    /^update pod NULL_ns1_NULL_p1: the binding to a1 was not answered .*its addresses stay held for it$/,
  );
  expect(store.writes).toEqual(['allocate NULL_ns1_NULL_p1']);
  expect(allocator.byKey('NULL_ns1_NULL_p1')).toHaveLength(2);
  // the scheduler's next try reuses them
  expect(await binder.bind('ns1', 'p1', 'uid-p1', 'a1')).toBe('');
  expect(store.writes).toEqual(['allocate NULL_ns1_NULL_p1']);
});

test('a binding never answered while the pod was deleted: nothing undone, the deletion releases by the pod’s policy', async () => {
  const { binder, store, allocator, add, answers } = setup();
  add(pod('p1'));
  answers.push(unanswered, () => new KubeApiError(404, 'NotFound', 'pods "p1" not found'));
  expect(await binder.bind('ns1', 'p1', 'uid-p1', 'a1')).toBe(
    'update pod NULL_ns1_NULL_p1: pods "p1" not found',
  );
  // as galaxy: the pod's deletion, not the bind, decides what its addresses become (README,
  // "The scheduler's calls")
  expect(store.writes).toEqual(['allocate NULL_ns1_NULL_p1']);
  expect(allocator.byKey('NULL_ns1_NULL_p1').map((a) => [a.ip, a.podUid])).toEqual([
    ['10.0.100.10', 'uid-p1'],
    ['fd00::10', 'uid-p1'],
  ]);
});

test('a Binding refused NotFound (the pod deleted meanwhile): nothing undone either', async () => {
  const { binder, store, allocator, add, answers } = setup();
  add(pod('p1'));
  answers.push(() => new KubeApiError(404, 'NotFound', 'pods "p1" not found'));
  expect(await binder.bind('ns1', 'p1', 'uid-p1', 'a1')).toBe(
    'update pod NULL_ns1_NULL_p1: pods "p1" not found',
  );
  expect(store.writes).toEqual(['allocate NULL_ns1_NULL_p1']);
  expect(allocator.byKey('NULL_ns1_NULL_p1')).toHaveLength(2);
});

test('no binding outlives the bind’s budget: the call is bounded by what is left, a spent budget writes nothing', async () => {
  const { binder, store, bindings, add } = setup();
  add(pod('p1'));
  add(pod('p2'));
  // what a forwarding replica says is left of the scheduler's wait
  expect(await binder.bind('ns1', 'p1', 'uid-p1', 'a1', 1200)).toBe('');
  expect(bindings.map((b) => b.timeoutMs)).toEqual([1200]);
  expect(await binder.bind('ns1', 'p2', 'uid-p2', 'a1', 100)).toMatch(
    /^bind of ns1\/p2 to a1 not started: its time ran out \(\d+ ms left of at most 4000 ms\)/,
  );
  expect(store.writes).toEqual(['allocate NULL_ns1_NULL_p1']);
});

test('a pod already bound is refused before anything is written, also right after this replica bound it', async () => {
  const { binder, store, add } = setup();
  add(pod('p1'));
  expect(await binder.bind('ns1', 'p1', 'uid-p1', 'a1')).toBe('');
  expect(await binder.bind('ns1', 'p1', 'uid-p1', 'a1')).toBe(
    'update pod NULL_ns1_NULL_p1: Operation cannot be fulfilled on pods/binding "p1": pod p1 is already assigned to node "a1"',
  );
  add(pod('p2', { nodeName: 'a9' }));
  expect(await binder.bind('ns1', 'p2', 'uid-p2', 'a1')).toBe(
    'update pod NULL_ns1_NULL_p2: Operation cannot be fulfilled on pods/binding "p2": pod p2 is already assigned to node "a9"',
  );
  expect(store.writes).toEqual(['allocate NULL_ns1_NULL_p1']);
});

test('a caller that stops waiting: before the lock, nothing is written; during the writes, they are undone and no binding is made', async () => {
  const { binder, store, bindings, add } = setup();
  add(pod('p1'));
  expect(await binder.bind('ns1', 'p1', 'uid-p1', 'a1', undefined, () => true)).toBe(
    'bind of ns1/p1 to a1 not started: its caller stopped waiting (the connection closed); the scheduler retries it',
  );
  expect(store.writes).toEqual([]);
  // gone by the time the addresses are written
  let asked = 0;
  expect(await binder.bind('ns1', 'p1', 'uid-p1', 'a1', undefined, () => ++asked > 1)).toBe(
    'bind of ns1/p1 to a1 undone before its binding: its caller stopped waiting (the connection closed); the scheduler retries it',
  );
  expect(store.writes).toEqual(['allocate NULL_ns1_NULL_p1', 'release fd00::10', 'release 10.0.100.10']);
  expect(bindings).toEqual([]);
});

test('two binds of one pod at once: the one behind the lock sees the first bound and writes nothing', async () => {
  const { binder, store, bindings, add } = setup();
  add(pod('p1'));
  expect(
    await Promise.all([binder.bind('ns1', 'p1', 'uid-p1', 'a1'), binder.bind('ns1', 'p1', 'uid-p1', 'a1')]),
  ).toEqual([
    '',
    'update pod NULL_ns1_NULL_p1: Operation cannot be fulfilled on pods/binding "p1": pod p1 is already assigned to node "a1"',
  ]);
  expect(store.writes).toEqual(['allocate NULL_ns1_NULL_p1']);
  expect(bindings).toHaveLength(1);
});

test('a Deployment pod takes its app’s parked address, and its limit holds under the app’s lock', async () => {
  const { binder, store, allocator, add } = setup(1);
  const parked = { policy: ReleasePolicy.Never, nodeName: '', podUid: '' };
  allocator.allocateIP('10.0.100.11', 'dp_ns1_web_', parked);
  allocator.allocateIP('fd00::11', 'dp_ns1_web_', parked);
  const owner = { kind: 'ReplicaSet', name: 'web-5d8f7c9b4' };
  const never = { [RELEASE_POLICY_ANNOTATION]: 'never' };
  add(pod('web-5d8f7c9b4-a', { owner, annotations: never }));
  add(pod('web-5d8f7c9b4-b', { owner, annotations: never }));
  const [a, b] = await Promise.all([
    binder.bind('ns1', 'web-5d8f7c9b4-a', 'uid-web-5d8f7c9b4-a', 'a1'),
    binder.bind('ns1', 'web-5d8f7c9b4-b', 'uid-web-5d8f7c9b4-b', 'a1'),
  ]);
  expect([a, b]).toEqual(['', 'deployment web has allocated 1 ips with replicas of 1, wait for releasing']);
  expect(allocator.byKey('dp_ns1_web_web-5d8f7c9b4-a').map((x) => x.ip)).toEqual(['10.0.100.11', 'fd00::11']);
  expect(store.writes).toEqual([
    'unpark dp_ns1_web_ dp_ns1_web_web-5d8f7c9b4-a',
    'unpark dp_ns1_web_ dp_ns1_web_web-5d8f7c9b4-a',
  ]);
});

test('a Deployment pod is given every family or none: an IPv6 range that is full refuses it before its IPv4 address is written', async () => {
  const { binder, store, allocator, add } = setup(10);
  const held = { policy: ReleasePolicy.PodDelete, nodeName: 'a1', podUid: 'u' };
  allocator.allocateIP('fd00::10', 'NULL_ns1_NULL_x', held);
  allocator.allocateIP('fd00::11', 'NULL_ns1_NULL_y', held);
  const owner = { kind: 'ReplicaSet', name: 'web-5d8f7c9b4' };
  for (const policy of ['never', 'immutable']) {
    add(pod(`web-5d8f7c9b4-${policy}`, { owner, annotations: { [RELEASE_POLICY_ANNOTATION]: policy } }));
    expect(await binder.bind('ns1', `web-5d8f7c9b4-${policy}`, '', 'a1')).toBe(
      `no enough available ips left: no free IPv6 address for dp_ns1_web_web-5d8f7c9b4-${policy} in node subnet ${A}`,
    );
  }
  expect(store.writes).toEqual([]);
  // a parked IPv6 address of the app serves where no free one does
  allocator.release('fd00::11', { key: 'NULL_ns1_NULL_y' });
  allocator.allocateIP('fd00::11', 'dp_ns1_web_', { policy: ReleasePolicy.Never, nodeName: '', podUid: '' });
  expect(await binder.bind('ns1', 'web-5d8f7c9b4-never', '', 'a1')).toBe('');
  expect(allocator.byKey('dp_ns1_web_web-5d8f7c9b4-never').map((x) => x.ip)).toEqual([
    '10.0.100.10',
    'fd00::11',
  ]);
});

test('bind refuses what filter refuses before anything is allocated: ranges for pods sharing their app’s addresses, a policy the pod cannot keep', async () => {
  const { binder, store, add } = setup(10);
  const owner = { kind: 'ReplicaSet', name: 'web-5d8f7c9b4' };
  const ranges = {
    [CNI_ARGS_ANNOTATION]: JSON.stringify({ request_ip_range: [['10.0.100.10~10.0.100.11']] }),
  };
  const immutable = { [RELEASE_POLICY_ANNOTATION]: 'immutable' };
  add(pod('web-5d8f7c9b4-a', { owner, annotations: { ...ranges, ...immutable } }));
  add(pod('web-5d8f7c9b4-b', { owner, annotations: { ...ranges, [POOL_ANNOTATION]: 'p7' } }));
  add(pod('lone', { annotations: immutable }));
  const ranged =
    'request ip ranges for deployment pod with release policy other than ReleasePolicyPodDelete is not supported';
  expect(await binder.bind('ns1', 'web-5d8f7c9b4-a', '', 'a1')).toBe(ranged);
  expect(await binder.bind('ns1', 'web-5d8f7c9b4-b', '', 'a1')).toBe(ranged);
  expect(await binder.bind('ns1', 'lone', '', 'a1')).toBe(
    "release policy immutable is not supported for pod lone: pod name doesn't match '.*-[0-9]*$', assume its parent is not a stateful workload",
  );
  expect(store.writes).toEqual([]);
  // with the default policy, ranges are a plain pod's to ask for
  add(pod('ranged', { annotations: ranges }));
  expect(await binder.bind('ns1', 'ranged', '', 'a1')).toBe('');
});

test('an unknown release policy binds with the default and warns on the pod', async () => {
  const { binder, add, events, allocator } = setup();
  add(pod('p1', { annotations: { [RELEASE_POLICY_ANNOTATION]: 'forever' } }));
  expect(await binder.bind('ns1', 'p1', 'uid-p1', 'a1')).toBe('');
  expect(allocator.byKey('NULL_ns1_NULL_p1').map((a) => a.policy)).toEqual([0, 0]);
  expect(events.events.map((e) => [e.type, e.reason, e.object.name])).toEqual([
    ['Warning', 'UnknownReleasePolicy', 'p1'],
  ]);
});

test('a refusal before any decision is logged, naming the pod, the node and why', async () => {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const { binder, add, events } = setup(1, log);
  add(pod('p1'));
  add(pod('plain', { wants: false }));
  await binder.bind('ns1', 'nope', '', 'a1');
  await binder.bind('ns1', 'p1', 'other', 'a1');
  await binder.bind('ns1', 'plain', '', 'a1');
  expect(lines.map((l) => [l.msg, l.pod, l.node, l.kind, l.err])).toEqual([
    ['bind failed', 'ns1/nope', 'a1', 'validation', 'failed to find pod ns1_nope: pod "nope" not found'],
    [
      'bind failed',
      'ns1/p1',
      'a1',
      'validation',
      "failed to find pod ns1_p1: uid other is not the pod's (uid-p1)",
    ],
    [
      'bind failed',
      'ns1/plain',
      'a1',
      'validation',
      "pod which doesn't want floatingip have been sent to plugin",
    ],
  ]);
  // the refusals are about what the scheduler sent, not about the pods: no Events
  expect(events.events).toEqual([]);
});

test('refusals before any write: unknown pod, other incarnation, no resource, unknown node, node without a subnet', async () => {
  const { binder, store, add, world } = setup();
  world.nodeMap.set('x1', node('x1', '10.48.28.2'));
  world.nodeMap.set('noip', node('noip'));
  add(pod('p1'));
  add(pod('plain', { wants: false }));
  expect(await binder.bind('ns1', 'nope', '', 'a1')).toBe(
    'failed to find pod ns1_nope: pod "nope" not found',
  );
  expect(await binder.bind('ns1', 'p1', 'other', 'a1')).toBe(
    "failed to find pod ns1_p1: uid other is not the pod's (uid-p1)",
  );
  expect(await binder.bind('ns1', 'plain', '', 'a1')).toBe(
    "pod which doesn't want floatingip have been sent to plugin",
  );
  expect(await binder.bind('ns1', 'p1', '', 'z9')).toBe('nodes "z9" not found');
  // galaxy's node-subnet reasons, as its bind returns them, then which node
  expect(await binder.bind('ns1', 'p1', '', 'x1')).toBe('FloatingIPPlugin:NoFIPConfigNode (node x1)');
  expect(await binder.bind('ns1', 'p1', '', 'noip')).toBe('FloatingIPPlugin:UnknowNode (node noip)');
  expect(store.writes).toEqual([]);
});
