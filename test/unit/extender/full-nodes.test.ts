// The full-Node reader must read every request exactly as JSON.parse and the wire decoder would,
// while decoding a node only when its bytes are new: the same request refused with the same words,
// the same nodes for the same bytes, and never a node decoded from other bytes than the request's.
import fc from 'fast-check';
import { FullNodeReader } from '../../../src/extender/full-nodes.js';
import { decodeExtenderArgs, decodeRequestNode } from '../../../src/extender/wire.js';

const node = (name: string, ip: string) => ({
  kind: 'Node',
  apiVersion: 'v1',
  metadata: { name, resourceVersion: '7', labels: { zone: 'a' } },
  status: { addresses: [{ type: 'InternalIP', address: ip }], capacity: { pods: '110' } },
});
const request = (nodes: unknown[]) =>
  Buffer.from(
    JSON.stringify({
      Pod: { metadata: { name: 'p', namespace: 'ns1' } },
      Nodes: { items: nodes },
      NodeNames: null,
    }),
  );

function counted() {
  const decoded: string[] = [];
  const reader = new FullNodeReader((value, i) => {
    const n = decodeRequestNode(value, i);
    decoded.push(n.metadata!.name!);
    return n;
  });
  const read = (raw: Buffer) => {
    const r = reader.read(raw);
    return decodeExtenderArgs(r.body, raw, r.known);
  };
  return { decoded, read };
}

/** The request as JSON.parse and the wire decoder read it, without the reader. */
const wire = (raw: Buffer) => decodeExtenderArgs(JSON.parse(raw.toString('utf8')) as unknown, raw);

/** What a read gives, to compare the reader's with wire's: the args, or the refusal's words. */
function outcome(f: () => ReturnType<typeof wire>) {
  try {
    const args = f();
    return { pod: args.pod, nodes: args.nodes, names: args.nodeNames, spans: args.nodeSpans?.() };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

test('nodes whose bytes were seen are not decoded again; changed ones are, from their own bytes', () => {
  const { decoded, read } = counted();
  const first = read(request([node('n1', '10.0.0.1'), node('n2', '10.0.0.2')]));
  expect(first.nodes!.map((n) => n.status!.addresses![0]!.address)).toEqual(['10.0.0.1', '10.0.0.2']);
  // the scheduler's next pod: the same nodes, in another order
  const again = read(request([node('n2', '10.0.0.2'), node('n1', '10.0.0.1')]));
  expect(again.nodes!.map((n) => n.metadata!.name)).toEqual(['n2', 'n1']);
  expect(decoded).toEqual(['n1', 'n2']);
  // n1 under the same name with other bytes (a forged request, or the node changed): its own bytes
  const forged = read(request([node('n1', '192.168.9.9'), node('n2', '10.0.0.2')]));
  expect(forged.nodes![0]!.status!.addresses![0]!.address).toBe('192.168.9.9');
  expect(decoded).toEqual(['n1', 'n2', 'n1']);
  // and the spans point at this request's bytes
  const raw = request([node('n1', '10.0.0.1')]);
  const spans = read(raw).nodeSpans!();
  expect(JSON.parse(raw.toString('utf8', spans[0]![0], spans[0]![1]))).toEqual(node('n1', '10.0.0.1'));
});

test('a text that is not JSON is refused with JSON.parse’s words, wherever it is wrong', () => {
  const { read } = counted();
  const good = request([node('n1', '10.0.0.1'), node('n2', '10.0.0.2')]).toString();
  read(Buffer.from(good)); // n1 and n2 are known now
  const broken = [
    good.replace('"10.0.0.2"}]', '"10.0.0.2"]]'), // inside a node
    good.replace('}},{"kind"', '}}{"kind"'), // between nodes
    good.replace('"namespace":"ns1"', '"namespace":ns1'), // in the Pod
    good.slice(0, -1), // cut short
    good.replace('"NodeNames":null', '"NodeNames":nul'),
    good.replace('[{', '[,{'),
  ];
  for (const text of broken) {
    let expected = '';
    try {
      JSON.parse(text);
    } catch (err) {
      expected = (err as Error).message;
    }
    expect(expected).not.toBe('');
    expect(() => read(Buffer.from(text))).toThrow(expected);
  }
});

test('any text: read exactly as JSON.parse and the decoder read it (generated, with corruptions)', () => {
  const { read } = counted();
  const aNode = fc.record({
    name: fc.constantFrom('n1', 'n2', 'n3', 'n"4', 'n\\5'),
    ip: fc.constantFrom('10.0.0.1', '10.0.0.2', 'x'),
    extra: fc.jsonValue(),
  });
  fc.assert(
    fc.property(
      fc.array(aNode, { maxLength: 5 }),
      fc.nat(),
      fc.constantFrom('', '}', ']', ',', '"', '\\', 'x', ' '),
      fc.boolean(),
      (nodes, at, junk, corrupt) => {
        const text = request(nodes.map((n) => ({ ...node(n.name, n.ip), extra: n.extra }))).toString();
        const i = at % (text.length + 1);
        const raw = Buffer.from(corrupt ? text.slice(0, i) + junk + text.slice(i + (junk ? 0 : 1)) : text);
        expect(outcome(() => read(raw))).toEqual(outcome(() => wire(raw)));
      },
    ),
    { numRuns: 3000 },
  );
});

test('with every node known (its end taken from its bytes), any corruption anywhere reads as JSON.parse reads it', () => {
  const nodes = [node('n1', '10.0.0.1'), node('n2', '10.0.0.2'), node('n3', '10.0.0.3')];
  const text = request(nodes).toString();
  fc.assert(
    fc.property(
      fc.nat(),
      fc.constantFrom('insert', 'replace', 'delete'),
      fc.constantFrom('}', ']', ',', '"', '\\', 'x', '7', ' ', '{"metadata":{"name":"n2"}}'),
      (at, how, junk) => {
        const { decoded, read } = counted();
        read(Buffer.from(text)); // every node known now
        const i = at % text.length;
        const rest = how === 'insert' ? text.slice(i) : text.slice(i + 1);
        const raw = Buffer.from(text.slice(0, i) + (how === 'delete' ? '' : junk) + rest);
        expect(outcome(() => read(raw))).toEqual(outcome(() => wire(raw)));
        // only a node whose own bytes changed is decoded again
        expect(decoded.length).toBeLessThanOrEqual(nodes.length + 1);
      },
    ),
    { numRuns: 3000 },
  );
});

test('what is remembered is bounded in bytes: huge nodes are never kept, the oldest go first', () => {
  const decoded: string[] = [];
  const reader = new FullNodeReader(
    (value, i) => {
      const n = decodeRequestNode(value, i);
      decoded.push(n.metadata!.name!);
      return n;
    },
    10_000,
    64 * 1024,
  );
  const read = (nodes: unknown[]) => {
    const raw = request(nodes);
    const r = reader.read(raw);
    return decodeExtenderArgs(r.body, raw, r.known);
  };
  const big = { ...node('big', '10.0.0.9'), padding: 'x'.repeat(2000) };
  read([big]);
  read([big]);
  // over a 64th of the bound: parsed each time, never kept
  expect(decoded).toEqual(['big', 'big']);
  // 1 KiB nodes fill the 64 KiB bound; the first ones are forgotten
  const small = (i: number) => ({ ...node(`n${i}`, '10.0.0.1'), padding: 'y'.repeat(700) });
  read(Array.from({ length: 100 }, (_, i) => small(i)));
  decoded.length = 0;
  read([small(99), small(0)]);
  expect(decoded).toEqual(['n0']);
});

test('a names-only request, and items keyed as Go also reads them ("Items", escaped), read as JSON.parse reads them', () => {
  const { read } = counted();
  const names = read(Buffer.from('{"Pod":{"metadata":{"name":"p"}},"Nodes":null,"NodeNames":["n1","n2"]}'));
  expect(names.nodeNames).toEqual(['n1', 'n2']);
  expect(names.nodes).toBeUndefined();
  const plain = request([node('n1', '10.0.0.1')]).toString();
  for (const key of ['"Items"', '"\\u0069tems"']) {
    const raw = Buffer.from(plain.replace('"items"', key));
    const args = read(raw);
    expect(args.nodes!.map((n) => n.status!.addresses![0]!.address)).toEqual(['10.0.0.1']);
    // the echo's span is this node's bytes
    const [from, to] = args.nodeSpans!()[0]!;
    expect(JSON.parse(raw.toString('utf8', from, to))).toEqual(node('n1', '10.0.0.1'));
  }
});

test('Nodes keyed as Go writes it, spaced, escaped or in lower case: the same nodes and spans', () => {
  const plain = request([node('n1', '10.0.0.1'), node('n2', '10.0.0.2')]).toString();
  // the key as the span reader finds it (each node decoded once, the second read from the first
  // one's bytes), or, in another case, left to JSON.parse and the wire decoder whole (never the reader)
  const cases: [string, string[]][] = [
    ['"Nodes":{', ['n1', 'n2']],
    ['"Nodes" :\n {', ['n1', 'n2']],
    ['"\\u004eodes":{', ['n1', 'n2']],
    ['"nodes":{', []],
  ];
  for (const [key, decodedByReader] of cases) {
    const { decoded, read } = counted();
    const raw = Buffer.from(plain.replace('"Nodes":{', key));
    for (let i = 0; i < 2; i++) {
      const args = read(raw);
      expect(args.nodes!.map((n) => n.status!.addresses![0]!.address)).toEqual(['10.0.0.1', '10.0.0.2']);
      const [from, to] = args.nodeSpans!()[1]!;
      expect(JSON.parse(raw.toString('utf8', from, to))).toEqual(node('n2', '10.0.0.2'));
    }
    expect(decoded).toEqual(decodedByReader);
  }
});

test('a pod’s prioritize after its filter: the same Pod bytes are read once, decoded once; other bytes are read as sent', () => {
  const { read } = counted();
  const pod = (uid: string) => ({
    metadata: { name: 'p', namespace: 'ns1', uid },
    spec: { containers: [{ name: 'c', resources: { requests: { 'tke.cloud.tencent.com/eni-ip': '1' } } }] },
  });
  const names = (p: unknown, list: string[]) =>
    Buffer.from(JSON.stringify({ Pod: p, Nodes: null, NodeNames: list }));
  const filter = read(names(pod('u1'), ['n1', 'n2', 'n3']));
  const prioritize = read(names(pod('u1'), ['n1', 'n3']));
  expect(prioritize.nodeNames).toEqual(['n1', 'n3']);
  // the very pod decoded for filter: nothing parsed or decoded again
  expect(prioritize.pod).toBe(filter.pod);
  // the next pod, the same name with another uid: its own bytes
  const next = read(names(pod('u2'), ['n1']));
  expect(next.pod).not.toBe(filter.pod);
  expect(next.pod.metadata!.uid).toBe('u2');
  // full Nodes too
  const full = read(request([node('n1', '10.0.0.1')]));
  const fullAgain = read(request([node('n1', '10.0.0.1')]));
  expect(fullAgain.pod).toBe(full.pod);
});

test('any sequence of requests, with Pods a caller shaped to mislead the reader: read as JSON.parse and the decoder read each', () => {
  const { read } = counted();
  const pods = [
    '{"metadata":{"name":"p","namespace":"ns1"}}',
    '{"metadata":{"name":"p","namespace":"ns2"}}',
    // a "Nodes" key inside the Pod: the first ,"Nodes": is not where the Pod ends
    '{"metadata":{"name":"p","annotations":{"a":"1","Nodes":"x"}}}',
    '7',
    '"p"',
    'null',
  ];
  // what follows the Pod: names, full Nodes, and later keys that JSON.parse lets win over the first Pod
  const tails = [
    ',"Nodes":null,"NodeNames":["n1","n2"]}',
    `,"Nodes":{"items":[${JSON.stringify(node('n1', '10.0.0.1'))}]},"NodeNames":null}`,
    ',"Nodes":null,"NodeNames":["n1"],"Pod":{"metadata":{"name":"q"}}}',
    ',"Nodes":null,"NodeNames":["n1"],"\\u0050od":{"metadata":{"name":"r"}}}',
    ',"Nodes":null,"NodeNames":["n1"],"pod":{"metadata":{"name":"s"}}}',
    ',"Nodes":null,"NodeNames":["n1"],"Pod":"floatip-pod-"}',
    ',"Nodes" : null,"NodeNames":["n1"]}',
  ];
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          pod: fc.constantFrom(...pods),
          tail: fc.constantFrom(...tails),
          at: fc.nat(),
          junk: fc.constantFrom('', '}', ',', '"', 'x', ' '),
          corrupt: fc.boolean(),
        }),
        { minLength: 1, maxLength: 6 },
      ),
      (requests) => {
        for (const r of requests) {
          const text = `{"Pod":${r.pod}${r.tail}`;
          const i = r.at % (text.length + 1);
          const raw = Buffer.from(r.corrupt ? text.slice(0, i) + r.junk + text.slice(i + 1) : text);
          expect(outcome(() => read(raw))).toEqual(outcome(() => wire(raw)));
        }
      },
    ),
    { numRuns: 3000 },
  );
});
