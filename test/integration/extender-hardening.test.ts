// Issue 13, the extender's points: what floatip believes about nodes comes from the API server, not
// from a request (13.2); nothing a request names is remembered without bound (13.3); a request of
// the wrong shape is a 400, never a 500 (13.5); a refused bind writes nothing (13.16); an unknown
// release policy is galaxy's default, with a Warning Event (13.12).
import { connect } from 'node:net';
import type { V1Node } from '@kubernetes/client-node';
import { eventually } from './helpers.js';
import { World } from './world.js';
import { CNI_ARGS_ANNOTATION } from '../../src/cni/args.js';
import { clip } from '../../src/clip.js';

const A = '10.0.1.0/24';
const B = '10.0.2.0/24';
const CONFIG = [
  { nodeSubnets: [A], ips: ['10.0.100.10~10.0.100.40'], subnet: '10.0.100.0/24', gateway: '10.0.100.1' },
  { nodeSubnets: [B], ips: ['10.0.101.10~10.0.101.12'], subnet: '10.0.101.0/24', gateway: '10.0.101.1' },
];

let world: World;
beforeEach(async () => {
  world = await World.start({ config: CONFIG });
  await world.node('a1', '10.0.1.11');
  await world.node('b1', '10.0.2.11');
});
afterEach(() => world.checkAndStop());

/** The scheduler's bind of `pod` (in ns1) to a1. */
const bindingArgs = (pod: { metadata?: { name?: string; uid?: string } }) =>
  JSON.stringify({ PodName: pod.metadata!.name, PodNamespace: 'ns1', PodUID: pod.metadata!.uid, Node: 'a1' });

/** The filter answer's raw text and the Node objects in it. */
async function filterObjects(pod: unknown, items: unknown[]) {
  const res = await world.post('filter', { Pod: pod, Nodes: { metadata: {}, items }, NodeNames: null });
  expect(res.status).toBe(200);
  return res.json as { Nodes: { items: V1Node[] }; FailedNodes: Record<string, string>; Error: string };
}

describe('13.2 a request cannot steer what floatip believes about a node', () => {
  test('a forged Node at the next resourceVersion: echoed to its sender only, and bind uses the real node', async () => {
    const pod = await world.pod({ name: 'p1' });
    const real = await world.core.readNode({ name: 'a1' });
    const next = String(world.server.revision() + 1);
    const forged = {
      ...real,
      metadata: { ...real.metadata, resourceVersion: next, labels: { forged: 'yes' } },
      status: { ...real.status, addresses: [{ type: 'InternalIP', address: '10.0.2.99' }] },
    };
    const answer = await filterObjects(pod, [forged]);
    // the sender gets its own bytes back: the scheduler's own objects, whatever they say
    expect(answer.Nodes.items).toEqual([JSON.parse(JSON.stringify(forged))]);
    // an ordinary label patch lands at exactly that resourceVersion
    const patched = await world.core.patchNode({
      name: 'a1',
      body: [{ op: 'add', path: '/metadata/labels', value: { zone: 'z1' } }],
    });
    expect(patched.metadata?.resourceVersion).toBe(next);
    await world.settle();
    // an honest caller gets the real node back, not the forged one
    const honest = await filterObjects(pod, [patched]);
    expect(honest.Nodes.items[0]!.metadata?.labels).toEqual({ zone: 'z1' });
    expect(honest.Nodes.items[0]!.status?.addresses).toEqual([{ type: 'InternalIP', address: '10.0.1.11' }]);
    // and the bind decides from the API server's node: an address of a1's node subnet
    expect(await world.bind(pod, 'a1')).toBe('');
    expect(await world.addressesOf('p1')).toEqual(['10.0.100.10']);
  });

  test('a forged address for a real node does not move its node subnet in filter either', async () => {
    const pod = await world.pod({ name: 'p1' });
    // fill B, so that only A can serve
    for (const name of ['q1', 'q2', 'q3']) expect(await world.bind(await world.pod({ name }), 'b1')).toBe('');
    const a1 = await world.core.readNode({ name: 'a1' });
    const b1 = await world.core.readNode({ name: 'b1' });
    const swap = (node: V1Node, address: string) => ({
      ...node,
      metadata: { ...node.metadata, resourceVersion: '999999' },
      status: { ...node.status, addresses: [{ type: 'InternalIP', address }] },
    });
    const answer = await filterObjects(pod, [swap(a1, '10.0.2.50'), swap(b1, '10.0.1.50')]);
    expect(answer.Nodes.items.map((n) => n.metadata?.name)).toEqual(['a1']);
    expect(answer.FailedNodes).toEqual({ b1: 'FloatingIPPlugin:NoFIPLeft' });
  });

  test('a node the API server does not know is judged from the request, for that request only', async () => {
    const pod = await world.pod({ name: 'p1' });
    const ghost = {
      metadata: { name: 'ghost', resourceVersion: '1' },
      status: { addresses: [{ type: 'InternalIP', address: '10.0.1.77' }] },
    };
    expect((await filterObjects(pod, [ghost])).Nodes.items.map((n) => n.metadata?.name)).toEqual(['ghost']);
    expect(world.floatip.nodeFacts.remembered().nodes).toBe(2);
    expect(await world.bind(pod, 'ghost')).toBe('nodes "ghost" not found');
  });
});

describe('13.3 memory does not grow with what requests name', () => {
  test('60,000 distinct node names and 2,000 unknown full Nodes leave only the cluster’s nodes remembered', async () => {
    const pod = await world.pod({ name: 'p1' });
    for (let r = 0; r < 12; r++) {
      const names = Array.from({ length: 5000 }, (_, i) => `n-${r}-${i}`);
      const res = await world.post('filter', { Pod: pod, Nodes: null, NodeNames: names });
      expect(res.status).toBe(200);
    }
    const items = Array.from({ length: 2000 }, (_, i) => ({
      metadata: { name: `full-${i}`, resourceVersion: String(i) },
      status: { addresses: [{ type: 'InternalIP', address: '10.0.1.99' }] },
    }));
    await filterObjects(pod, items);
    const remembered = world.floatip.nodeFacts.remembered();
    expect(remembered.nodes).toBe(2);
    expect(remembered.names).toBeLessThanOrEqual(remembered.lists * 2);
  });

  test('filters naming pods the API server does not have are not remembered as waiting pods', async () => {
    for (const name of ['q1', 'q2', 'q3']) expect(await world.bind(await world.pod({ name }), 'b1')).toBe('');
    for (let i = 0; i < 500; i++) {
      const ghost = {
        metadata: { name: `ghost-${i}`, namespace: 'ns1', uid: `u-${i}` },
        spec: { containers: [{ resources: { requests: { 'tke.cloud.tencent.com/eni-ip': '1' } } }] },
      };
      const res = await world.post('filter', { Pod: ghost, NodeNames: ['b1'] });
      expect((res.json as { FailedNodes: unknown }).FailedNodes).toEqual({
        b1: 'FloatingIPPlugin:NoFIPLeft',
      });
    }
    expect(world.floatip.requeue.waiting).toBe(0);
    // a real pod refused alike is remembered, to be sent back when B frees an address
    const real = await world.pod({ name: 'p1' });
    await world.post('filter', { Pod: real, NodeNames: ['b1'] });
    expect(world.floatip.requeue.waiting).toBe(1);
  });
});

describe('13.5 a request of the wrong shape is a 400 naming the field', () => {
  const wants = { requests: { 'tke.cloud.tencent.com/eni-ip': '1' } };
  test.each([
    [
      'filter',
      { Pod: { metadata: { name: 'p' }, spec: { containers: 'x' } }, NodeNames: ['a1'] },
      'Pod.spec.containers must be a list',
    ],
    [
      'filter',
      { Pod: { metadata: { name: 'p' }, spec: { containers: [5] } }, NodeNames: ['a1'] },
      'Pod.spec.containers[0] must be a JSON object',
    ],
    [
      'prioritize',
      { Pod: { metadata: { name: 'p' }, spec: { containers: 'x' } }, NodeNames: ['a1'] },
      'Pod.spec.containers must be a list',
    ],
    [
      'preempt',
      { Pod: { metadata: { name: 'p' }, spec: { containers: [5] } }, NodeNameToMetaVictims: {} },
      'Pod.spec.containers[0] must be a JSON object',
    ],
    [
      'filter',
      {
        Pod: { metadata: { name: 'p' }, spec: { containers: [{ resources: wants }] } },
        Nodes: { items: [{ metadata: { name: 'a1' }, status: { addresses: [[[[]]]] } }] },
      },
      'Nodes.items[0].status.addresses[0] must be a JSON object',
    ],
    [
      // Go's decoder refuses 1.0 for an int; JSON.parse reads it as 1
      'preempt',
      '{"Pod":{"metadata":{"name":"p"}},"NodeNameToVictims":{"n1":{"Pods":[],"numPDBViolations":2e0}}}',
      'victims of n1: NumPDBViolations must be an integer, not 2e0',
    ],
  ])('%s %j', async (verb, body, message) => {
    const res = await world.post(verb, body);
    expect([res.status, res.json]).toEqual([400, { Error: message }]);
  });

  test('preempt answers an int64 past 2^53 as it was written, as Go echoes an int64', async () => {
    const pod = await world.pod({ name: 'p1' });
    const body = `{"Pod":${JSON.stringify(pod)},"NodeNameToMetaVictims":{"a1":{"Pods":[{"UID":"v1"}],"NumPDBViolations":9223372036854775807}}}`;
    const res = await world.post('preempt', body);
    expect([res.status, res.text]).toEqual([
      200,
      '{"NodeNameToMetaVictims":{"a1":{"Pods":[{"UID":"v1"}],"NumPDBViolations":9223372036854775807}}}',
    ]);
  });

  test('a body with anything after its JSON value is a 400 on both ports, and nothing is bound', async () => {
    const pod = await world.pod({ name: 'p1' });
    const bind = bindingArgs(pod);
    const res = await world.post('bind', `${bind} junk`);
    expect([res.status, res.json]).toEqual([
      400,
      { Error: `bad request: Unexpected non-whitespace character after JSON at position ${bind.length + 1}` },
    ]);
    expect(world.floatip.allocator.size).toBe(0);
    const rest = await world.rest('POST', '/v1/ip', '{"ips":[]}{"ips":[]}');
    expect([rest.status, (rest.json as { message: string }).message]).toEqual([
      400,
      'bad request: invalid JSON: Unexpected non-whitespace character after JSON at position 10',
    ]);
    // white space after it is no content
    expect((await world.post('bind', `${bind}\n\t `)).json).toEqual({ Error: '' });
    expect(world.floatip.allocator.size).toBe(1);
  });

  test('a bind body is a few short strings: one over 64 KiB is a 413 before it is parsed', async () => {
    const pod = await world.pod({ name: 'p1' });
    const pad = 'x'.repeat(70_000);
    const res = await world.post('bind', { PodName: 'p1', PodNamespace: 'ns1', Node: 'a1', pad });
    expect([res.status, res.json]).toEqual([413, { Error: 'the request body is over 65536 bytes' }]);
    // a filter of that size is read, as full Nodes make filters large
    expect((await world.post('filter', { Pod: pod, NodeNames: ['a1'], pad })).status).toBe(200);
    expect(await world.bind(pod, 'a1')).toBe('');
  });

  test('a pod asking for 8,000 interfaces (request_ip_range groups) is refused by filter and bind, and floatip stays up', async () => {
    // a 264 KB annotation in the filter's pod ran floatip out of memory; one of 3,000 groups the API
    // server stores held a bind for 8 s
    const many = (n: number) => Array.from({ length: n }, () => ['fd00:100::10~fd00:100::ffff']);
    const refused = 'request_ip_range has 3000 groups, one interface each; floatip gives a pod at most 64';
    const pod = await world.pod({ name: 'p1', ranges: many(3000) });
    expect(await world.filter(pod, ['a1', 'b1'])).toMatchObject({ passed: [], error: refused });
    expect(await world.bind(pod, 'a1')).toBe(refused);
    const forged = {
      ...pod,
      metadata: {
        ...pod.metadata,
        annotations: { [CNI_ARGS_ANNOTATION]: JSON.stringify({ request_ip_range: many(8000) }) },
      },
    };
    expect((await world.filter(forged, ['a1'])).error).toBe(refused.replace('3000', '8000'));
    expect(world.floatip.allocator.byKey('NULL_ns1_NULL_p1')).toEqual([]);
    const ok = await world.pod({ name: 'p2' });
    expect(await world.bind(ok, 'a1')).toBe('');
  });

  test('a full Node nested 20,000 levels deep in a field floatip does not read is echoed as it came', async () => {
    const pod = await world.pod({ name: 'p1' });
    const a1 = await world.core.readNode({ name: 'a1' });
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const node = JSON.stringify(a1).replace(/^\{/, `{"deep":${deep},`);
    const body = `{"Pod":${JSON.stringify(pod)},"Nodes":{"items":[${node}]},"NodeNames":null}`;
    const res = await world.post('filter', body);
    expect(res.status).toBe(200);
    expect(res.text).toContain(`"items":[${node}]`);
  });
});

describe('a caller’s long text comes back clipped in an Error, as in a REST refusal, an Event or a log line', () => {
  /** An Error text clipped: its first 4,096 characters and how long it was; that length. */
  const clippedLength = (error: unknown): number => {
    expect(typeof error).toBe('string');
    const text = error as string;
    expect(text.length).toBeLessThan(4200);
    const stated = /^[^]{4096}\.\.\. \((\d+) characters\)$/.exec(text)?.[1];
    expect(stated).toBeDefined();
    return Number(stated);
  };
  const errorOf = (res: { status: number; json: unknown }) => {
    expect(res.status).toBe(200);
    return (res.json as { Error: string }).Error;
  };

  test('filter of a pod whose request_ip_range holds a 100,000-character range', async () => {
    const range = `10.0.100.20~${'1'.repeat(100_000)}`;
    const error = errorOf(
      await world.post('filter', {
        Pod: {
          metadata: {
            name: 'p',
            namespace: 'ns1',
            annotations: { [CNI_ARGS_ANNOTATION]: JSON.stringify({ request_ip_range: [[range]] }) },
          },
          spec: { containers: [{ resources: { requests: { 'tke.cloud.tencent.com/eni-ip': '1' } } }] },
        },
        NodeNames: ['a1'],
      }),
    );
    expect(error.startsWith('bad IPRange format')).toBe(true);
    expect(clippedLength(error)).toBeGreaterThan(100_000);
  });

  test('bind to a node named by 60,000 characters, and of a pod named by 60,000', async () => {
    const p1 = await world.pod({ name: 'p1' });
    const node = errorOf(
      await world.post('bind', {
        PodName: 'p1',
        PodNamespace: 'ns1',
        PodUID: p1.metadata?.uid,
        Node: 'n'.repeat(60_000),
      }),
    );
    expect(node.startsWith('nodes "nnn')).toBe(true);
    expect(clippedLength(node)).toBe('nodes "" not found'.length + 60_000);
    const pod = errorOf(
      await world.post('bind', { PodName: 'p'.repeat(60_000), PodNamespace: 'ns1', PodUID: '', Node: 'a1' }),
    );
    expect(pod.startsWith(`failed to find pod ns1_${'p'.repeat(100)}`)).toBe(true);
    expect(clippedLength(pod)).toBeGreaterThan(120_000);
    expect(await world.addressesOf('p1')).toEqual([]);
  });

  test('bind of a stored pod whose pool is named by 200,000 characters, and nothing is written', async () => {
    const pod = await world.pod({ name: 'big-0', pool: 'p'.repeat(200_000), ranges: [['1.2.3.4~1.2.3.5']] });
    const error = errorOf(
      await world.post('bind', {
        PodName: 'big-0',
        PodNamespace: 'ns1',
        PodUID: pod.metadata?.uid,
        Node: 'a1',
      }),
    );
    expect(clippedLength(error)).toBeGreaterThan(200_000);
    expect(await world.addressesOf('big-0')).toEqual([]);
  });
});

describe('13.16 a refused bind decides before it writes', () => {
  test('names that are not path segments reach no URL: `..` is no pod, no namespace and no node', async () => {
    const pod = await world.pod({ name: 'p1' });
    const bind = (PodNamespace: string, PodName: string, Node: string, PodUID = '') =>
      world.post('bind', { PodName, PodNamespace, PodUID, Node }).then((r) => r.json);
    // in a URL, pods/.. is the namespace and pods/. the pod list: neither may be taken for a pod
    for (const name of ['..', '.', 'a%2f..', 'x/..'])
      expect(await bind('ns1', name, 'a1')).toEqual({
        Error: `failed to find pod ns1_${name}: pod "${name}" not found`,
      });
    const namespace = await world.core.readNamespace({ name: 'ns1' });
    expect(await bind('ns1', '..', 'a1', namespace.metadata!.uid!)).toEqual({
      Error: 'failed to find pod ns1_..: pod ".." not found',
    });
    expect(await bind('..', 'ns1', 'a1')).toEqual({
      Error: 'failed to find pod .._ns1: pod "ns1" not found',
    });
    // a lone surrogate (JSON's "\ud800") has no UTF-8 form: no pod, namespace or node has it, and
    // it is not the API server failing (it read `get pod ns1/p\ud800: URI malformed`, logged as
    // transient)
    expect(await bind('ns1', 'p\ud800', 'a1')).toEqual({
      Error: 'failed to find pod ns1_p\ud800: pod "p\ud800" not found',
    });
    expect(await bind('ns1\udc00', 'p1', 'a1')).toEqual({
      Error: 'failed to find pod ns1\udc00_p1: pod "p1" not found',
    });
    // longer than Kubernetes allows: no such pod, not the API server failing (it answered 431)
    const long = 'p'.repeat(20_000);
    // (its text clipped as every Error is: ERROR_TEXT_LIMIT)
    expect(await bind('ns1', long, 'a1')).toEqual({
      Error: clip(`failed to find pod ns1_${long}: pod "${long}" not found`, 4096),
    });
    expect(await bind('ns1', 'p1', 'n'.repeat(20_000), pod.metadata!.uid!)).toEqual({
      Error: clip(`nodes "${'n'.repeat(20_000)}" not found`, 4096),
    });
    // nodes/.. is the API's root, nodes/. the node list
    for (const node of ['..', '.', 'a1\ud800'])
      expect(await bind('ns1', 'p1', node, pod.metadata!.uid!)).toEqual({
        Error: `nodes "${node}" not found`,
      });
    expect(await world.addressesOf('p1')).toEqual([]);
    expect(await bind('ns1', 'p1', 'a1', pod.metadata!.uid!)).toEqual({ Error: '' });
  });

  test('a bind whose caller has closed its connection (a replica paused past the scheduler’s wait) binds nothing and writes nothing', async () => {
    const pod = await world.pod({ name: 'p1' });
    const body = bindingArgs(pod);
    const { hostname, port } = new URL(world.floatip.extenderUrl);
    // the request and the end of the connection arrive together, as to a replica that resumes
    const socket = connect(Number(port), hostname);
    socket.on('error', () => undefined);
    socket.end(
      `POST /v1/bind HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await new Promise((resolve) => socket.on('close', resolve));
    // floatip closes its end at once; the bind it had started ends with a Warning Event saying why
    // (before a write, or after its writes were undone), and only then is its outcome for reading
    await eventually('the bind to end', async () => {
      await world.floatip.events.flush();
      const events = await world.core.listNamespacedEvent({ namespace: 'ns1' });
      return events.items.some(
        (e) => e.involvedObject.name === 'p1' && /its caller stopped waiting/.test(e.message ?? ''),
      );
    });
    expect(world.floatip.allocator.byKey('NULL_ns1_NULL_p1')).toEqual([]);
    expect(await world.addressesOf('p1')).toEqual([]);
    expect(
      (await world.core.readNamespacedPod({ namespace: 'ns1', name: 'p1' })).spec?.nodeName,
    ).toBeUndefined();
    // the scheduler's next try, waiting for its answer, binds it
    expect(await world.bind(pod, 'a1')).toBe('');
  });

  test('binding a bound pod again, to another node, is refused and writes no FloatingIP', async () => {
    const pod = await world.pod({ name: 'p1' });
    expect(await world.bind(pod, 'a1')).toBe('');
    const object = () =>
      world.custom.getClusterCustomObject({
        group: 'galaxy.k8s.io',
        version: 'v1alpha1',
        plural: 'floatingips',
        name: '10.0.100.10',
      }) as Promise<{ metadata: { resourceVersion: string } }>;
    const before = (await object()).metadata.resourceVersion;
    // at once, before the pod cache may show the binding, and again once it does
    expect(await world.bind(pod, 'a2')).toBe(
      'update pod NULL_ns1_NULL_p1: Operation cannot be fulfilled on pods/binding "p1": pod p1 is already assigned to node "a1"',
    );
    await world.settle();
    expect(await world.bind(pod, 'b1')).toBe(
      'update pod NULL_ns1_NULL_p1: Operation cannot be fulfilled on pods/binding "p1": pod p1 is already assigned to node "a1"',
    );
    expect((await object()).metadata.resourceVersion).toBe(before);
    expect(await world.addressesOf('p1')).toEqual(['10.0.100.10']);
    // the words galaxy answers with: the API server's refusal of that Binding, after `update pod <key>: `
    const refused = await world.core
      .createNamespacedPodBinding({
        name: 'p1',
        namespace: 'ns1',
        body: { metadata: { name: 'p1' }, target: { kind: 'Node', name: 'a2' } },
      })
      .then(
        () => 'bound',
        (err: { body?: string }) => (JSON.parse(err.body ?? '{}') as { message?: string }).message,
      );
    expect(await world.bind(pod, 'a2')).toBe(`update pod NULL_ns1_NULL_p1: ${refused}`);
  });
});

describe('13.12 an unknown release-policy value', () => {
  test('means galaxy’s default, and a Warning Event on the pod names it', async () => {
    const pod = await world.pod({
      name: 'web-0',
      owner: { kind: 'StatefulSet', name: 'web' },
      policy: 'forever' as 'never',
    });
    expect(await world.bind(pod, 'a1')).toBe('');
    expect(world.floatip.allocator.get('10.0.100.10')?.policy).toBe(0);
    await world.floatip.events.flush();
    const events = await world.core.listNamespacedEvent({ namespace: 'ns1' });
    expect(
      events.items
        .filter((e) => e.reason === 'UnknownReleasePolicy')
        .map((e) => [e.type, e.involvedObject.name, e.message]),
    ).toEqual([
      [
        'Warning',
        'web-0',
        'unknown release policy "forever" in k8s.v1.cni.galaxy.io/release-policy: its addresses are released when the pod is deleted (the default); use "immutable" or "never" to keep them',
      ],
    ]);
  });
});
