// The scheduler extender over HTTP, with the embedded API server behind floatip, driven with
// request bodies as kube-scheduler v1.20 sends them. Scenarios are numbered so a failure names one.
import { readFileSync } from 'node:fs';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { REQUEUED_ANNOTATION } from '../../src/controller/requeue.js';
import { eventually } from './helpers.js';
import { World } from './world.js';

const A = '10.0.1.0/24'; // node subnet A: IPv4 + IPv6 entries (dual stack)
const B = '10.0.2.0/24'; // node subnet B: a small IPv4 entry
const CONFIG = [
  {
    nodeSubnets: [A],
    ips: ['10.0.100.10~10.0.100.40'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
    vlan: 2,
  },
  { nodeSubnets: [A], ips: ['fd00:100::10~fd00:100::ff'], subnet: 'fd00:100::/64', gateway: 'fd00:100::1' },
  { nodeSubnets: [B], ips: ['10.0.101.10~10.0.101.12'], subnet: '10.0.101.0/24', gateway: '10.0.101.1' },
];
const FIXTURES = new URL('../fixtures/kube-scheduler-1.20/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES), 'utf8');

let world: World;

beforeEach(async () => {
  world = await World.start({ config: CONFIG });
  await world.node('a1', '10.0.1.11');
  await world.node('a2', '10.0.1.12', 'fd00:1::12');
  await world.node('b1', '10.0.2.11');
  await world.node('nowhere', '192.168.9.9');
  await world.node('noip');
});

afterEach(() => world.checkAndStop());

const v4Of = (ips: string[]) => ips.filter((ip) => !ip.includes(':'));

describe('E5-1 wire format', () => {
  test('E5-1a real kube-scheduler bodies (capitalised keys) get capitalised answers in both node modes', async () => {
    // the fixtures' pods do not ask for the resource through floatip's eyes? they do: limits eni-ip 1
    const byObjects = await world.post('filter', fixture('filter.nodes.json'));
    expect(byObjects.status).toBe(200);
    const filtered = byObjects.json as Record<string, unknown>;
    expect(Object.keys(filtered)).toEqual([
      'Nodes',
      'NodeNames',
      'FailedNodes',
      'FailedAndUnresolvableNodes',
      'Error',
    ]);
    // the fixture nodes carry no InternalIP: galaxy's reason
    expect(filtered.FailedNodes).toEqual({
      'fixture-node-a': 'FloatingIPPlugin:UnknowNode',
      'fixture-node-b': 'FloatingIPPlugin:UnknowNode',
    });
    const byNames = await world.post('filter', fixture('filter.nodenames.json'));
    expect((byNames.json as { NodeNames: string[] }).NodeNames).toEqual([]);
    expect((byNames.json as { Nodes: unknown }).Nodes).toBeNull();
    const prioritized = await world.post('prioritize', fixture('prioritize.nodenames.json'));
    expect(prioritized.json).toEqual([
      { Host: 'fixture-node-a', Score: 0 },
      { Host: 'fixture-node-b', Score: 0 },
    ]);
    const preempted = await world.post('preempt', fixture('preempt.metavictims.json'));
    expect(Object.keys(preempted.json as object)).toEqual(['NodeNameToMetaVictims']);
    const bound = await world.post('bind', fixture('bind.json'));
    expect(bound.json).toEqual({
      Error: 'failed to find pod default_fixture-low-1: pod "fixture-low-1" not found',
    });
  });

  test('E5-1a2 the same bodies with one field galaxy’s decoder refused (one floatip does not read) are 400s naming it', async () => {
    const fraction = "(Go's decoder reads no integer written with a fraction or an exponent)";
    const cases: [string, string, string, string, string][] = [
      [
        'filter',
        'filter.nodes.json',
        '"priority": 0,',
        '"priority": 0.0,',
        `Pod.spec.priority must be an int32, not 0.0 ${fraction}`,
      ],
      [
        'filter',
        'filter.nodenames.json',
        '"restartPolicy": "Always"',
        '"restartPolicy": 1',
        'Pod.spec.restartPolicy must be a string',
      ],
      [
        'filter',
        'filter.nodes.json',
        '"Port": 0',
        '"Port": "0"',
        'Nodes.items[0].status.daemonEndpoints.kubeletEndpoint.Port must be an int32',
      ],
      [
        'prioritize',
        'prioritize.nodenames.json',
        '"creationTimestamp": "2026-11-29T14:19:51Z"',
        '"creationTimestamp": "yesterday"',
        'Pod.metadata.creationTimestamp must be a time in RFC 3339 (such as "2020-01-02T03:04:05Z")',
      ],
      [
        'preempt',
        'preempt.victims.json',
        '"terminationGracePeriodSeconds": 0,\n            "dnsPolicy": "ClusterFirst",\n            "nodeName"',
        '"terminationGracePeriodSeconds": 0e0,\n            "dnsPolicy": "ClusterFirst",\n            "nodeName"',
        `NodeNameToVictims["fixture-node-a"].Pods[0].spec.terminationGracePeriodSeconds must be an int64, not 0e0 ${fraction}`,
      ],
    ];
    for (const [verb, file, from, to, message] of cases) {
      const text = fixture(file);
      expect(text).toContain(from);
      const res = await world.post(verb, text.replace(from, to));
      expect([verb, file, res.status, res.json]).toEqual([verb, file, 400, { Error: message }]);
    }
  });

  test('E5-1b lower-case keys (older clients) work the same', async () => {
    const pod = await world.pod({ name: 'bare-0' });
    const res = await world.post('filter', { pod, nodenames: ['a1', 'b1'] });
    expect((res.json as { NodeNames: string[] }).NodeNames).toEqual(['a1', 'b1']);
    const bound = await world.post('bind', {
      podname: 'bare-0',
      podnamespace: 'ns1',
      poduid: pod.metadata?.uid,
      node: 'b1',
    });
    expect(bound.json).toEqual({ Error: '' });
  });

  test.each([
    ['not JSON', '{"Pod":', /^bad request: /],
    ['not an object', '[1,2]', /^the request body must be a JSON object$/],
    ['no pod', '{"NodeNames":["a1"]}', /^Pod must be a JSON object$/],
    ['no nodes', '{"Pod":{"metadata":{"name":"p"}}}', /^the request names no nodes/],
    [
      'bad node names',
      '{"Pod":{"metadata":{"name":"p"}},"NodeNames":[1]}',
      /^NodeNames must be a list of strings$/,
    ],
  ])('E5-1c a filter body that is %s is a 400 with the reason', async (_what, body, message) => {
    const res = await world.post('filter', body);
    expect(res.status).toBe(400);
    expect((res.json as { Error: string }).Error).toMatch(message);
  });

  test('E5-1d a bind body without a pod name is a 400', async () => {
    const res = await world.post('bind', { Node: 'a1' });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ Error: 'PodName is missing' });
  });

  test('E5-1g a pod with no namespace is one in namespace "", as Go reads it (galaxy), never default’s', async () => {
    const pod = await world.pod({ name: 'nsless', namespace: 'default' });
    for (const body of [
      { PodName: 'nsless', PodNamespace: '', PodUID: '', Node: 'b1' },
      { PodName: 'nsless', PodUID: '', Node: 'b1' },
    ]) {
      expect((await world.post('bind', body)).json).toEqual({
        Error: 'failed to find pod _nsless: pod "nsless" not found',
      });
    }
    expect(await world.addressesOf('nsless', 'default')).toEqual([]);
    // bound, default/nsless holds an address of subnet B; the pod without a namespace is another
    // pod (galaxy's key NULL__NULL_nsless), which holds nothing, so it is not tied to B
    expect(await world.bind(pod, 'b1')).toBe('');
    const { namespace: _, ...nameOnly } = pod.metadata!;
    const res = await world.post('filter', { Pod: { ...pod, metadata: nameOnly }, NodeNames: ['a1', 'b1'] });
    expect((res.json as { NodeNames: string[] }).NodeNames).toEqual(['a1', 'b1']);
  });

  test('E5-1h a key written twice in different cases: the last one counts, as Go decodes it (galaxy)', async () => {
    await world.pod({ name: 'dup-a' });
    const b = await world.pod({ name: 'dup-b' });
    const bound = await world.post(
      'bind',
      `{"PodName":"dup-a","podName":"dup-b","PodNamespace":"ns1","PodUID":"${b.metadata!.uid}","Node":"b1"}`,
    );
    expect(bound.json).toEqual({ Error: '' });
    expect(await world.addressesOf('dup-b')).toHaveLength(1);
    expect(await world.addressesOf('dup-a')).toEqual([]);
    // full Nodes (read by cutting the text at Nodes.items): a later `nodes` is the list
    const node = (name: string) => world.core.readNode({ name });
    const text = `{"Pod":${JSON.stringify(b)},"Nodes":{"items":[${JSON.stringify(await node('a1'))}]},"nodes":{"items":[${JSON.stringify(await node('nowhere'))}]}}`;
    for (let i = 0; i < 2; i++) {
      const filtered = (await world.post('filter', text)).json as Record<string, unknown>;
      expect(filtered.FailedNodes).toEqual({ nowhere: 'FloatingIPPlugin:NoFIPConfigNode' });
    }
  });

  test('E5-1i the Pod’s own keys in any case: read as Go reads them (galaxy decodes the whole request)', async () => {
    const pod = await world.pod({ name: 'cased', ranges: [['10.0.101.10~10.0.101.12']] });
    const meta = pod.metadata!;
    const text = JSON.stringify({
      POD: {
        Metadata: {
          Name: meta.name,
          NAMESPACE: meta.namespace,
          Uid: meta.uid,
          Annotations: meta.annotations,
        },
        Spec: { Containers: pod.spec!.containers.map((c) => ({ Name: c.name, RESOURCES: c.resources })) },
      },
      NodeNames: ['a1', 'b1'],
    });
    const filtered = await world.post('filter', text);
    expect(filtered.status).toBe(200);
    // its range lies in B's entry: only B's node passes, as with the keys spelled as usual
    expect((filtered.json as { NodeNames: string[] }).NodeNames).toEqual(['b1']);
    const usual = await world.post('filter', { Pod: pod, NodeNames: ['a1', 'b1'] });
    expect(usual.json).toEqual(filtered.json);
  });

  test('E5-1e full Node objects are echoed back as received', async () => {
    const pod = await world.pod({ name: 'bare-0' });
    const body = {
      Pod: pod,
      Nodes: { metadata: {}, items: [await world.core.readNode({ name: 'a1' })] },
      NodeNames: null,
    };
    const res = await world.post('filter', body);
    expect((res.json as { Nodes: { items: unknown[] } }).Nodes.items).toEqual(
      JSON.parse(JSON.stringify(body.Nodes.items)),
    );
  });
  test('E5-1f a Nodes list sent with its kind and apiVersion gets them back (galaxy echoes the list); one without, none', async () => {
    const pod = await world.pod({ name: 'bare-0' });
    const node = await world.core.readNode({ name: 'a1' });
    for (const wanted of [true, false]) {
      const asked = await world.pod({ name: `typed-${wanted}`, wants: wanted });
      const typed = await world.post('filter', {
        Pod: asked,
        Nodes: { kind: 'NodeList', apiVersion: 'v1', metadata: {}, items: [node] },
      });
      expect(
        typed.text.startsWith('{"Nodes":{"kind":"NodeList","apiVersion":"v1","metadata":{},"items":[{'),
      ).toBe(true);
    }
    const plain = await world.post('filter', { Pod: pod, Nodes: { items: [node] } });
    expect(plain.text.startsWith('{"Nodes":{"metadata":{},"items":[{')).toBe(true);
  });
});

describe('E5-2 filter', () => {
  test('E5-2a pods that do not want the resource pass untouched', async () => {
    const pod = await world.pod({ name: 'plain', wants: false });
    expect(await world.filter(pod, ['a1', 'nowhere', 'noip'])).toEqual({
      passed: ['a1', 'nowhere', 'noip'],
      failed: {},
      error: '',
    });
  });

  test('E5-2b nodes with no InternalIP or outside every subnet fail with galaxy’s reasons', async () => {
    const pod = await world.pod({ name: 'bare-0' });
    for (const mode of ['names', 'objects'] as const) {
      expect(
        await world.filter(
          pod,
          ['a1', 'b1', 'nowhere', 'noip', 'ghost'].slice(0, mode === 'objects' ? 4 : 5),
          mode,
        ),
      ).toEqual({
        passed: ['a1', 'b1'],
        failed: {
          nowhere: 'FloatingIPPlugin:NoFIPConfigNode',
          noip: 'FloatingIPPlugin:UnknowNode',
          ...(mode === 'names' ? { ghost: 'FloatingIPPlugin:UnknowNode' } : {}),
        },
        error: '',
      });
    }
  });

  test('E5-2c an exhausted subnet fails its nodes with NoFIPLeft', async () => {
    for (let i = 0; i < 3; i++) {
      const pod = await world.pod({ name: `fill-${i}` });
      expect(await world.bind(pod, 'b1')).toBe('');
    }
    const pod = await world.pod({ name: 'late' });
    expect(await world.filter(pod, ['a1', 'b1'])).toEqual({
      passed: ['a1'],
      failed: { b1: 'FloatingIPPlugin:NoFIPLeft' },
      error: '',
    });
    // and bind on the full node says why
    expect(await world.bind(pod, 'b1')).toBe(
      'no enough available ips left: no free IPv4 address for NULL_ns1_NULL_late in node subnet 10.0.2.0/24',
    );
  });

  test('E5-2g a pod no node could take for want of an address is sent back when one is freed', async () => {
    for (let i = 0; i < 3; i++) {
      const pod = await world.pod({ name: `fill-${i}` });
      expect(await world.bind(pod, 'b1')).toBe('');
    }
    const late = await world.pod({ name: 'late' });
    const later = await world.pod({ name: 'later' });
    for (const pod of [late, later]) {
      expect(await world.filter(pod, ['b1', 'nowhere'])).toEqual({
        passed: [],
        failed: { b1: 'FloatingIPPlugin:NoFIPLeft', nowhere: 'FloatingIPPlugin:NoFIPConfigNode' },
        error: '',
      });
    }
    const touched = async (name: string) =>
      (await world.readPod(name)).metadata?.annotations?.[REQUEUED_ANNOTATION] !== undefined;
    // one address freed: the pod waiting longest is sent back, not every waiting pod
    await world.deletePod('fill-0');
    await world.settle();
    await eventually('the first waiting pod to be touched', () => touched('late'));
    expect(await touched('later')).toBe(false);
    expect((await world.filter(late, ['b1', 'nowhere'])).passed).toEqual(['b1']);
    expect(await world.bind(late, 'b1')).toBe('');
  });

  test('E5-2d a pod holding an address may only go where that address works', async () => {
    await world.statefulSet('web', 1);
    const pod = await world.pod({
      name: 'web-0',
      owner: { kind: 'StatefulSet', name: 'web' },
      policy: 'immutable',
    });
    expect(await world.bind(pod, 'b1')).toBe('');
    const [ip] = await world.addressesOf('web-0');
    // deleted: the lifecycle keeps the address on the pod's key for the re-created pod
    await world.deletePod('web-0');
    await world.settle();
    const again = await world.pod({
      name: 'web-0',
      owner: { kind: 'StatefulSet', name: 'web' },
      policy: 'immutable',
    });
    expect(await world.filter(again, ['a1', 'a2', 'b1'])).toEqual({
      passed: ['b1'],
      failed: { a1: 'FloatingIPPlugin:NoFIPLeft', a2: 'FloatingIPPlugin:NoFIPLeft' },
      error: '',
    });
    expect(await world.bind(again, 'b1')).toBe('');
    expect(await world.addressesOf('web-0')).toEqual([ip]);
  });

  test('E5-2h a pod asked without ranges once its key holds several addresses uses one per family, as galaxy one', async () => {
    await world.statefulSet('web', 1);
    const spec = { name: 'web-0', owner: { kind: 'StatefulSet', name: 'web' }, policy: 'never' } as const;
    const grouped = await world.pod({ ...spec, ranges: [['10.0.100.20'], ['10.0.100.21']] });
    expect(await world.bind(grouped, 'a1')).toBe('');
    expect(await world.addressesOf('web-0')).toEqual(['10.0.100.20', '10.0.100.21']);
    await world.deletePod('web-0');
    await world.settle();
    const plain = await world.pod(spec);
    expect(await world.filter(plain, ['a1', 'b1'])).toMatchObject({ passed: ['a1'], error: '' });
    expect(await world.bind(plain, 'a2')).toBe('');
    const [v4, ...rest] = await world.addressesOf('web-0');
    expect([v4, rest.every((ip) => ip.includes(':'))]).toEqual(['10.0.100.20', true]);
    // the other stays the key's, untouched: not on the new pod's node, not in its annotation
    const other = world.floatip.allocator.get('10.0.100.21');
    expect([other?.key, other?.nodeName, other?.podUid]).toEqual(['sts_ns1_web_web-0', '', '']);
    expect(world.floatip.allocator.get('10.0.100.20')?.nodeName).toBe('a2');
  });

  test('E5-2f the same names-only list, asked again, follows node changes (galaxy never invalidates)', async () => {
    const pod = await world.pod({ name: 'bare-0' });
    const names = ['a1', 'b1', 'late'];
    const first = { passed: ['a1', 'b1'], failed: { late: 'FloatingIPPlugin:UnknowNode' }, error: '' };
    expect(await world.filter(pod, names)).toEqual(first);
    expect(await world.filter(pod, names)).toEqual(first);
    // a1 moves out of every node subnet; the unknown name appears, in subnet B
    await world.core.replaceNodeStatus({
      name: 'a1',
      body: {
        ...(await world.core.readNode({ name: 'a1' })),
        status: { addresses: [{ type: 'InternalIP', address: '192.168.9.10' }] },
      },
    });
    await world.node('late', '10.0.2.12');
    await eventually(
      'floatip to see both node changes',
      async () => (await world.filter(pod, names)).passed.join() === 'b1,late',
    );
    expect(await world.filter(pod, names)).toEqual({
      passed: ['b1', 'late'],
      failed: { a1: 'FloatingIPPlugin:NoFIPConfigNode' },
      error: '',
    });
    await world.core.deleteNode({ name: 'b1' });
    await eventually('floatip to see b1 gone', async () => 'b1' in (await world.filter(pod, names)).failed);
    expect(await world.filter(pod, names)).toEqual({
      passed: ['late'],
      failed: { a1: 'FloatingIPPlugin:NoFIPConfigNode', b1: 'FloatingIPPlugin:UnknowNode' },
      error: '',
    });
  });

  test('E5-2e an unsupported policy is an error for the whole filter, in galaxy’s words', async () => {
    const pod = await world.pod({ name: 'solo', policy: 'never' });
    expect(await world.filter(pod, ['a1'])).toEqual({
      passed: [],
      failed: {},
      error:
        "release policy never is not supported for pod solo: pod name doesn't match '.*-[0-9]*$', assume its parent is not a stateful workload",
    });
  });
});

describe('E5-3 bind', () => {
  test('E5-3a a bare pod gets one address per family of its node subnet, in the annotation the CNI reads', async () => {
    const pod = await world.pod({ name: 'bare-0' });
    expect(await world.bind(pod, 'a2')).toBe('');
    const bound = await world.readPod('bare-0');
    expect(bound.spec?.nodeName).toBe('a2');
    expect(bound.metadata?.annotations?.['k8s.v1.cni.galaxy.io/args']).toBe(
      '{"common":{"ipinfos":[{"ip":"10.0.100.10/24","vlan":2,"gateway":"10.0.100.1"},{"ip":"fd00:100::10/64","vlan":0,"gateway":"fd00:100::1"}]}}',
    );
    const fip = (await world.custom.getClusterCustomObject({
      group: 'galaxy.k8s.io',
      version: 'v1alpha1',
      plural: 'floatingips',
      name: '10.0.100.10',
    })) as { spec: Record<string, unknown> };
    expect(fip.spec).toMatchObject({
      key: 'NULL_ns1_NULL_bare-0',
      policy: 0,
      attribute: `{"NodeName":"a2","Uid":"${pod.metadata?.uid}"}`,
    });
  });

  test('E5-3b request_ip_range groups, overlapping ones included, get distinct addresses in group order', async () => {
    const pod = await world.pod({
      name: 'ranges-0',
      ranges: [['10.0.100.20~10.0.100.22'], ['10.0.100.20'], ['fd00:100::20~fd00:100::30']],
    });
    expect(await world.filter(pod, ['a1', 'b1'])).toEqual({
      passed: ['a1'],
      failed: { b1: 'FloatingIPPlugin:NoFIPLeft' },
      error: '',
    });
    expect(await world.bind(pod, 'a1')).toBe('');
    expect(await world.addressesOf('ranges-0')).toEqual(['10.0.100.21', '10.0.100.20', 'fd00:100::20']);
    const args = JSON.parse(
      (await world.readPod('ranges-0')).metadata!.annotations!['k8s.v1.cni.galaxy.io/args']!,
    );
    expect(args.request_ip_range).toEqual([
      ['10.0.100.20~10.0.100.22'],
      ['10.0.100.20'],
      ['fd00:100::20~fd00:100::30'],
    ]);
  });

  test('E5-3c the UID rule: a re-created pod waits until the old one’s deletion was processed', async () => {
    await world.statefulSet('web', 1);
    const first = await world.pod({
      name: 'web-0',
      owner: { kind: 'StatefulSet', name: 'web' },
      policy: 'immutable',
    });
    expect(await world.bind(first, 'a1')).toBe('');
    // the deletion is seen but not yet processed (the release queue is held)
    await world.floatip.lifecycle.pause();
    await world.deletePod('web-0');
    const second = await world.pod({
      name: 'web-0',
      owner: { kind: 'StatefulSet', name: 'web' },
      policy: 'immutable',
    });
    expect(await world.bind(second, 'a1')).toBe(
      'waiting for delete event of sts_ns1_web_web-0 before reuse this ip',
    );
    expect((await world.readPod('web-0')).metadata?.annotations?.[REQUEUED_ANNOTATION]).toBeUndefined();
    world.floatip.lifecycle.start();
    await world.settle();
    // the refused pod is touched once the old one's deletion is processed: kube-scheduler retries it
    // at once instead of after its unschedulable queue's 60 s
    await eventually(
      'the refused pod to be touched',
      async () => (await world.readPod('web-0')).metadata?.annotations?.[REQUEUED_ANNOTATION] !== undefined,
    );
    expect(await world.bind(second, 'a1')).toBe('');
  });

  test('E5-3g pods the scheduler put aside while floatip was away are sent back when it serves again', async () => {
    const setAside = async (name: string, floatipUp = true) => {
      const pod = await world.pod({ name }, { wait: floatipUp });
      await world.core.replaceNamespacedPodStatus({
        name,
        namespace: 'ns1',
        body: {
          ...pod,
          status: {
            phase: 'Pending',
            conditions: [
              { type: 'PodScheduled', status: 'False', reason: 'SchedulerError', message: 'extender down' },
            ],
          },
        },
      });
      if (floatipUp) {
        await eventually('floatip to see the pod put aside', async () =>
          Boolean(world.floatip.cluster.pods.get('ns1', name)?.status?.conditions?.length),
        );
      }
      return pod;
    };
    await setAside('waiting-0');
    await world.pod({ name: 'fresh-0' }); // not tried yet: the scheduler has it in its active queue
    const bound = await world.pod({ name: 'bound-0' });
    expect(await world.bind(bound, 'a1')).toBe('');
    const touched = async (name: string) =>
      (await world.readPod(name)).metadata?.annotations?.[REQUEUED_ANNOTATION] !== undefined;
    await world.restartFloatip(async () => {
      await setAside('waiting-1', false);
    });
    await eventually(
      'the pods put aside to be touched',
      async () => (await touched('waiting-0')) && (await touched('waiting-1')),
    );
    expect(await touched('fresh-0')).toBe(false);
    expect(await touched('bound-0')).toBe(false);
    // put aside after that (the scheduler could not reach this replica yet): sent back at the first
    // call that reaches it, and only then
    await setAside('waiting-2');
    await new Promise((r) => setTimeout(r, 100));
    expect(await touched('waiting-2')).toBe(false);
    expect((await world.filter(await world.readPod('fresh-0'), ['a1'])).passed).toEqual(['a1']);
    await eventually('the pod put aside later to be touched', () => touched('waiting-2'));
    await setAside('waiting-3');
    expect((await world.filter(await world.readPod('fresh-0'), ['a1'])).passed).toEqual(['a1']);
    await new Promise((r) => setTimeout(r, 100));
    expect(await touched('waiting-3')).toBe(false);
  });

  test('E5-3d bind after the pod was deleted fails and takes nothing', async () => {
    const pod = await world.pod({ name: 'gone-0' });
    await world.deletePod('gone-0');
    expect(await world.bind(pod, 'a1')).toBe('failed to find pod ns1_gone-0: pod "gone-0" not found');
    expect(world.floatip.allocator.size).toBe(0);
  });

  test('E5-3d2 a pod deleted while its binding is written: bind fails with not found, and the deletion releases what it was given (default policy), keeping nothing', async () => {
    const pod = await world.pod({ name: 'gone-1' });
    world.server.faults.delayNext({ verb: 'create', resource: 'pods/binding', name: 'gone-1' }, 1500);
    const bound = world.bind(pod, 'a1');
    await eventually(
      'the addresses to be allocated',
      async () => world.held('NULL_ns1_NULL_gone-1').length === 2,
    );
    await world.deletePod('gone-1');
    expect(await bound).toMatch(/^update pod NULL_ns1_NULL_gone-1: .*pods "gone-1" not found/);
    await eventually('the addresses to be released', async () => world.floatip.allocator.size === 0);
    await world.expectConsistent();
  });

  test('E5-3e the API server failing the binding (5xx): it may have applied it, so the pod keeps its addresses, and its next bind uses them', async () => {
    const pod = await world.pod({ name: 'bare-0' });
    world.server.faults.failNext({ verb: 'create', resource: 'pods/binding', name: 'bare-0' }, 500, {
      times: 10,
    });
    expect(await world.bind(pod, 'a2')).toMatch(
      /^update pod NULL_ns1_NULL_bare-0: the binding to a2 failed inside the API server, which may have applied it .*its addresses stay held for it$/,
    );
    expect(world.floatip.allocator.byKey('NULL_ns1_NULL_bare-0').map((a) => a.ip)).toEqual([
      '10.0.100.10',
      'fd00:100::10',
    ]);
    // none lost or doubled: the next bind binds with the same ones, and nothing else is taken
    expect(await world.bind(pod, 'a2')).toBe('');
    expect(await world.addressesOf('bare-0')).toEqual(['10.0.100.10', 'fd00:100::10']);
    expect(world.floatip.allocator.size).toBe(2);
  });

  test('E5-3i a FloatingIP create failing mid-bind: every address written goes back, none is lost or doubled', async () => {
    const pod = await world.pod({ name: 'bare-1' });
    // a FloatingIP create failing for the IPv6 address undoes the IPv4 one
    world.server.faults.failNext({ verb: 'create', resource: 'floatingips', name: 'fd00-100--10' }, 500);
    expect(await world.bind(pod, 'a2')).toMatch(/fd00-100--10/);
    expect(world.floatip.allocator.size).toBe(0);
    // and then it works, with the lowest addresses
    expect(await world.bind(pod, 'a2')).toBe('');
    expect(await world.addressesOf('bare-1')).toEqual(['10.0.100.10', 'fd00:100::10']);
  });

  test('E5-3j a FloatingIP create failing while its re-read fails too: memory holds nothing the API server may not have, and the retry binds to a recorded address', async () => {
    const pod = await world.pod({ name: 'bare-2' });
    world.server.faults.failNext({ verb: 'create', resource: 'floatingips', name: '10.0.100.10' }, 500);
    world.server.faults.failNext({ verb: 'get', resource: 'floatingips', name: '10.0.100.10' }, 500);
    expect(await world.bind(pod, 'a2')).toMatch(/10\.0\.100\.10/);
    expect(world.floatip.allocator.byKey('NULL_ns1_NULL_bare-2')).toEqual([]);
    // the scheduler's retry, to the same node: bound only to addresses that have their objects
    expect(await world.bind(pod, 'a2')).toBe('');
    await world.expectConsistent();
  });

  test('E5-3m the API server turning writes away (429, Retry-After: 1, its in-flight limit): each is sent again after the wait, as galaxy’s client-go does, and the bind succeeds', async () => {
    const pod = await world.pod({ name: 'busy-0' });
    world.server.faults.failNext({ verb: 'create', resource: 'floatingips', name: '10.0.100.10' }, 429);
    world.server.faults.failNext({ verb: 'create', resource: 'pods/binding', name: 'busy-0' }, 429);
    const started = Date.now();
    expect(await world.bind(pod, 'a2')).toBe('');
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(await world.addressesOf('busy-0')).toEqual(['10.0.100.10', 'fd00:100::10']);
    expect(world.floatip.allocator.size).toBe(2);
    await world.expectConsistent();
  });

  test('E5-3h a binding stalled past the bind’s budget: answered in time, the pod keeps its addresses, and they agree when it lands', async () => {
    const pod = await world.pod({ name: 'slow-0' });
    // the API server holds the binding, then applies it: its answer comes after the scheduler stopped waiting
    world.server.faults.delayNext({ verb: 'create', resource: 'pods/binding', name: 'slow-0' }, 5000);
    const started = Date.now();
    expect(await world.bind(pod, 'a2')).toMatch(
      /^update pod NULL_ns1_NULL_slow-0: the binding to a2 was not answered .*; its addresses stay held for it$/,
    );
    // within the default bind budget (4 s), below kube-scheduler's default httpTimeout (5 s)
    expect(Date.now() - started).toBeLessThan(4500);
    expect(world.floatip.allocator.byKey('NULL_ns1_NULL_slow-0').map((a) => a.ip)).toEqual([
      '10.0.100.10',
      'fd00:100::10',
    ]);
    await eventually(
      'the late binding to land',
      async () => (await world.readPod('slow-0')).spec?.nodeName === 'a2',
    );
    expect(await world.addressesOf('slow-0')).toEqual(['10.0.100.10', 'fd00:100::10']);
    // no other pod is given them meanwhile
    expect(await world.bind(await world.pod({ name: 'next-0' }), 'a2')).toBe('');
    expect(await world.addressesOf('next-0')).toEqual(['10.0.100.11', 'fd00:100::11']);
  });

  test('E5-3k a FloatingIP create stalled past the bind’s budget: answered in time, nothing doubled, and the late object is the pod’s next time', async () => {
    const pod = await world.pod({ name: 'slow-create' });
    world.server.faults.delayNext({ verb: 'create', resource: 'floatingips', name: '10.0.100.10' }, 6000);
    const started = Date.now();
    expect(await world.bind(pod, 'a2')).toMatch(/10\.0\.100\.10.*no answer within/);
    expect(Date.now() - started).toBeLessThan(4500);
    // the create lands after all: memory follows by the watch, for the pod's key
    await eventually(
      'the late FloatingIP to reach floatip',
      async () => world.floatip.allocator.get('10.0.100.10')?.key === 'NULL_ns1_NULL_slow-create',
    );
    expect(await world.bind(pod, 'a2')).toBe('');
    expect(await world.addressesOf('slow-create')).toEqual(['10.0.100.10', 'fd00:100::10']);
    await world.expectConsistent();
  });

  test('E5-3l a create stalled, and the undo of the other and the re-read stalled too (an API server stalled for seconds): answered within the budget, nothing lost or doubled', async () => {
    const pod = await world.pod({ name: 'stalled' });
    world.server.faults.delayNext({ verb: 'create', resource: 'floatingips', name: '10.0.100.10' }, 6000);
    world.server.faults.delayNext({ verb: 'get', resource: 'floatingips', name: '10.0.100.10' }, 6000);
    world.server.faults.delayNext({ verb: 'delete', resource: 'floatingips', name: 'fd00-100--10' }, 6000);
    const started = Date.now();
    expect(await world.bind(pod, 'a2')).toMatch(/10\.0\.100\.10.*no answer within/);
    // the undo waited on nothing past the budget: 8 s before, the stall's end
    expect(Date.now() - started).toBeLessThan(4500);
    // the late create lands, and memory follows it by the watch, for the pod's key (the undo's
    // delete, given up on, may land or not: the object, if kept, is still the pod's)
    await eventually(
      'the stalled create to land',
      async () => world.floatip.allocator.get('10.0.100.10')?.key === 'NULL_ns1_NULL_stalled',
      10_000,
    );
    expect(await world.bind(pod, 'a2')).toBe('');
    expect(await world.addressesOf('stalled')).toEqual(['10.0.100.10', 'fd00:100::10']);
    await world.expectConsistent();
  }, 20_000);

  test('E5-3f a pod that does not want the resource is refused in galaxy’s words', async () => {
    const pod = await world.pod({ name: 'plain', wants: false });
    expect(await world.bind(pod, 'a1')).toBe("pod which doesn't want floatingip have been sent to plugin");
  });
});

describe('E5-4 Deployments and Pools', () => {
  const rs = (name: string) => ({ kind: 'ReplicaSet', name: `${name}-5d8f7c9b4` });

  test('E5-4a default policy: each pod gets a fresh address, no limit', async () => {
    await world.deployment('app', 1);
    for (const name of ['app-5d8f7c9b4-a', 'app-5d8f7c9b4-b']) {
      expect(await world.bind(await world.pod({ name, owner: rs('app') }), 'b1')).toBe('');
    }
    expect(world.floatip.allocator.countKeysByPrefix('dp_ns1_app_')).toBe(2);
  });

  test.each(['never', 'immutable'] as const)(
    'E5-4b %s: at most replicas pods hold addresses',
    async (policy) => {
      await world.deployment('app', 2);
      const pods = [];
      for (const name of ['app-5d8f7c9b4-a', 'app-5d8f7c9b4-b', 'app-5d8f7c9b4-c'])
        pods.push(await world.pod({ name, owner: rs('app'), policy }));
      expect(await world.bind(pods[0]!, 'b1')).toBe('');
      expect(await world.bind(pods[1]!, 'b1')).toBe('');
      const third = await world.filter(pods[2]!, ['a1', 'b1']);
      expect(third.error).toBe('deployment app has allocated 2 ips with replicas of 2, wait for releasing');
      expect(await world.bind(pods[2]!, 'a1')).toBe(
        'deployment app has allocated 2 ips with replicas of 2, wait for releasing',
      );
    },
  );

  test.each(['never', 'immutable'] as const)(
    'E5-4e %s: a pod refused for its app’s limit is sent back when the app gives an address back',
    async (policy) => {
      await world.deployment('app', 1);
      const first = await world.pod({ name: 'app-5d8f7c9b4-a', owner: rs('app'), policy });
      expect(await world.bind(first, 'b1')).toBe('');
      const [ip] = await world.addressesOf('app-5d8f7c9b4-a');
      const second = await world.pod({ name: 'app-5d8f7c9b4-b', owner: rs('app'), policy });
      expect((await world.filter(second, ['a1', 'b1'])).error).toMatch(/wait for releasing$/);
      const touched = async () =>
        (await world.readPod('app-5d8f7c9b4-b')).metadata?.annotations?.[REQUEUED_ANNOTATION] !== undefined;
      expect(await touched()).toBe(false);
      // the old pod goes: its address is parked for the app, and the refused pod is sent back
      await world.deletePod('app-5d8f7c9b4-a');
      await world.settle();
      await eventually('the refused pod to be touched', touched);
      expect(await world.filter(second, ['a1', 'b1'])).toEqual({
        passed: ['b1'],
        failed: { a1: 'FloatingIPPlugin:NoFIPLeft' },
        error: '',
      });
      expect(await world.bind(second, 'b1')).toBe('');
      expect(await world.addressesOf('app-5d8f7c9b4-b')).toEqual([ip]);
    },
  );

  test('E5-4i Deployments are read from the first pod whose policy needs them: its filter waits for their list', async () => {
    await world.deployment('web', 1);
    // default-policy pods are bound and released without floatip reading any workload
    const plain = await world.pod({ name: 'web-5d8f7c9b4-p', owner: rs('web') });
    expect(await world.bind(plain, 'a1')).toBe('');
    await world.deletePod('web-5d8f7c9b4-p');
    await world.settle();
    expect(world.floatip.cluster.watchingWorkloads).toBe(false);
    // the first immutable pod: answered with its Deployment's limit of 1, not a limit of 0 guessed
    // from caches not yet listed
    const first = await world.pod({ name: 'web-5d8f7c9b4-a', owner: rs('web'), policy: 'immutable' });
    expect(await world.filter(first, ['a1', 'b1'])).toMatchObject({ passed: ['a1', 'b1'], error: '' });
    expect(world.floatip.cluster.watchingWorkloads).toBe(true);
    expect(await world.bind(first, 'b1')).toBe('');
    const second = await world.pod({ name: 'web-5d8f7c9b4-b', owner: rs('web'), policy: 'immutable' });
    expect((await world.filter(second, ['a1', 'b1'])).error).toBe(
      'deployment web has allocated 1 ips with replicas of 1, wait for releasing',
    );
  });

  test('E5-4c parked addresses come back, most recently parked first, and pin the pod to their subnet', async () => {
    await world.deployment('app', 3);
    const store = world.floatip.store;
    const parked = { policy: 2, nodeName: '', podUid: '' };
    // two addresses parked at the app prefix, in subnet B, .10 parked last
    await store.allocateIP('10.0.101.11', 'dp_ns1_app_', parked);
    await new Promise((r) => setTimeout(r, 5));
    await store.allocateIP('10.0.101.10', 'dp_ns1_app_', parked);
    const pod = await world.pod({ name: 'app-5d8f7c9b4-a', owner: rs('app'), policy: 'never' });
    expect(await world.filter(pod, ['a1', 'b1'])).toEqual({
      passed: ['b1'],
      failed: { a1: 'FloatingIPPlugin:NoFIPLeft' },
      error: '',
    });
    const scores = (await world.post('prioritize', { Pod: pod, NodeNames: ['a1', 'b1'] })).json;
    expect(scores).toEqual([
      { Host: 'a1', Score: 9 },
      { Host: 'b1', Score: 10 },
    ]);
    expect(await world.bind(pod, 'b1')).toBe('');
    expect(await world.addressesOf('app-5d8f7c9b4-a')).toEqual(['10.0.101.10']);
    expect(world.floatip.allocator.byKey('dp_ns1_app_').map((a) => a.ip)).toEqual(['10.0.101.11']);
  });

  /** A Deployment of 3 with 10.0.101.10 parked for it, and a pod of it with policy never. */
  const podWithParkedAddress = async () => {
    await world.deployment('app', 3);
    await world.floatip.store.allocateIP('10.0.101.10', 'dp_ns1_app_', {
      policy: 2,
      nodeName: '',
      podUid: '',
    });
    return world.pod({ name: 'app-5d8f7c9b4-a', owner: rs('app'), policy: 'never' });
  };

  test('E5-4f a parked address taken back on an API server stalled past the bind’s budget: answered in time, nothing doubled, and the late change is the pod’s next time', async () => {
    const pod = await podWithParkedAddress();
    world.server.faults.delayNext({ verb: 'patch', resource: 'floatingips', name: '10.0.101.10' }, 6000);
    const started = Date.now();
    expect(await world.bind(pod, 'b1')).toMatch(/10\.0\.101\.10.*no answer within/);
    // within the default bind budget (4 s), below kube-scheduler's default httpTimeout (5 s)
    expect(Date.now() - started).toBeLessThan(4500);
    // the change lands after all: memory follows by the watch, and the pod's next bind reuses it
    await eventually(
      'the late change to reach floatip',
      async () => world.floatip.allocator.get('10.0.101.10')?.key === 'dp_ns1_app_app-5d8f7c9b4-a',
    );
    expect(await world.bind(pod, 'b1')).toBe('');
    expect(await world.addressesOf('app-5d8f7c9b4-a')).toEqual(['10.0.101.10']);
    await world.expectConsistent();
  });

  test('E5-4g a parked address taken back while the API server turns writes away (429, Retry-After: 1): sent again, as galaxy’s client-go does, and the bind succeeds', async () => {
    const pod = await podWithParkedAddress();
    world.server.faults.failNext({ verb: 'patch', resource: 'floatingips', name: '10.0.101.10' }, 429);
    const started = Date.now();
    expect(await world.bind(pod, 'b1')).toBe('');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(await world.addressesOf('app-5d8f7c9b4-a')).toEqual(['10.0.101.10']);
    await world.expectConsistent();
  });

  test('E5-4d a Pool caps all its pods across Deployments; size 0 blocks the pool', async () => {
    await world.deployment('one', 5);
    await world.deployment('two', 5);
    await world.createPool('shared', 2);
    const pods = [
      await world.pod({ name: 'one-5d8f7c9b4-a', owner: rs('one'), pool: 'shared' }),
      await world.pod({ name: 'two-5d8f7c9b4-a', owner: rs('two'), pool: 'shared' }),
      await world.pod({ name: 'two-5d8f7c9b4-b', owner: rs('two'), pool: 'shared' }),
    ];
    expect(await world.bind(pods[0]!, 'a1')).toBe('');
    expect(await world.bind(pods[1]!, 'a1')).toBe('');
    expect((await world.filter(pods[2]!, ['a1'])).error).toBe('reached pool shared size limit of 2');
    expect(v4Of(await world.addressesOf('two-5d8f7c9b4-a'))).toEqual(['10.0.100.11']);
    await world.custom.patchNamespacedCustomObject(
      {
        group: 'galaxy.k8s.io',
        version: 'v1alpha1',
        plural: 'pools',
        namespace: 'kube-system',
        name: 'shared',
        body: { size: 0 },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await eventually(
      'the new size',
      async () => (await world.filter(pods[2]!, ['a1'])).error === 'reached pool shared size limit of 0',
    );
  });

  test('E5-4f a Pool counts only its own pods, not those of a Pool whose name extends its own after `_`', async () => {
    // pool__my_ is a prefix of every key of pool my_pool: counted by prefix, my_pool's pods filled my's size
    await world.deployment('one', 5);
    await world.deployment('two', 5);
    await world.createPool('my', 1);
    const other = await world.pod({ name: 'one-5d8f7c9b4-a', owner: rs('one'), pool: 'my_pool' });
    expect(await world.bind(other, 'a1')).toBe('');
    const mine = await world.pod({ name: 'two-5d8f7c9b4-a', owner: rs('two'), pool: 'my' });
    expect((await world.filter(mine, ['a1'])).error).toBe('');
    expect(await world.bind(mine, 'a1')).toBe('');
    const second = await world.pod({ name: 'two-5d8f7c9b4-b', owner: rs('two'), pool: 'my' });
    expect((await world.filter(second, ['a1'])).error).toBe('reached pool my size limit of 1');
  });
});

test('E5-6 preempt keeps only candidates whose subnet can serve the preemptor, and changes nothing', async () => {
  const pod = await world.pod({
    name: 'web-0',
    owner: { kind: 'StatefulSet', name: 'web' },
    policy: 'never',
  });
  expect(await world.bind(pod, 'b1')).toBe('');
  const before = [...world.floatip.allocator.all()].map((a) => `${a.ip} ${a.key}`);
  const victims = { Pods: [{ UID: 'v1' }], NumPDBViolations: 0 };
  const res = await world.post('preempt', {
    Pod: pod,
    NodeNameToVictims: null,
    NodeNameToMetaVictims: { a1: victims, b1: victims, nowhere: victims, ghost: victims },
  });
  expect(res.json).toEqual({ NodeNameToMetaVictims: { b1: victims } });
  // a default-policy pod only loses nodes no entry serves
  const bare = await world.pod({ name: 'bare-0' });
  const full = await world.post('preempt', {
    Pod: bare,
    NodeNameToVictims: {
      a1: { Pods: [{ metadata: { uid: 'v2' } }], NumPDBViolations: 1 },
      nowhere: { Pods: [], NumPDBViolations: 0 },
    },
    NodeNameToMetaVictims: null,
  });
  expect(full.json).toEqual({
    NodeNameToMetaVictims: { a1: { Pods: [{ UID: 'v2' }], NumPDBViolations: 1 } },
  });
  expect([...world.floatip.allocator.all()].map((a) => `${a.ip} ${a.key}`)).toEqual(before);
});

test('E5-5 500 pods bound in parallel over 20 nodes and 3 subnets: distinct addresses from each node’s subnet', async () => {
  await world.stop();
  const subnets = ['10.1.0.0/24', '10.2.0.0/24', '10.3.0.0/24'];
  world = await World.start({
    config: subnets.map((s, i) => ({
      nodeSubnets: [s],
      ips: [`10.10${i}.0.1~10.10${i}.1.250`],
      subnet: `10.10${i}.0.0/16`,
      gateway: `10.10${i}.0.0`,
    })),
  });
  const nodes = Array.from({ length: 20 }, (_, i) => ({ name: `n${i}`, subnet: i % 3 }));
  for (const n of nodes) await world.node(n.name, `10.${n.subnet + 1}.0.${10 + Number(n.name.slice(1))}`);
  const pods = [];
  for (let i = 0; i < 500; i++) pods.push(world.pod({ name: `p-${i}` }));
  const created = await Promise.all(pods);
  const errors = await Promise.all(created.map((pod, i) => world.bind(pod, nodes[i % 20]!.name)));
  expect(errors.filter((e) => e !== '')).toEqual([]);
  const seen = new Set<string>();
  for (let i = 0; i < 500; i++) {
    const [ip] = await world.addressesOf(`p-${i}`);
    expect(seen.has(ip!)).toBe(false);
    seen.add(ip!);
    expect(ip!.startsWith(`10.10${nodes[i % 20]!.subnet}.`)).toBe(true);
  }
}, 60000);
