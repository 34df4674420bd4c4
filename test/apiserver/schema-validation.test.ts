// Custom resources are checked against their CRD version's openAPIV3Schema on every write, with
// kube-apiserver's 422 Invalid, causes and message texts; a CRD without a schema checks nothing.
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { FLOATINGIP_CRD, POOL_CRD } from '../../src/apiserver/seed.js';
import { http, withServer } from './helpers.js';

let server: EmbeddedApiServer;

const POOLS = '/apis/galaxy.k8s.io/v1alpha1/namespaces/kube-system/pools';
const FIPS = '/apis/galaxy.k8s.io/v1alpha1/floatingips';
const GADGETS = '/apis/example.io/v1/namespaces/default/gadgets';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

const gadgetsCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.example.io' },
  spec: {
    group: 'example.io',
    scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: {
          status: {},
          scale: { specReplicasPath: '.spec.count', statusReplicasPath: '.status.count' },
        },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  mode: { type: 'string', enum: ['fast', 'slow'] },
                  note: { type: 'string', nullable: true },
                  port: { 'x-kubernetes-int-or-string': true },
                  ratio: { type: 'number', minimum: 0.5 },
                  tags: { type: 'array', items: { type: 'string' } },
                  weights: { type: 'object', additionalProperties: { type: 'integer' } },
                  free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  day: { type: 'string', format: 'date' },
                  count: { type: 'integer', maximum: 1000000 },
                },
              },
              status: { type: 'object', properties: { phase: { type: 'string', enum: ['Ready'] } } },
            },
          },
        },
      },
    ],
  },
};

beforeEach(async () => {
  server = await withServer({ seed: 'none' });
  for (const crd of [FLOATINGIP_CRD, POOL_CRD, gadgetsCrd])
    expect((await http(server, 'POST', CRDS, crd)).status).toBe(201);
});
afterEach(() => server.close());

const pool = (name: string, fields: Record<string, unknown>) => ({
  apiVersion: 'galaxy.k8s.io/v1alpha1',
  kind: 'Pool',
  metadata: { name },
  ...fields,
});
const fip = (spec: Record<string, unknown>) => ({
  apiVersion: 'galaxy.k8s.io/v1alpha1',
  kind: 'FloatingIP',
  metadata: { name: '10.0.0.1' },
  spec: { key: 'pool__p_', attribute: '', policy: 2, updateTime: '2020-01-01T00:00:00Z', ...spec },
});
const gadget = (spec: Record<string, unknown>) => ({
  apiVersion: 'example.io/v1',
  kind: 'Gadget',
  metadata: { name: 'g' },
  spec,
});

/** The message and causes of a 422, or the status when it is not one. */
async function refusal(method: string, path: string, body: unknown, contentType?: string) {
  const res = await http(server, method, path, body, contentType);
  if (res.status !== 422) return { status: res.status, text: res.text };
  const details = res.json.details as { causes: unknown[]; kind: string; group: string };
  expect(res.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422 });
  return { message: res.json.message, causes: details.causes, kind: details.kind, group: details.group };
}

test('a Pool whose size is no integer, or below 0, is 422 in kube-apiserver’s words, and is not stored', async () => {
  expect(await refusal('POST', POOLS, pool('p', { size: 'abc', preAllocateIP: false }))).toEqual({
    message:
      'Pool.galaxy.k8s.io "p" is invalid: size: Invalid value: "string": size in body must be of type integer: "string"',
    causes: [
      {
        reason: 'FieldValueTypeInvalid',
        field: 'size',
        message: 'Invalid value: "string": size in body must be of type integer: "string"',
      },
    ],
    kind: 'Pool',
    group: 'galaxy.k8s.io',
  });
  expect((await refusal('POST', POOLS, pool('p', { size: 1.5, preAllocateIP: false }))).message).toBe(
    'Pool.galaxy.k8s.io "p" is invalid: size: Invalid value: "number": size in body must be of type integer: "number"',
  );
  expect(await refusal('POST', POOLS, pool('p', { size: -1, preAllocateIP: false }))).toMatchObject({
    message:
      'Pool.galaxy.k8s.io "p" is invalid: size: Invalid value: -1: size in body should be greater than or equal to 0',
    causes: [{ reason: 'FieldValueInvalid', field: 'size' }],
  });
  expect(await refusal('POST', POOLS, pool('p', {}))).toMatchObject({
    message: 'Pool.galaxy.k8s.io "p" is invalid: [size: Required value, preAllocateIP: Required value]',
    causes: [
      { reason: 'FieldValueRequired', field: 'size', message: 'Required value' },
      { reason: 'FieldValueRequired', field: 'preAllocateIP', message: 'Required value' },
    ],
  });
  expect((await refusal('POST', POOLS, pool('p', { size: 1, preAllocateIP: null }))).message).toBe(
    'Pool.galaxy.k8s.io "p" is invalid: preAllocateIP: Invalid value: "null": preAllocateIP in body must be of type boolean: "null"',
  );
  expect((await http(server, 'GET', `${POOLS}/p`)).status).toBe(404);
  // a whole number written as a float is an integer to kube-apiserver's validator too
  const whole = await http(
    server,
    'POST',
    POOLS,
    '{"metadata":{"name":"p"},"size":2.0,"preAllocateIP":false}',
  );
  expect(whole.status).toBe(201);
  expect(whole.json.size).toBe(2);
});

test('a FloatingIP with an updateTime that is no date-time, an object attribute or a policy past 2 is 422', async () => {
  expect(await refusal('POST', FIPS, fip({ updateTime: 'yesterday' }))).toMatchObject({
    message:
      'FloatingIP.galaxy.k8s.io "10.0.0.1" is invalid: spec.updateTime: Invalid value: "yesterday": ' +
      'spec.updateTime in body must be of type date-time: "yesterday"',
    causes: [{ reason: 'FieldValueTypeInvalid', field: 'spec.updateTime' }],
  });
  expect((await refusal('POST', FIPS, fip({ attribute: { NodeName: 'n' } }))).message).toBe(
    'FloatingIP.galaxy.k8s.io "10.0.0.1" is invalid: spec.attribute: Invalid value: "object": ' +
      'spec.attribute in body must be of type string: "object"',
  );
  expect((await refusal('POST', FIPS, fip({ policy: 3 }))).message).toBe(
    'FloatingIP.galaxy.k8s.io "10.0.0.1" is invalid: spec.policy: Invalid value: 3: ' +
      'spec.policy in body should be less than or equal to 2',
  );
  // a number where a date-time is wanted is named by its Go type, as kube-openapi does
  expect((await refusal('POST', FIPS, fip({ updateTime: 5 }))).message).toBe(
    'FloatingIP.galaxy.k8s.io "10.0.0.1" is invalid: spec.updateTime: Invalid value: "int64": ' +
      'spec.updateTime in body must be of type date-time: "int64"',
  );
  expect((await refusal('POST', FIPS, { ...fip({}), spec: { key: 'k' } })).message).toBe(
    'FloatingIP.galaxy.k8s.io "10.0.0.1" is invalid: ' +
      '[spec.attribute: Required value, spec.policy: Required value, spec.updateTime: Required value]',
  );
  for (const updateTime of [
    '2020-01-01T00:00:00Z',
    '2020-01-01T00:00:00.123+08:00',
    '2024-02-29t23:59:59z',
  ]) {
    expect((await http(server, 'POST', FIPS, fip({ updateTime }))).status).toBe(201);
    await http(server, 'DELETE', `${FIPS}/10.0.0.1`);
  }
});

test('enum, nullable, int-or-string, number bounds, items, additionalProperties and date as kube-apiserver checks them', async () => {
  const refused = async (spec: Record<string, unknown>) =>
    (await refusal('POST', GADGETS, gadget(spec))).message;
  expect(await refused({ mode: 'medium' })).toBe(
    'Gadget.example.io "g" is invalid: spec.mode: Unsupported value: "medium": supported values: "fast", "slow"',
  );
  expect(await refused({ mode: null })).toBe(
    'Gadget.example.io "g" is invalid: [spec.mode: Invalid value: "null": spec.mode in body must be of type string: "null", ' +
      'spec.mode: Unsupported value: "null": supported values: "fast", "slow"]',
  );
  expect(await refused({ port: true })).toBe(
    'Gadget.example.io "g" is invalid: spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
  );
  expect(await refused({ ratio: 0.25 })).toBe(
    'Gadget.example.io "g" is invalid: spec.ratio: Invalid value: 0.25: spec.ratio in body should be greater than or equal to 0.5',
  );
  expect(await refused({ tags: ['a', 1] })).toBe(
    'Gadget.example.io "g" is invalid: spec.tags[1]: Invalid value: "integer": spec.tags[1] in body must be of type string: "integer"',
  );
  expect(await refused({ weights: { a: 1, b: 'x' } })).toBe(
    'Gadget.example.io "g" is invalid: spec.weights.b: Invalid value: "string": spec.weights.b in body must be of type integer: "string"',
  );
  expect(await refused({ day: '2023-02-29' })).toBe(
    'Gadget.example.io "g" is invalid: spec.day: Invalid value: "2023-02-29": spec.day in body must be of type date: "2023-02-29"',
  );
  expect(await refused({ count: 2500000.5 })).toBe(
    'Gadget.example.io "g" is invalid: [spec.count: Invalid value: "number": spec.count in body must be of type integer: "number", ' +
      'spec.count: Invalid value: 2.5000005e+06: spec.count in body should be less than or equal to 1e+06]',
  );
  const fine = {
    mode: 'fast',
    note: null,
    port: 'http',
    ratio: 1,
    tags: ['a'],
    weights: { a: 1 },
    free: { anything: [1, 'two', { three: null }] },
    day: '2024-02-29',
    count: 1000000,
  };
  expect((await http(server, 'POST', GADGETS, gadget(fine))).status).toBe(201);
});

test('updates, merge and JSON patches, the status subresource and dry runs are checked too', async () => {
  expect((await http(server, 'POST', POOLS, pool('p', { size: 1, preAllocateIP: false }))).status).toBe(201);
  const stored = (await http(server, 'GET', `${POOLS}/p`)).json;
  const sizeNotInteger =
    'Pool.galaxy.k8s.io "p" is invalid: size: Invalid value: "string": size in body must be of type integer: "string"';
  expect((await refusal('PUT', `${POOLS}/p`, { ...stored, size: 'x' })).message).toBe(sizeNotInteger);
  expect((await refusal('PATCH', `${POOLS}/p`, { size: 'x' }, 'application/merge-patch+json')).message).toBe(
    sizeNotInteger,
  );
  expect(
    (
      await refusal(
        'PATCH',
        `${POOLS}/p`,
        [{ op: 'replace', path: '/size', value: -1 }],
        'application/json-patch+json',
      )
    ).message,
  ).toBe(
    'Pool.galaxy.k8s.io "p" is invalid: size: Invalid value: -1: size in body should be greater than or equal to 0',
  );
  expect(
    (await refusal('POST', `${POOLS}?dryRun=All`, pool('q', { size: 'x', preAllocateIP: false }))).message,
  ).toBe(sizeNotInteger.replace('"p"', '"q"'));
  // server-side apply stays unsupported (415), whatever the body
  expect((await refusal('PATCH', `${POOLS}/p`, 'size: x', 'application/apply-patch+yaml')).status).toBe(415);
  expect((await http(server, 'GET', `${POOLS}/p`)).json.size).toBe(1);

  expect((await http(server, 'POST', GADGETS, gadget({}))).status).toBe(201);
  const g = (await http(server, 'GET', `${GADGETS}/g`)).json;
  expect((await refusal('PUT', `${GADGETS}/g/status`, { ...g, status: { phase: 'Gone' } })).message).toBe(
    'Gadget.example.io "g" is invalid: status.phase: Unsupported value: "Gone": supported values: "Ready"',
  );
  expect(
    (await refusal('PATCH', `${GADGETS}/g/status`, { status: { phase: 7 } }, 'application/merge-patch+json'))
      .message,
  ).toBe(
    'Gadget.example.io "g" is invalid: [status.phase: Invalid value: "integer": status.phase in body must be of type string: "integer", ' +
      'status.phase: Unsupported value: 7: supported values: "Ready"]',
  );
  expect(
    (await http(server, 'PUT', `${GADGETS}/g/status`, { ...g, status: { phase: 'Ready' } })).status,
  ).toBe(200);
  // the scale subresource writes the object, which is checked as any write
  const scale = (await http(server, 'GET', `${GADGETS}/g/scale`)).json;
  expect(
    (await refusal('PUT', `${GADGETS}/g/scale`, { ...scale, spec: { replicas: 2000000 } })).message,
  ).toBe(
    'Gadget.example.io "g" is invalid: spec.count: Invalid value: 2000000: spec.count in body should be less than or equal to 1000000',
  );
  expect((await http(server, 'PUT', `${GADGETS}/g/scale`, { ...scale, spec: { replicas: 3 } })).status).toBe(
    200,
  );
});

test('a CRD without a schema stores anything; once it has one, an update leaves alone what it does not change', async () => {
  await http(server, 'DELETE', `${CRDS}/pools.galaxy.k8s.io`);
  const schemaless = structuredClone(POOL_CRD) as { spec: { versions: Record<string, unknown>[] } };
  for (const v of schemaless.spec.versions) delete v.schema;
  expect((await http(server, 'POST', CRDS, schemaless)).status).toBe(201);
  for (const [name, fields] of [
    ['fraction', { size: 1.5, preAllocateIP: false }],
    ['negative', { size: -5 }],
    ['text', { size: 'four', preAllocateIP: 'no' }],
  ] as const)
    expect((await http(server, 'POST', POOLS, pool(name, fields))).status).toBe(201);

  const crd = (await http(server, 'GET', `${CRDS}/pools.galaxy.k8s.io`)).json;
  const withSchema = { ...crd, spec: (POOL_CRD as { spec: unknown }).spec };
  expect((await http(server, 'PUT', `${CRDS}/pools.galaxy.k8s.io`, withSchema)).status).toBe(200);
  // as kube-apiserver's ratcheting: an unchanged bad size does not stop a label from being set...
  const labelled = await http(
    server,
    'PATCH',
    `${POOLS}/fraction`,
    { metadata: { labels: { team: 'a' } } },
    'application/merge-patch+json',
  );
  expect(labelled.status).toBe(200);
  expect(labelled.json.size).toBe(1.5);
  // ...but a changed one is checked, and a missing required field is still missing
  expect(
    (await refusal('PATCH', `${POOLS}/negative`, { size: -6 }, 'application/merge-patch+json')).message,
  ).toBe(
    'Pool.galaxy.k8s.io "negative" is invalid: [size: Invalid value: -6: size in body should be greater than or equal to 0, ' +
      'preAllocateIP: Required value]',
  );
});
