// The extender's request decoders: every field floatip reads from a request is type-checked, and a
// wrong type is a WireError (the server's 400) naming the field, never a crash further in.
import { FullNodeReader } from '../../../src/extender/full-nodes.js';
import {
  decodeBindingArgs,
  decodeRequestNode,
  decodeExtenderArgs,
  decodePreemptionArgs,
} from '../../../src/extender/wire.js';
import { encodeFilterResult, encodePreemptionResult } from '../../../src/extender/wire-answers.js';
import { WireError } from '../../../src/extender/wire-fields.js';

const pod = (extra: Record<string, unknown> = {}) => ({
  metadata: { name: 'p', namespace: 'ns1' },
  ...extra,
});
const decode = (body: unknown) => () => decodeExtenderArgs(body);

test.each([
  [{ Pod: pod({ spec: { containers: 'x' } }), NodeNames: [] }, 'Pod.spec.containers must be a list'],
  [
    { Pod: pod({ spec: { containers: ['c'] } }), NodeNames: [] },
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

test('preempt: an int64 past 2^53 is answered as written, not as the double JSON.parse made of it', () => {
  const cases = ['9223372036854775807', '-9223372036854775808', '12345678901234567'];
  for (const written of cases) {
    // the keys as an older client writes them: Go's decoder reads them case-insensitively
    const text = `{"Pod":{"metadata":{"name":"p"}},"nodenametometavictims":{"n1":{"Pods":[{"UID":"u"}],"numPDBViolations":${written}},"n2":{"Pods":[],"NumPDBViolations":3}}}`;
    const args = decodePreemptionArgs(JSON.parse(text), Buffer.from(text));
    expect(args.victims!.get('n1')).toMatchObject({ numPDBViolationsText: written });
    expect(args.victims!.get('n2')).toEqual({ pods: [], numPDBViolations: 3 });
    expect(encodePreemptionResult(args.victims)).toBe(
      `{"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u"}],"NumPDBViolations":${written}},"n2":{"Pods":[],"NumPDBViolations":3}}}`,
    );
  }
  // the value JSON.parse keeps of a key written twice is the last one's
  const twice =
    '{"Pod":{"metadata":{"name":"p"}},"NodeNameToMetaVictims":{"n1":{"Pods":[],"NumPDBViolations":1234567890123456789,"NumPDBViolations":9007199254740993}}}';
  expect(encodePreemptionResult(decodePreemptionArgs(JSON.parse(twice), Buffer.from(twice)).victims)).toBe(
    '{"NodeNameToMetaVictims":{"n1":{"Pods":[],"NumPDBViolations":9007199254740993}}}',
  );
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
  [
    'nodes in any order: Go writes a map’s keys sorted by their bytes (a number-like name too)',
    {
      NodeNameToMetaVictims: {
        zz: { Pods: [], NumPDBViolations: 1 },
        '10': { Pods: [], NumPDBViolations: 2 },
        aa: { Pods: [], NumPDBViolations: 3 },
        '\u{1f600}': { Pods: [], NumPDBViolations: 4 },
        '\uffef': { Pods: [], NumPDBViolations: 5 },
      },
    },
    '{"NodeNameToMetaVictims":{"10":{"Pods":[],"NumPDBViolations":2},"aa":{"Pods":[],"NumPDBViolations":3},"zz":{"Pods":[],"NumPDBViolations":1},"\uffef":{"Pods":[],"NumPDBViolations":5},"\u{1f600}":{"Pods":[],"NumPDBViolations":4}}}',
  ],
  [
    'a meta entry’s Pods null or absent: null back, as Go’s nil slice',
    { NodeNameToMetaVictims: { a: { Pods: null, NumPDBViolations: 3 }, b: { NumPDBViolations: 1 } } },
    '{"NodeNameToMetaVictims":{"a":{"Pods":null,"NumPDBViolations":3},"b":{"Pods":null,"NumPDBViolations":1}}}',
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

// Fields floatip does not read: galaxy's Go decoder refused the whole request (a 500) when any of
// them did not fit k8s.io/api's types, so floatip refuses it too, naming the field
test.each<[string, Record<string, unknown>, string]>([
  ['an int32 given a string', { spec: { priority: '5' } }, 'Pod.spec.priority must be an int32'],
  ['an int32 given a fraction', { spec: { priority: 1.5 } }, 'Pod.spec.priority must be an int32'],
  ['an int32 out of range', { spec: { priority: 2 ** 31 } }, 'Pod.spec.priority must be an int32'],
  [
    'an int64 given true',
    { metadata: { name: 'p', generation: true } },
    'Pod.metadata.generation must be an int64',
  ],
  ['a bool given a string', { spec: { hostNetwork: 'true' } }, 'Pod.spec.hostNetwork must be true or false'],
  ['a string given a number', { spec: { schedulerName: 5 } }, 'Pod.spec.schedulerName must be a string'],
  [
    'a label that is not a string',
    { metadata: { name: 'p', labels: { a: 1 } } },
    'Pod.metadata.labels["a"] must be a string',
  ],
  ['a list given an object', { spec: { volumes: {} } }, 'Pod.spec.volumes must be a list'],
  ['a struct given a list', { status: [] }, 'Pod.status must be a JSON object'],
  [
    'a nested int32, any key case',
    { spec: { Containers: [{ name: 'c', Ports: [{ containerPort: 'http' }] }] } },
    'Pod.spec.Containers[0].Ports[0].containerPort must be an int32',
  ],
  [
    'an int-or-string given a fraction',
    { spec: { containers: [{ name: 'c', livenessProbe: { httpGet: { port: 80.5 } } }] } },
    'Pod.spec.containers[0].livenessProbe.httpGet.port must be a string or an int32',
  ],
  [
    'a time that is not RFC 3339',
    { metadata: { name: 'p', creationTimestamp: '2020-01-02 03:04:05' } },
    'Pod.metadata.creationTimestamp must be a time in RFC 3339 (such as "2020-01-02T03:04:05Z")',
  ],
  [
    'a time on a day the month has not',
    { status: { startTime: '2021-02-29T00:00:00Z' } },
    'Pod.status.startTime must be a time in RFC 3339 (such as "2020-01-02T03:04:05Z")',
  ],
  [
    'a quantity that is not one',
    { spec: { overhead: { cpu: '1 core' } } },
    'Pod.spec.overhead["cpu"] must be a quantity (such as "1", "500m" or "2Gi")',
  ],
  [
    'a quantity outside the fields floatip reads',
    { spec: { volumes: [{ name: 'v', emptyDir: { sizeLimit: '1Gb' } }] } },
    'Pod.spec.volumes[0].emptyDir.sizeLimit must be a quantity (such as "1", "500m" or "2Gi")',
  ],
  [
    'a key written twice, the first of the wrong type',
    { spec: { priority: 'x', Priority: 5 } },
    'Pod.spec.priority must be an int32',
  ],
])('a Pod with %s is refused', (_, extra, message) => {
  const body = { Pod: { metadata: { name: 'p' }, ...extra }, NodeNames: ['a'] };
  expect(decode(body)).toThrow(new WireError(message));
});

test('what Go’s decoder reads is read: nulls, unknown keys, quantities and times in their forms, ints at their limits', () => {
  const body = {
    Pod: {
      metadata: {
        name: 'p',
        generation: 2 ** 53,
        creationTimestamp: '2020-01-02T03:04:05.123+08:00',
        deletionTimestamp: null,
        labels: null,
        managedFields: [{ manager: 'm', fieldsV1: { 'f:metadata': {} }, time: '2020-02-29T23:59:59Z' }],
        someFieldKubernetesDoesNotHave: { anything: [1, 'x'] },
      },
      spec: {
        priority: -(2 ** 31),
        hostNetwork: null,
        overhead: { cpu: '250m', memory: '64Mi', x: 1.5, y: '1e3', z: '+.5', w: '2E' },
        volumes: [{ name: 'v', emptyDir: { sizeLimit: 1024 } }],
        containers: [
          { name: 'c', ports: [{ containerPort: 8080 }], readinessProbe: { tcpSocket: { port: 'http' } } },
        ],
      },
      status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', lastProbeTime: null }] },
    },
    NodeNames: ['a'],
  };
  expect(decodeExtenderArgs(body).pod.metadata?.name).toBe('p');
});

test('full Nodes and preempt’s victims are held to the same types', () => {
  const node = { metadata: { name: 'n' }, status: { images: [{ names: ['i'], sizeBytes: 'big' }] } };
  expect(decode({ Pod: pod(), Nodes: { items: [node] } })).toThrow(
    new WireError('Nodes.items[0].status.images[0].sizeBytes must be an int64'),
  );
  const capacity = {
    metadata: { name: 'n' },
    status: { capacity: { cpu: '2', pods: '110', 'x/y': 'lots' } },
  };
  expect(decode({ Pod: pod(), Nodes: { items: [capacity] } })).toThrow(
    new WireError('Nodes.items[0].status.capacity["x/y"] must be a quantity (such as "1", "500m" or "2Gi")'),
  );
  const victim = { metadata: { name: 'v', uid: 'u1' }, spec: { priority: 'high' } };
  // the meta map is the one galaxy uses here, but Go decoded the full one too
  expect(() =>
    decodePreemptionArgs({
      Pod: pod(),
      NodeNameToMetaVictims: { n: { Pods: [{ UID: 'u1' }] } },
      NodeNameToVictims: { n: { Pods: [victim] } },
    }),
  ).toThrow(new WireError(`NodeNameToVictims["n"].Pods[0].spec.priority must be an int32`));
});

// JSON.parse reads 1.0 as 1; Go's decoder refuses it for an integer field: the text is read for them
const FRACTION = "(Go's decoder reads no integer written with a fraction or an exponent)";
const readAs = (text: string) => {
  const raw = Buffer.from(text);
  const read = new FullNodeReader(decodeRequestNode).read(raw);
  return () => decodeExtenderArgs(read.body, raw, read.known, read.podText);
};

test.each<[string, string, string | undefined]>([
  [
    'the Pod as the scheduler writes it',
    '{"Pod":{"metadata":{"name":"p"},"spec":{"priority":1.0}},"Nodes":null,"NodeNames":["a"]}',
    `Pod.spec.priority must be an int32, not 1.0 ${FRACTION}`,
  ],
  [
    'the Pod under another spelling (the whole text is read)',
    '{"pod":{"metadata":{"name":"p"},"spec":{"Containers":[{"name":"c","ports":[{"containerPort":8e1}]}]}},"nodeNames":["a"]}',
    `pod.spec.Containers[0].ports[0].containerPort must be an int32, not 8e1 ${FRACTION}`,
  ],
  [
    'a full Node the reader cuts out',
    '{"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[{"metadata":{"name":"n"},"status":{"images":[{"sizeBytes":1E3}]}}]}}',
    `Nodes.items[0].status.images[0].sizeBytes must be an int64, not 1E3 ${FRACTION}`,
  ],
  [
    'an int-or-string',
    '{"Pod":{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","readinessProbe":{"httpGet":{"port":80.0}}}]}},"NodeNames":["a"]}',
    `Pod.spec.containers[0].readinessProbe.httpGet.port must be a string or an int32, not 80.0 ${FRACTION}`,
  ],
  [
    'quantities and unknown fields, which may have fractions',
    '{"Pod":{"metadata":{"name":"p","x":1.0},"spec":{"overhead":{"cpu":0.5}}},"Nodes":{"items":[{"metadata":{"name":"n"},"status":{"capacity":{"cpu":2.0}}}]}}',
    undefined,
  ],
])('%s: an integer written with a fraction', (_, text, message) => {
  if (message) expect(readAs(text)).toThrow(new WireError(message));
  else expect(readAs(text)).not.toThrow();
});

test('preempt: a victim’s integers are read in the text too', () => {
  const text =
    '{"Pod":{"metadata":{"name":"p"}},"NodeNameToVictims":{"n":{"Pods":[{"metadata":{"name":"v","generation":2.0}}],"NumPDBViolations":0}}}';
  expect(() => decodePreemptionArgs(JSON.parse(text), Buffer.from(text))).toThrow(
    new WireError(`NodeNameToVictims["n"].Pods[0].metadata.generation must be an int64, not 2.0 ${FRACTION}`),
  );
});

test('a resource request of null is the zero quantity, as Go stores it: the resource is still named', () => {
  const body = {
    Pod: {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', resources: { requests: { r: null } } }] },
    },
    NodeNames: ['a'],
  };
  expect(decodeExtenderArgs(body).pod.spec?.containers[0]?.resources?.requests).toEqual({ r: '0' });
});

test('a null where Go decodes a list element into a struct is that struct’s zero value, as galaxy read it', () => {
  const body = {
    Pod: {
      metadata: { name: 'p', ownerReferences: [null] },
      spec: { containers: [null, { name: 'c', resources: { limits: { r: '1' } } }] },
    },
    Nodes: { items: [{ metadata: { name: 'n' }, status: { addresses: [null] } }] },
  };
  const args = decodeExtenderArgs(body);
  expect(JSON.parse(JSON.stringify(args.pod))).toEqual({
    metadata: {
      name: 'p',
      namespace: '',
      annotations: {},
      ownerReferences: [{ apiVersion: '', kind: '', name: '', uid: '' }],
    },
    spec: {
      containers: [
        { name: '', resources: { requests: {}, limits: {} } },
        { name: 'c', resources: { requests: {}, limits: { r: '1' } } },
      ],
    },
  });
  expect(args.nodes?.[0]?.status?.addresses).toEqual([{ type: '', address: '' }]);
  // a victim is a pointer: galaxy read a null one's UID through nil (a 500); floatip refuses it
  expect(() =>
    decodePreemptionArgs({ Pod: pod(), NodeNameToMetaVictims: { n: { Pods: [null], NumPDBViolations: 0 } } }),
  ).toThrow(new WireError('victims of n: Pods[0] must be a JSON object'));
});

test('a null node name is "", as Go leaves a string it is given null for', () => {
  expect(decodeExtenderArgs({ Pod: pod(), NodeNames: [null, 'a'] }).nodeNames).toEqual(['', 'a']);
});

test('every key naming a field must fit it, not only the last one, which wins (Go decodes each in turn)', () => {
  expect(() =>
    decodeBindingArgs({ PodName: 'p', podUID: 5, PodUID: 'u', PodNamespace: 'ns1', Node: 'n' }),
  ).toThrow(new WireError('podUID must be a string'));
  expect(decode({ Pod: pod(), nodeNames: 'a', NodeNames: ['a'] })).toThrow(
    new WireError('nodeNames must be a list'),
  );
  expect(decode({ pod: [], Pod: pod(), NodeNames: ['a'] })).toThrow(
    new WireError('pod must be a JSON object'),
  );
  expect(() =>
    decodePreemptionArgs({ Pod: pod(), nodeNameToMetaVictims: [], NodeNameToMetaVictims: {} }),
  ).toThrow(new WireError('nodeNameToMetaVictims must be a JSON object'));
});

// what JSON.parse hides beyond fractions: a quantity's raw bytes, an int64 past 2^53
test.each<[string, string, string | undefined]>([
  [
    'a quantity written as a number too large for a double (Go reads its text)',
    '{"Pod":{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":1e400}}}]}},"NodeNames":["a"]}',
    undefined,
  ],
  [
    'a quantity padded with spaces (Go trims them)',
    '{"Pod":{"metadata":{"name":"p"},"spec":{"overhead":{"cpu":" 100m "}}},"NodeNames":["a"]}',
    undefined,
  ],
  [
    'a quantity with a \\u escape (Go reads the bytes undecoded)',
    '{"Pod":{"metadata":{"name":"p"},"spec":{"overhead":{"cpu":"\\u0031"}}},"NodeNames":["a"]}',
    'Pod.spec.overhead["cpu"] must be a quantity (such as "1", "500m" or "2Gi")',
  ],
  [
    'a full Node’s quantity with a \\u escape',
    '{"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[{"metadata":{"name":"n"},"status":{"capacity":{"cpu":"\\u0032"}}}]}}',
    'Nodes.items[0].status.capacity["cpu"] must be a quantity (such as "1", "500m" or "2Gi")',
  ],
  [
    'the largest int64',
    '{"Pod":{"metadata":{"name":"p","generation":9223372036854775807},"spec":{}},"NodeNames":["a"]}',
    undefined,
  ],
  [
    'one past the largest int64 (a double cannot tell them apart)',
    '{"Pod":{"metadata":{"name":"p","generation":9223372036854775808},"spec":{}},"NodeNames":["a"]}',
    'Pod.metadata.generation must be an int64',
  ],
  [
    'one below the smallest int64',
    '{"Pod":{"metadata":{"name":"p"},"spec":{"activeDeadlineSeconds":-9223372036854775809}},"NodeNames":["a"]}',
    'Pod.spec.activeDeadlineSeconds must be an int64',
  ],
])('%s', (_, text, message) => {
  if (message) expect(readAs(text)).toThrow(new WireError(message));
  else expect(readAs(text)).not.toThrow();
});

test('preempt: NumPDBViolations anywhere in int64, decided by its text', () => {
  const text = (n: string) =>
    `{"Pod":{"metadata":{"name":"p"}},"NodeNameToMetaVictims":{"n":{"Pods":[{"UID":"u"}],"NumPDBViolations":${n}}}}`;
  const read = (n: string) => () => decodePreemptionArgs(JSON.parse(text(n)), Buffer.from(text(n)));
  expect(read('9223372036854775807')).not.toThrow();
  expect(read('9223372036854775808')).toThrow(
    new WireError('NodeNameToMetaVictims["n"].NumPDBViolations must be an int64'),
  );
});

test('filter: FailedNodes is written in Go’s map order, not the request’s', () => {
  const answer = encodeFilterResult(
    {
      nodeNames: [],
      failedNodes: {
        nodey: 'FloatingIPPlugin:UnknowNode',
        'demo-node-3': 'FloatingIPPlugin:NoFIPLeft',
        '7': 'FloatingIPPlugin:NoFIPLeft',
        nodex: 'FloatingIPPlugin:NoFIPConfigNode',
      },
      error: '',
    },
    () => Buffer.alloc(0),
  ).toString();
  expect(answer).toBe(
    '{"Nodes":null,"NodeNames":[],"FailedNodes":{"7":"FloatingIPPlugin:NoFIPLeft","demo-node-3":"FloatingIPPlugin:NoFIPLeft","nodex":"FloatingIPPlugin:NoFIPConfigNode","nodey":"FloatingIPPlugin:UnknowNode"},"FailedAndUnresolvableNodes":{},"Error":""}',
  );
});
