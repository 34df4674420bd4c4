// Content negotiation, Table output and fieldValidation over HTTP, as client-go and kubectl use them;
// protobuf bodies as kubectl's typed commands send them.
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { http, withServer } from './helpers.js';

let server: EmbeddedApiServer;
beforeAll(async () => {
  server = await withServer({ seed: 'demo' });
});
afterAll(() => server.close());

const TABLE =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

async function get(path: string, accept: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(server.url + path, { headers: { Accept: accept } });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('Accept', () => {
  test('protobuf first, then JSON (client-go’s default): JSON', async () => {
    const res = await get('/api/v1/nodes', 'application/vnd.kubernetes.protobuf,application/json');
    expect(res.status).toBe(200);
    expect(res.json.kind).toBe('NodeList');
  });

  test('nothing this server has: 406 NotAcceptable', async () => {
    const res = await get('/api/v1/nodes', 'application/vnd.kubernetes.protobuf');
    expect(res).toMatchObject({ status: 406, json: { kind: 'Status', reason: 'NotAcceptable', code: 406 } });
  });

  test('Table for a list and for one object; includeObject', async () => {
    const list = await get('/api/v1/nodes', TABLE);
    expect(list.json).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
    const rows = list.json.rows as {
      cells: unknown[];
      object: { kind: string; metadata: { name: string } };
    }[];
    expect(rows.map((r) => r.cells.slice(0, 3))).toEqual([
      ['demo-node-1', 'Ready', '<none>'],
      ['demo-node-2', 'Ready', '<none>'],
      ['demo-node-3', 'Ready', '<none>'],
      ['demo-node-4', 'Ready', '<none>'],
    ]);
    expect(rows[0]!.object).toMatchObject({
      kind: 'PartialObjectMetadata',
      metadata: { name: 'demo-node-1' },
    });
    const one = await get(
      '/apis/galaxy.k8s.io/v1alpha1/namespaces/kube-system/pools/demo-pool?includeObject=Object',
      TABLE,
    );
    const row = (one.json.rows as { cells: unknown[]; object: { kind: string } }[])[0]!;
    expect(row.cells.slice(0, 3)).toEqual(['demo-pool', 4, false]);
    expect(row.object.kind).toBe('Pool');
    expect((await get('/api/v1/nodes?includeObject=All', TABLE)).status).toBe(400);
  });

  test('no Table for a write or a subresource', async () => {
    const res = await fetch(`${server.url}/api/v1/nodes/demo-node-1/status`, { headers: { Accept: TABLE } });
    expect(((await res.json()) as { kind: string }).kind).toBe('Node');
  });
});

describe('fieldValidation', () => {
  const cm = (name: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labelz: { a: 'b' } },
    data: { k: 'v' },
    ...extra,
  });

  test('Strict: 400 naming every unknown field in the order sent, nothing stored', async () => {
    const res = await http(
      server,
      'POST',
      '/api/v1/namespaces/default/configmaps?fieldValidation=Strict',
      cm('strict', { dataa: {} }),
    );
    expect(res.status).toBe(400);
    expect(res.json.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.labelz", unknown field "dataa"',
    );
    expect((await http(server, 'GET', '/api/v1/namespaces/default/configmaps/strict')).status).toBe(404);
  });

  test('Warn (the default): stored, with a Warning header per field; Ignore: no header', async () => {
    const warned = await fetch(`${server.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(cm('warned')),
    });
    expect(warned.status).toBe(201);
    expect(warned.headers.get('warning')).toBe('299 - "unknown field \\"metadata.labelz\\""');
    const ignored = await fetch(`${server.url}/api/v1/namespaces/default/configmaps?fieldValidation=Ignore`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(cm('ignored')),
    });
    expect(ignored.status).toBe(201);
    expect(ignored.headers.get('warning')).toBeNull();
    expect(
      (await http(server, 'POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Loud', cm('x')))
        .status,
    ).toBe(400);
  });

  test('custom resources against their CRD schema; strategic-merge directives are not fields', async () => {
    const fip = {
      apiVersion: 'galaxy.k8s.io/v1alpha1',
      kind: 'FloatingIP',
      metadata: { name: '10.0.100.20' },
      spec: { key: 'k', attribute: '', policy: 0, updateTime: '2026-01-01T00:00:00Z', subnet: 'x' },
    };
    const res = await http(
      server,
      'POST',
      '/apis/galaxy.k8s.io/v1alpha1/floatingips?fieldValidation=Strict',
      fip,
    );
    expect(res.json.message).toBe(
      'FloatingIP in version "v1alpha1" cannot be handled as a FloatingIP: strict decoding error: unknown field "spec.subnet"',
    );
    const patch = await http(
      server,
      'PATCH',
      '/api/v1/namespaces/kube-system/configmaps/floatingip-config?fieldValidation=Strict',
      { metadata: { $patch: 'merge' }, dataa: {} },
      'application/strategic-merge-patch+json',
    );
    expect(patch).toMatchObject({
      status: 400,
      json: { message: 'strict decoding error: unknown field "dataa"' },
    });
  });
});

describe('protobuf bodies', () => {
  // protobuf wire format: (field << 3 | 2), length, bytes
  const field = (n: number, bytes: Buffer): Buffer =>
    Buffer.concat([Buffer.from([(n << 3) | 2, bytes.length]), bytes]);
  const text = (n: number, s: string) => field(n, Buffer.from(s));
  const envelope = (apiVersion: string, kind: string, raw: Buffer) =>
    Buffer.concat([
      Buffer.from('k8s\0'),
      field(1, Buffer.concat([text(1, apiVersion), text(2, kind)])),
      field(2, raw),
      text(4, ''),
    ]);
  const post = (path: string, body: Buffer) =>
    fetch(server.url + path, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/vnd.kubernetes.protobuf',
        Accept: 'application/vnd.kubernetes.protobuf,application/json',
      },
      body,
    });

  test('a ConfigMap as kubectl create configmap sends it', async () => {
    const meta = Buffer.concat([
      text(1, 'from-proto'),
      field(11, Buffer.concat([text(1, 'app'), text(2, 'x')])),
      field(8, Buffer.alloc(0)),
    ]);
    const raw = Buffer.concat([
      field(1, meta),
      field(2, Buffer.concat([text(1, 'a'), text(2, 'b')])),
      field(3, Buffer.concat([text(1, 'bin'), text(2, 'hi')])),
    ]);
    const res = await post('/api/v1/namespaces/default/configmaps', envelope('v1', 'ConfigMap', raw));
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({
      kind: 'ConfigMap',
      metadata: { name: 'from-proto', namespace: 'default', labels: { app: 'x' } },
      data: { a: 'b' },
      binaryData: { bin: 'aGk=' },
    });
  });

  test('a kind it has no message for: 415; no envelope: 400', async () => {
    const res = await post('/api/v1/namespaces/default/pods', envelope('v1', 'Pod', field(1, text(1, 'p'))));
    expect(res.status).toBe(415);
    expect(((await res.json()) as { reason: string }).reason).toBe('UnsupportedMediaType');
    expect((await post('/api/v1/namespaces/default/configmaps', Buffer.from('{}'))).status).toBe(400);
  });
});
