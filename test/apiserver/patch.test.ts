// The three patch formats, as functions and over HTTP with client-node's content types.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { applyJsonPatch, mergePatch, strategicMerge } from '../../src/apiserver/patch.js';
import { failure, http, withServer } from './helpers.js';

describe('merge patch (RFC 7386)', () => {
  test('merges objects, null deletes, arrays and scalars replace', () => {
    expect(
      mergePatch({ a: { b: 1, c: 2 }, l: [1, 2], s: 'x' }, { a: { b: null, d: 3 }, l: [3], s: 'y' }),
    ).toEqual({
      a: { c: 2, d: 3 },
      l: [3],
      s: 'y',
    });
    const target = { a: { b: 1 } };
    mergePatch(target, { a: { b: 2 } });
    expect(target).toEqual({ a: { b: 1 } });
    // A "__proto__" key in a JSON body must not reach an object's prototype.
    const hostile = JSON.parse(
      '{"__proto__":{"polluted":true},"a":{"__proto__":{"polluted":true}}}',
    ) as unknown;
    const merged = mergePatch({ a: {} }, hostile) as { polluted?: unknown; a: { polluted?: unknown } };
    const strategic = strategicMerge({ a: {} }, hostile) as { polluted?: unknown; a: { polluted?: unknown } };
    for (const out of [merged, strategic]) {
      expect(out.polluted).toBeUndefined();
      expect(out.a.polluted).toBeUndefined();
    }
  });
});

describe('JSON patch (RFC 6902)', () => {
  test('the six operations', () => {
    const doc = { a: 1, b: { c: [1, 2] }, d: 'x' };
    expect(
      applyJsonPatch(doc, [
        { op: 'test', path: '/a', value: 1 },
        { op: 'add', path: '/b/c/-', value: 3 },
        { op: 'remove', path: '/d' },
        { op: 'replace', path: '/a', value: 2 },
        { op: 'copy', from: '/b/c', path: '/e' },
        { op: 'move', from: '/a', path: '/f' },
      ]),
    ).toEqual({ b: { c: [1, 2, 3] }, e: [1, 2, 3], f: 2 });
    expect(doc).toEqual({ a: 1, b: { c: [1, 2] }, d: 'x' });
  });

  test('a failed test is 422, a malformed patch 400', () => {
    expect(() => applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }])).toThrow(
      expect.objectContaining({ code: 422, reason: 'Invalid' }),
    );
    expect(() => applyJsonPatch({ a: 1 }, { op: 'add' })).toThrow(expect.objectContaining({ code: 400 }));
    expect(() => applyJsonPatch({ a: 1 }, [{ op: 'frobnicate', path: '/a' }])).toThrow(
      expect.objectContaining({ code: 400 }),
    );
  });
});

describe('strategic merge patch', () => {
  const podSpec = {
    containers: [
      { name: 'a', image: 'a:1', env: [{ name: 'X', value: '1' }] },
      { name: 'b', image: 'b:1' },
    ],
    tolerations: [{ key: 't1' }],
  };

  test('lists with a merge key merge by key; lists without one are replaced', () => {
    const out = strategicMerge(
      { spec: podSpec },
      {
        spec: {
          containers: [
            { name: 'a', env: [{ name: 'Y', value: '2' }] },
            { name: 'c', image: 'c:1' },
          ],
          tolerations: [{ key: 't2' }],
        },
      },
    );
    expect(out).toEqual({
      spec: {
        containers: [
          {
            name: 'a',
            image: 'a:1',
            env: [
              { name: 'X', value: '1' },
              { name: 'Y', value: '2' },
            ],
          },
          { name: 'b', image: 'b:1' },
          { name: 'c', image: 'c:1' },
        ],
        tolerations: [{ key: 't2' }],
      },
    });
  });

  test('$patch delete/replace, $setElementOrder, $deleteFromPrimitiveList, $retainKeys and finalizers', () => {
    expect(
      strategicMerge({ spec: podSpec }, { spec: { containers: [{ name: 'a', $patch: 'delete' }] } }),
    ).toEqual({
      spec: { containers: [{ name: 'b', image: 'b:1' }], tolerations: [{ key: 't1' }] },
    });
    expect(strategicMerge({ spec: podSpec }, { spec: { $patch: 'replace', hostNetwork: true } })).toEqual({
      spec: { hostNetwork: true },
    });
    expect(
      strategicMerge(
        { spec: podSpec },
        { spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }] } },
      ),
    ).toMatchObject({ spec: { containers: [{ name: 'b' }, { name: 'a' }] } });
    expect(
      strategicMerge(
        { metadata: { finalizers: ['a', 'b'] } },
        { metadata: { finalizers: ['c'], '$deleteFromPrimitiveList/finalizers': ['a'] } },
      ),
    ).toEqual({ metadata: { finalizers: ['b', 'c'] } });
    expect(strategicMerge({ s: { a: 1, b: 2 } }, { s: { $retainKeys: ['b', 'c'], c: 3 } })).toEqual({
      s: { b: 2, c: 3 },
    });
  });
});

describe('over HTTP', () => {
  let server: EmbeddedApiServer;
  let core: CoreV1Api;
  beforeAll(async () => {
    server = await withServer({ seed: 'demo' });
    core = server.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'p', labels: { a: '1' }, annotations: { keep: 'me' } },
        spec: { containers: [{ name: 'c', image: 'i:1' }] },
      },
    });
  });
  afterAll(() => server.close());

  test('client-node typed patch defaults to JSON patch', async () => {
    const out = await core.patchNamespacedPod({
      name: 'p',
      namespace: 'default',
      body: [{ op: 'add', path: '/metadata/labels/b', value: '2' }],
    });
    expect(out.metadata?.labels).toEqual({ a: '1', b: '2' });
  });

  test('merge patch of annotations and labels', async () => {
    const out = await core.patchNamespacedPod(
      {
        name: 'p',
        namespace: 'default',
        body: { metadata: { annotations: { ipinfos: '[]' }, labels: { a: null } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(out.metadata?.annotations).toEqual({ keep: 'me', ipinfos: '[]' });
    expect(out.metadata?.labels).toEqual({ b: '2' });
  });

  test('strategic merge patch of a built-in kind merges containers by name', async () => {
    const out = await core.patchNamespacedPod(
      { name: 'p', namespace: 'default', body: { spec: { containers: [{ name: 'c', image: 'i:2' }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    expect(out.spec?.containers).toEqual([{ name: 'c', image: 'i:2' }]);
  });

  test('a failed JSON patch test is 422; an unknown patch type is 415; server-side apply is 415', async () => {
    const testFailed = await failure(
      core.patchNamespacedPod({
        name: 'p',
        namespace: 'default',
        body: [{ op: 'test', path: '/metadata/name', value: 'q' }],
      }),
    );
    expect(testFailed.code).toBe(422);
    const res = await http(server, 'PATCH', '/api/v1/namespaces/default/pods/p', '{}', 'text/plain');
    expect(res.status).toBe(415);
    expect(res.json).toMatchObject({ kind: 'Status', reason: 'UnsupportedMediaType' });
    const apply = await http(
      server,
      'PATCH',
      '/api/v1/namespaces/default/pods/p',
      '{}',
      PatchStrategy.ServerSideApply,
    );
    expect(apply.status).toBe(415);
    const badJson = await http(
      server,
      'PATCH',
      '/api/v1/namespaces/default/pods/p',
      '{oops',
      PatchStrategy.MergePatch,
    );
    expect(badJson.status).toBe(400);
  });

  test('custom resources take JSON and merge patches, and refuse strategic merge (415)', async () => {
    const custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
    const fip = { group: 'galaxy.k8s.io', version: 'v1alpha1', plural: 'floatingips' };
    await custom.createClusterCustomObject({
      ...fip,
      body: {
        apiVersion: 'galaxy.k8s.io/v1alpha1',
        kind: 'FloatingIP',
        metadata: { name: '10.0.100.50' },
        spec: { key: 'a', policy: 0, attribute: '', updateTime: '2020-01-01T00:00:00Z' },
      },
    });
    const rest = { attribute: '', updateTime: '2020-01-01T00:00:00Z' };
    const jsonPatched = (await custom.patchClusterCustomObject({
      ...fip,
      name: '10.0.100.50',
      body: [{ op: 'replace', path: '/spec/policy', value: 2 }],
    })) as { spec: unknown };
    expect(jsonPatched.spec).toEqual({ key: 'a', policy: 2, ...rest });
    const merged = (await custom.patchClusterCustomObject(
      { ...fip, name: '10.0.100.50', body: { metadata: { labels: { reserved: '' } }, spec: { key: 'b' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as { spec: unknown; metadata: { labels: unknown } };
    expect(merged.spec).toEqual({ key: 'b', policy: 2, ...rest });
    expect(merged.metadata.labels).toEqual({ reserved: '' });
    const smp = await failure(
      custom.patchClusterCustomObject(
        { ...fip, name: '10.0.100.50', body: { spec: { key: 'c' } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      ),
    );
    expect(smp.code).toBe(415);
  });

  test('a patch may not rename the object or change its server-set fields; a UID in it is a precondition', async () => {
    const before = await core.readNamespacedPod({ name: 'p', namespace: 'default' });
    const rename = await failure(
      core.patchNamespacedPod(
        { name: 'p', namespace: 'default', body: { metadata: { name: 'q' } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    expect(rename.code).toBe(400);
    // as kube-apiserver's storage: another UID means the write was meant for another incarnation
    const forged = await failure(
      core.patchNamespacedPod(
        { name: 'p', namespace: 'default', body: { metadata: { uid: 'forged', labels: { a: 'b' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    expect(forged.code).toBe(409);
    expect(forged.status.message).toMatch(/Precondition failed: UID in precondition: forged/);
    const out = await core.patchNamespacedPod(
      {
        name: 'p',
        namespace: 'default',
        body: { metadata: { uid: before.metadata?.uid, creationTimestamp: '2000-01-01T00:00:00Z' } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(out.metadata?.uid).toBe(before.metadata?.uid);
    expect(out.metadata?.labels?.a).toBeUndefined();
    expect(out.metadata?.creationTimestamp).toEqual(before.metadata?.creationTimestamp);
  });
});
