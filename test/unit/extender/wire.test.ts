// The extender's request decoders: every field floatip reads from a request is type-checked, and a
// wrong type is a WireError (the server's 400) naming the field, never a crash further in.
import {
  WireError,
  decodeBindingArgs,
  decodeExtenderArgs,
  decodePreemptionArgs,
  encodePreemptionResult,
} from '../../../src/extender/wire.js';

const pod = (extra: Record<string, unknown> = {}) => ({
  metadata: { name: 'p', namespace: 'ns1' },
  ...extra,
});
const decode = (body: unknown) => () => decodeExtenderArgs(body);

test.each([
  [{ Pod: pod({ spec: { containers: 'x' } }), NodeNames: [] }, 'Pod.spec.containers must be a list'],
  [
    { Pod: pod({ spec: { containers: [null] } }), NodeNames: [] },
    'Pod.spec.containers[0] must be a JSON object',
  ],
  [
    { Pod: pod({ spec: { containers: [{ resources: 'x' }] } }), NodeNames: [] },
    'Pod.spec.containers[0].resources must be a JSON object',
  ],
  [
    { Pod: pod({ spec: { containers: [{ resources: { requests: { a: {} } } }] } }), NodeNames: [] },
    'Pod.spec.containers[0].resources.requests["a"] must be a quantity',
  ],
  [{ Pod: pod({ spec: [] }), NodeNames: [] }, 'Pod.spec must be a JSON object'],
  [
    { Pod: { metadata: { name: 'p', annotations: { a: 1 } } }, NodeNames: [] },
    'Pod.metadata.annotations["a"] must be a string',
  ],
  [
    { Pod: { metadata: { name: 'p', ownerReferences: [{ kind: 5 }] } }, NodeNames: [] },
    'Pod.metadata.ownerReferences[0].kind must be a string',
  ],
  [{ Pod: { metadata: { name: 'p', uid: 7 } }, NodeNames: [] }, 'Pod.metadata.uid must be a string'],
  [{ Pod: { metadata: 'x' }, NodeNames: [] }, 'Pod.metadata must be a JSON object'],
  [{ Pod: { metadata: { name: '' } }, NodeNames: [] }, 'Pod.metadata.name is missing'],
  [{ Pod: pod(), Nodes: { items: [null] } }, 'Nodes.items[0] must be a JSON object'],
  [{ Pod: pod(), Nodes: { items: [{ metadata: {} }] } }, 'Nodes.items[0].metadata.name is missing'],
  [
    { Pod: pod(), Nodes: { items: [{ metadata: { name: 'n' }, status: { addresses: 'x' } }] } },
    'Nodes.items[0].status.addresses must be a list',
  ],
  [
    { Pod: pod(), Nodes: { items: [{ metadata: { name: 'n' }, status: { addresses: [{ address: 1 }] } }] } },
    'Nodes.items[0].status.addresses[0].address must be a string',
  ],
  [{ Pod: pod(), NodeNames: [1] }, 'NodeNames must be a list of strings'],
  [{ Pod: pod() }, 'the request names no nodes: neither Nodes nor NodeNames is set'],
])('%j is refused: %s', (body, message) => {
  expect(decode(body)).toThrow(new WireError(message));
});

test('the decoded pod carries only the fields floatip reads, type-checked', () => {
  const { pod: decoded } = decodeExtenderArgs({
    pod: {
      metadata: {
        name: 'p',
        namespace: 'ns1',
        uid: 'u',
        annotations: { a: 'b' },
        labels: { x: 'y' },
        extra: [1],
      },
      spec: { containers: [{ name: 'c', image: 'i', resources: { limits: { r: 1 } } }], volumes: [{}] },
      status: { phase: 'Pending' },
    },
    NodeNames: ['a'],
  });
  expect(JSON.parse(JSON.stringify(decoded))).toEqual({
    metadata: { name: 'p', namespace: 'ns1', uid: 'u', annotations: { a: 'b' }, ownerReferences: [] },
    spec: { containers: [{ name: 'c', resources: { requests: {}, limits: { r: '1' } } }] },
  });
});

test('full Nodes: their places in the request text are found, under any spelling of the keys', () => {
  const text =
    '{"pod":{"metadata":{"name":"p"}},"NODES":{"ITEMS":[{"metadata":{"name":"a"},"z":[[[]]]} ,{"metadata":{"name":"b"}}]}}';
  const raw = Buffer.from(text);
  const args = decodeExtenderArgs(JSON.parse(text), raw);
  expect(args.nodes!.map((n) => n.metadata!.name)).toEqual(['a', 'b']);
  expect(args.nodeSpans!().map(([a, b]) => raw.toString('utf8', a, b))).toEqual([
    '{"metadata":{"name":"a"},"z":[[[]]]}',
    '{"metadata":{"name":"b"}}',
  ]);
});

test('keys naming one field: the last wins, as Go’s decoder takes each in turn (galaxy)', () => {
  const bind = (text: string) => decodeBindingArgs(JSON.parse(text));
  expect(bind('{"PodName":"dup-a","podName":"dup-b","PodNamespace":"default","Node":"n"}').podName).toBe(
    'dup-b',
  );
  expect(bind('{"podname":"dup-a","PodName":"dup-b","Node":"n"}').podName).toBe('dup-b');
  // a null leaves a string as it was
  expect(bind('{"PodName":"dup-a","PODNAME":null,"Node":"n"}').podName).toBe('dup-a');
  // Go folds ſ (U+017F) to s and the Kelvin sign to k
  expect(bind('{"PodName":"p","PodNameſpace":"ns2","Node":"n"}').podNamespace).toBe('ns2');
  expect(bind('{"PodName":"p","PodNamespace":"ns1","podnameſpace":"ns2","Node":"n"}').podNamespace).toBe(
    'ns2',
  );
  // a pointer is set to nil by a null: the request names no pod
  expect(() =>
    decodeExtenderArgs(JSON.parse('{"Pod":{"metadata":{"name":"a"}},"pod":null,"NodeNames":[]}')),
  ).toThrow('Pod must be a JSON object');
  const filter = decodeExtenderArgs(
    JSON.parse(
      '{"Pod":{"metadata":{"name":"a"}},"pod":{"metadata":{"name":"b"}},"NodeNames":["x"],"nodenames":["y"]}',
    ),
  );
  expect([filter.pod.metadata!.name, filter.nodeNames]).toEqual(['b', ['y']]);
  const text =
    '{"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[{"metadata":{"name":"a"}}]},"nodes":{"Items":[{"metadata":{"name":"b"}}]}}';
  const raw = Buffer.from(text);
  const args = decodeExtenderArgs(JSON.parse(text), raw);
  expect(args.nodes!.map((n) => n.metadata!.name)).toEqual(['b']);
  expect(args.nodeSpans!().map(([a, b]) => raw.toString('utf8', a, b))).toEqual([
    '{"metadata":{"name":"b"}}',
  ]);
  const preempt = decodePreemptionArgs({
    Pod: pod(),
    NodeNameToMetaVictims: {
      n1: { Pods: [{ UID: 'u1', uid: 'u2' }], NumPDBViolations: 1, numPDBViolations: 2 },
    },
  });
  expect(preempt.victims!.get('n1')).toEqual({ pods: [{ uid: 'u2' }], numPDBViolations: 2 });
});

test('preempt: victims are type-checked too', () => {
  const body = (victims: unknown) => ({ Pod: pod(), NodeNameToMetaVictims: { n1: victims } });
  expect(() => decodePreemptionArgs(body({ Pods: 'x' }))).toThrow('victims of n1: Pods must be a list');
  expect(() => decodePreemptionArgs(body({ Pods: [{ UID: 5 }] }))).toThrow(
    'victims of n1: Pods[0] UID must be a string',
  );
  expect(() => decodePreemptionArgs(body({ Pods: [], NumPDBViolations: 'x' }))).toThrow(
    'victims of n1: NumPDBViolations must be an integer',
  );
  // the body's text, when given, is read for an int written as Go's decoder refuses it
  const text = '{"NodeNameToMetaVictims":{"n1":{"Pods":[],"NumPDBViolations":1.0}}}';
  expect(() => decodePreemptionArgs(JSON.parse(text), Buffer.from(text))).toThrow(
    'victims of n1: NumPDBViolations must be an integer, not 1.0',
  );
  const whole =
    '{"Pod":{"metadata":{"name":"p"}},"NodeNameToMetaVictims":{"n1":{"Pods":[],"NumPDBViolations":1,"weight":1.0}}}';
  expect(decodePreemptionArgs(JSON.parse(whole), Buffer.from(whole)).victims!.get('n1')).toEqual({
    pods: [],
    numPDBViolations: 1,
  });
  expect(
    decodePreemptionArgs(body({ Pods: [{ UID: 'u' }], NumPDBViolations: 1 })).victims!.get('n1'),
  ).toEqual({
    pods: [{ uid: 'u' }],
    numPDBViolations: 1,
  });
});

test.each<[string, Record<string, unknown>, string]>([
  ['neither map', {}, '{"NodeNameToMetaVictims":null}'],
  ['both null', { NodeNameToMetaVictims: null, NodeNameToVictims: null }, '{"NodeNameToMetaVictims":null}'],
  ['an empty full map, no meta map', { NodeNameToVictims: {} }, '{"NodeNameToMetaVictims":null}'],
  ['an empty meta map', { NodeNameToMetaVictims: {} }, '{"NodeNameToMetaVictims":{}}'],
  [
    'an empty meta map beside a full one: built from the full',
    { NodeNameToMetaVictims: {}, NodeNameToVictims: { n1: { Pods: [{ metadata: { uid: 'u' } }] } } },
    '{"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u"}],"NumPDBViolations":0}}}',
  ],
])('preempt: %s is answered as galaxy’s map would be encoded', (_name, maps, answer) => {
  expect(encodePreemptionResult(decodePreemptionArgs({ Pod: pod(), ...maps }).victims)).toBe(answer);
});

test('the Pod’s and Nodes’ own fields are matched as Go matches them too (galaxy decodes the whole request)', () => {
  const args = decodeExtenderArgs(
    JSON.parse(
      `{"Pod":{"Metadata":{"NAME":"p","Namespace":"ns1","namespace":"ns2","UID":"u","Annotations":{"A":"b"},
        "OwnerReferences":[{"Kind":"ReplicaSet","NAME":"rs-1","ApiVersion":"apps/v1","Uid":"o"}]},
        "SPEC":{"NodeName":"n1","Containers":[{"Name":"c","Resources":{"Limits":{"r":"1"},"REQUESTS":{"r":"1"}}}]}},
       "Nodes":{"Items":[{"Metadata":{"Name":"a","ResourceVersion":"7"},"Status":{"Addresses":[{"Type":"InternalIP","Address":"10.0.0.1"}]}}]}}`,
    ),
  );
  expect(JSON.parse(JSON.stringify(args.pod))).toEqual({
    metadata: {
      name: 'p',
      namespace: 'ns2',
      uid: 'u',
      // a map's keys are exact, in Go as here
      annotations: { A: 'b' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs-1', uid: 'o' }],
    },
    spec: {
      containers: [{ name: 'c', resources: { requests: { r: '1' }, limits: { r: '1' } } }],
      nodeName: 'n1',
    },
  });
  expect(JSON.parse(JSON.stringify(args.nodes))).toEqual([
    {
      metadata: { name: 'a', resourceVersion: '7' },
      status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] },
    },
  ]);
  // a null leaves a struct or a string as it was, and sets a list or a map to nil
  const nulls = decodeExtenderArgs(
    JSON.parse(
      '{"Pod":{"metadata":{"name":"p","NAME":null,"annotations":{"a":"b"},"Annotations":null},"Metadata":null},"NodeNames":[]}',
    ),
  );
  expect(nulls.pod.metadata).toMatchObject({ name: 'p', annotations: {} });
  const victims = decodePreemptionArgs({
    Pod: pod(),
    NodeNameToVictims: { n1: { Pods: [{ Metadata: { UID: 'u1' } }] } },
  });
  expect(victims.victims!.get('n1')!.pods).toEqual([{ uid: 'u1' }]);
});
