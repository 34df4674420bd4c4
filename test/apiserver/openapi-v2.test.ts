// OpenAPI v2 as kubectl before v1.27 reads it: /openapi/v2 as gnostic's protobuf (field numbers of
// OpenAPIv2.proto; the e2e suite has kubectl v1.20.2 itself decode it, test/e2e/kubectl-embedded),
// or JSON; the custom resources' definitions, no built-in kind's, and a PATCH per kind with dryRun.
import fc from 'fast-check';
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { OPENAPI_V2_PROTOBUF } from '../../src/apiserver/media.js';
import { toV2Schema } from '../../src/apiserver/openapi-v2.js';
import { FLOATINGIP_CRD } from '../../src/apiserver/seed.js';
import { http, withServer } from './helpers.js';

let server: EmbeddedApiServer;
beforeEach(async () => {
  server = await withServer({ seed: 'none' });
  await http(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', FLOATINGIP_CRD);
});
afterEach(() => server.close());

type Schema = {
  $ref?: string;
  type?: string;
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
};
type Doc = {
  swagger: string;
  paths: Record<string, Record<string, { parameters: { name: string; in: string }[]; consumes?: unknown }>>;
  definitions: Record<string, Schema & Record<string, unknown>>;
};

test('JSON: the custom resources’ definitions with their metadata, every reference resolved, no built-in kind', async () => {
  const res = await http(server, 'GET', '/openapi/v2');
  expect(res.status).toBe(200);
  const doc = res.json as unknown as Doc;
  expect(doc.swagger).toBe('2.0');
  const fip = doc.definitions['io.k8s.galaxy.v1alpha1.FloatingIP']!;
  expect(fip['x-kubernetes-group-version-kind']).toEqual([
    { group: 'galaxy.k8s.io', version: 'v1alpha1', kind: 'FloatingIP' },
  ]);
  expect(fip.properties!.spec).toMatchObject({
    required: ['attribute', 'key', 'policy', 'updateTime'],
    properties: { key: { type: 'string' } },
  });
  expect(fip.properties!.metadata).toEqual({
    $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
  });
  expect(doc.definitions['io.k8s.galaxy.v1alpha1.FloatingIPList']!.properties!.items!.items).toEqual({
    $ref: '#/definitions/io.k8s.galaxy.v1alpha1.FloatingIP',
  });
  const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
  expect(refs.length).toBeGreaterThan(3);
  for (const ref of refs) expect(doc.definitions[ref.replace('#/definitions/', '')]).toBeDefined();
  expect(doc.definitions['io.k8s.api.core.v1.Pod']).toBeUndefined();
});

test('JSON: a PATCH per kind, built-in and custom, with dryRun and its kind; no patch types', async () => {
  const doc = (await http(server, 'GET', '/openapi/v2')).json as unknown as Doc;
  const pods = doc.paths['/api/v1/namespaces/{namespace}/pods/{name}']!.patch!;
  expect(pods).toMatchObject({
    'x-kubernetes-group-version-kind': { group: '', version: 'v1', kind: 'Pod' },
    parameters: [{ name: 'dryRun', in: 'query' }],
  });
  expect(pods.consumes).toBeUndefined();
  expect(doc.paths['/apis/galaxy.k8s.io/v1alpha1/floatingips/{name}']!.patch).toMatchObject({
    'x-kubernetes-group-version-kind': { group: 'galaxy.k8s.io', version: 'v1alpha1', kind: 'FloatingIP' },
  });
});

/** Protobuf's wire format as field number → values (varints as numbers, bytes as Buffers). */
function fields(buf: Buffer): Map<number, (number | Buffer)[]> {
  const out = new Map<number, (number | Buffer)[]>();
  let at = 0;
  const varint = () => {
    let n = 0;
    for (let shift = 0; ; shift += 7) {
      const b = buf[at++]!;
      n += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return n;
    }
  };
  while (at < buf.length) {
    const tag = varint();
    const field = tag >>> 3;
    let value: number | Buffer;
    if ((tag & 7) === 0) value = varint();
    else if ((tag & 7) === 1) {
      value = buf.readDoubleLE(at);
      at += 8;
    } else if ((tag & 7) === 2) {
      const length = varint();
      value = buf.subarray(at, at + length);
      at += length;
    } else throw new Error(`wire type ${tag & 7} at ${at}`);
    out.set(field, [...(out.get(field) ?? []), value]);
  }
  return out;
}
const bytes = (m: Map<number, (number | Buffer)[]>, field: number): Buffer[] =>
  (m.get(field) ?? []) as Buffer[];
const text = (m: Map<number, (number | Buffer)[]>, field: number): string[] =>
  bytes(m, field).map((b) => b.toString('utf8'));
/** The value of the NamedX entry called `name` among a message's repeated field. */
const named = (m: Map<number, (number | Buffer)[]>, field: number, name: string) => {
  const entry = bytes(m, field)
    .map(fields)
    .find((e) => text(e, 1)[0] === name);
  if (!entry) throw new Error(`no entry ${name} in field ${field}`);
  return fields(bytes(entry, 2)[0]!);
};

test('protobuf, when asked for before JSON: the same document in gnostic’s messages', async () => {
  const res = await fetch(`${server.url}/openapi/v2`, {
    headers: { Accept: `${OPENAPI_V2_PROTOBUF}, application/json` },
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/octet-stream');
  const doc = fields(Buffer.from(await res.arrayBuffer()));
  expect(text(doc, 1)).toEqual(['2.0']);
  // definitions (9) → NamedSchema → Schema: properties (25) → spec → properties → key: type (22)
  const definitions = fields(bytes(doc, 9)[0]!);
  const fip = named(definitions, 1, 'io.k8s.galaxy.v1alpha1.FloatingIP');
  const spec = named(fields(bytes(fip, 25)[0]!), 1, 'spec');
  expect(text(spec, 19)).toEqual(['attribute', 'key', 'policy', 'updateTime']);
  const key = named(fields(bytes(spec, 25)[0]!), 1, 'key');
  expect(text(fields(bytes(key, 22)[0]!), 1)).toEqual(['string']);
  // vendor extension (31): NamedAny whose Any's YAML (2) is the JSON of the value
  const gvk = named(fip, 31, 'x-kubernetes-group-version-kind');
  expect(JSON.parse(text(gvk, 2)[0]!)).toEqual([
    { group: 'galaxy.k8s.io', version: 'v1alpha1', kind: 'FloatingIP' },
  ]);
  const metadata = named(fields(bytes(fip, 25)[0]!), 1, 'metadata');
  expect(text(metadata, 1)).toEqual(['#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']);
  // paths (8) → NamedPathItem (2) → PathItem: patch (8) → parameters (8) → Parameter (1) →
  // NonBodyParameter (2) → QueryParameterSubSchema (3): name (4)
  const item = named(fields(bytes(doc, 8)[0]!), 2, '/apis/galaxy.k8s.io/v1alpha1/floatingips/{name}');
  const patch = fields(bytes(item, 8)[0]!);
  const query = fields(bytes(fields(bytes(fields(bytes(fields(bytes(patch, 8)[0]!), 1)[0]!), 2)[0]!), 3)[0]!);
  expect([text(query, 4), text(query, 2)]).toEqual([['dryRun'], ['query']]);
  expect(JSON.parse(text(named(patch, 13, 'x-kubernetes-group-version-kind'), 2)[0]!)).toEqual({
    group: 'galaxy.k8s.io',
    version: 'v1alpha1',
    kind: 'FloatingIP',
  });
});

test('an Accept of neither JSON nor its protobuf is 406; none at all is JSON', async () => {
  const refused = await fetch(`${server.url}/openapi/v2`, {
    headers: { Accept: 'application/vnd.kubernetes.protobuf' },
  });
  expect(refused.status).toBe(406);
  expect(((await refused.json()) as { reason: string }).reason).toBe('NotAcceptable');
  const plain = await fetch(`${server.url}/openapi/v2`, { headers: { Accept: '' } });
  expect(((await plain.json()) as Doc).swagger).toBe('2.0');
});

test('any Accept header: the protobuf, JSON or 406, never a server error', async () => {
  const token = fc.constantFrom(
    OPENAPI_V2_PROTOBUF,
    'application/json',
    '*/*',
    'application/*',
    'text/html',
    'application/vnd.kubernetes.protobuf',
  );
  const accept = fc.oneof(
    fc
      .array(fc.tuple(token, fc.constantFrom('', ';q=0.5', ';as=Table', ';;', ' ')), { maxLength: 4 })
      .map((parts) => parts.map(([t, p]) => t + p).join(',')),
    fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      maxLength: 40,
    }),
  );
  await fc.assert(
    fc.asyncProperty(accept, async (value) => {
      const res = await fetch(`${server.url}/openapi/v2`, { headers: { Accept: value } });
      const type = res.headers.get('content-type');
      await res.arrayBuffer();
      const first = value
        .split(',')
        .map((part) => part.split(';')[0]!.trim().toLowerCase())
        .find((t) => [OPENAPI_V2_PROTOBUF, 'application/json', 'application/*', '*/*'].includes(t));
      if (first === OPENAPI_V2_PROTOBUF)
        expect([res.status, type]).toEqual([200, 'application/octet-stream']);
      else if (first !== undefined || value.trim() === '')
        expect([res.status, type]).toEqual([200, 'application/json']);
      else expect(res.status).toBe(406);
    }),
    { numRuns: 200 },
  );
});

test('a v3 schema as v2: references into #/definitions, v3-only keywords dropped, preserved objects without properties', () => {
  expect(
    toV2Schema(
      {
        type: 'object',
        nullable: true,
        properties: {
          meta: { $ref: '#/components/schemas/io.k8s.Meta', description: 'kept out' },
          port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
          list: { type: 'array', items: { $ref: '#/components/schemas/io.k8s.Item' } },
          labels: { type: 'object', additionalProperties: { type: 'string', nullable: true } },
          free: {
            type: 'object',
            'x-kubernetes-preserve-unknown-fields': true,
            properties: { a: { type: 'string' } },
          },
        },
      },
      new Set(['io.k8s.Meta', 'io.k8s.Item']),
    ),
  ).toEqual({
    type: 'object',
    properties: {
      meta: { $ref: '#/definitions/io.k8s.Meta' },
      port: { 'x-kubernetes-int-or-string': true },
      list: { type: 'array', items: { $ref: '#/definitions/io.k8s.Item' } },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
  });
});

test('what kubectl v1.20 cannot parse is left out: unknown or several types, arrays without items, references elsewhere', () => {
  expect(
    toV2Schema(
      {
        type: 'object',
        properties: {
          nothing: { type: 'null' },
          either: { type: ['string', 'integer'], description: 'd' },
          one: { type: ['string'] },
          bare: { type: 'array' },
          tuple: { type: 'array', items: [{ type: 'string' }] },
          missing: { $ref: '#/components/schemas/io.k8s.Missing' },
          elsewhere: { $ref: 'https://example.com/schema.json' },
          open: { type: 'object', additionalProperties: false },
        },
      },
      new Set(['io.k8s.Item']),
    ),
  ).toEqual({
    type: 'object',
    properties: {
      nothing: {},
      either: { description: 'd' },
      one: { type: 'string' },
      bare: { type: 'array', items: {} },
      tuple: { type: 'array', items: {} },
      missing: {},
      elsewhere: {},
      open: { type: 'object', additionalProperties: false },
    },
  });
});

test('a CRD whose schema kube-apiserver would refuse still leaves a document of parseable definitions', async () => {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'odds.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'odds', singular: 'odd', kind: 'Odd', listKind: 'OddList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: { list: { type: 'array' }, weird: { type: 'null' } } },
              },
            },
          },
        },
      ],
    },
  };
  expect(
    (await http(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status,
  ).toBe(201);
  const doc = (await http(server, 'GET', '/openapi/v2')).json as unknown as Doc;
  expect(doc.definitions['com.example.v1.Odd']!.properties!.spec!.properties).toEqual({
    list: { type: 'array', items: {} },
    weird: {},
  });
});
