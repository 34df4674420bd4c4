// Fault injection, in-process and over HTTP: the tool floatip's tests use to prove it survives 409s, 500s,
// slow answers and lost watches.
import {
  ADD,
  CoreV1Api,
  CustomObjectsApi,
  ERROR,
  makeInformer,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { failure, http, waitFor, withServer } from './helpers.js';

let server: EmbeddedApiServer;
let core: CoreV1Api;
let custom: CustomObjectsApi;
const FIP = { group: 'galaxy.k8s.io', version: 'v1alpha1', plural: 'floatingips' };
const fip = (name: string): Record<string, unknown> => ({
  apiVersion: 'galaxy.k8s.io/v1alpha1',
  kind: 'FloatingIP',
  metadata: { name },
  spec: { key: 'k', attribute: '', policy: 0, updateTime: '2026-01-01T00:00:00Z' },
});

beforeEach(async () => {
  server = await withServer({ seed: 'demo' });
  core = server.kubeConfig().makeApiClient(CoreV1Api);
  custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
});
afterEach(() => server.close());

test('an injected 409 on a named request is seen by the client, then the next request succeeds', async () => {
  await custom.createClusterCustomObject({ ...FIP, body: fip('10.0.100.60') });
  const current = (await custom.getClusterCustomObject({ ...FIP, name: '10.0.100.60' })) as Record<
    string,
    unknown
  >;
  server.faults.failNext({ verb: 'update', resource: 'floatingips', name: '10.0.100.60' }, 409);
  const conflict = await failure(
    custom.replaceClusterCustomObject({ ...FIP, name: '10.0.100.60', body: current }),
  );
  expect(conflict.code).toBe(409);
  expect(conflict.status).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Conflict', code: 409 });
  const retried = (await custom.replaceClusterCustomObject({
    ...FIP,
    name: '10.0.100.60',
    body: current,
  })) as {
    metadata: { name: string };
  };
  expect(retried.metadata.name).toBe('10.0.100.60');
  expect(server.faults.pending()).toEqual([]);
});

test('an injected 500 fails only the matching requests, the given number of times', async () => {
  const fault = server.faults.failNext(
    { verb: 'create', resource: 'pods/binding', name: 'p', namespace: 'default' },
    500,
    { times: 2 },
  );
  await core.createNamespacedPod({
    namespace: 'default',
    body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } },
  });
  const binding = {
    name: 'p',
    namespace: 'default',
    body: { metadata: { name: 'p' }, target: { name: 'demo-node-1' } },
  };
  for (let i = 0; i < 2; i++) {
    const res = await failure(core.createNamespacedPodBinding(binding));
    expect(res.code).toBe(500);
    expect(res.status.reason).toBe('InternalError');
  }
  await core.createNamespacedPodBinding(binding);
  expect((await core.readNamespacedPod({ name: 'p', namespace: 'default' })).spec?.nodeName).toBe(
    'demo-node-1',
  );
  expect(fault).toMatchObject({ remaining: 2, fired: 0 });
});

test('faults match on verb, resource, name and namespace', async () => {
  server.faults.failNext(
    { verb: 'get', resource: 'configmaps', name: 'floatingip-config', namespace: 'kube-system' },
    503,
  );
  // Not matching: another name, another verb.
  expect(
    (await failure(core.readNamespacedConfigMap({ name: 'other', namespace: 'kube-system' }))).code,
  ).toBe(404);
  await core.listNamespacedConfigMap({ namespace: 'kube-system' });
  expect(server.faults.pending()).toHaveLength(1);
  expect(
    (await failure(core.readNamespacedConfigMap({ name: 'floatingip-config', namespace: 'kube-system' })))
      .code,
  ).toBe(503);
  await core.readNamespacedConfigMap({ name: 'floatingip-config', namespace: 'kube-system' });
});

test('a delay is observable and the request then succeeds', async () => {
  server.faults.delayNext({ verb: 'list', resource: 'nodes' }, 1000);
  const started = Date.now();
  const nodes = await core.listNode();
  const delayed = Date.now() - started;
  expect(delayed).toBeGreaterThanOrEqual(990);
  expect(nodes.items).toHaveLength(4);
  // The fault is used up: the next list is not held (allowing a slow machine some slack).
  const again = Date.now();
  await core.listNode();
  expect(Date.now() - again).toBeLessThan(delayed - 600);
});

test('a held write is applied even when its caller stopped waiting, as a write stalled inside kube-apiserver can be', async () => {
  for (const name of ['10.0.100.61', '10.0.100.62', '10.0.100.63'])
    await custom.createClusterCustomObject({ ...FIP, body: fip(name) });
  const path = (name: string) => `/apis/galaxy.k8s.io/v1alpha1/floatingips/${name}`;
  const current = (await custom.getClusterCustomObject({ ...FIP, name: '10.0.100.63' })) as object;
  const writes: [string, string, string, string][] = [
    ['patch', 'PATCH', '10.0.100.61', JSON.stringify({ spec: { key: 'patched' } })],
    ['delete', 'DELETE', '10.0.100.62', '{}'],
    [
      'update',
      'PUT',
      '10.0.100.63',
      JSON.stringify({ ...current, spec: { ...(fip('x')['spec'] as object), key: 'replaced' } }),
    ],
  ];
  for (const [verb, method, name, body] of writes) {
    server.faults.delayNext({ verb: verb as 'patch', resource: 'floatingips', name }, 300);
    const contentType = verb === 'patch' ? 'application/merge-patch+json' : 'application/json';
    const gaveUp = await fetch(server.url + path(name), {
      method,
      headers: { 'Content-Type': contentType },
      body,
      signal: AbortSignal.timeout(50),
    }).then(
      () => 'answered',
      (e: Error) => e.name,
    );
    expect([verb, gaveUp]).toEqual([verb, 'TimeoutError']);
  }
  await new Promise((r) => setTimeout(r, 600));
  expect((await http(server, 'GET', path('10.0.100.61'))).json).toMatchObject({ spec: { key: 'patched' } });
  expect((await http(server, 'GET', path('10.0.100.62'))).status).toBe(404);
  expect((await http(server, 'GET', path('10.0.100.63'))).json).toMatchObject({ spec: { key: 'replaced' } });
});

test('the same controls over HTTP under /_floatip/', async () => {
  const injected = await http(server, 'POST', '/_floatip/faults', {
    verb: 'get',
    resource: 'nodes',
    name: 'demo-node-2',
    status: 409,
    message: 'try again',
  });
  expect(injected.status).toBe(201);
  expect(injected.json).toMatchObject({ id: expect.any(Number), remaining: 1, status: 409 });
  expect((await http(server, 'GET', '/_floatip/faults')).json.items).toHaveLength(1);
  const res = await failure(core.readNode({ name: 'demo-node-2' }));
  expect(res.status).toMatchObject({ code: 409, reason: 'Conflict', message: 'try again' });
  await http(server, 'POST', '/_floatip/faults', [
    { verb: 'list', status: 500 },
    { verb: 'watch', delayMs: 10 },
  ]);
  expect((await http(server, 'DELETE', '/_floatip/faults')).json).toEqual({ cleared: 2 });
  const bad = await http(server, 'POST', '/_floatip/faults', { verb: 'explode', status: 99, colour: 'red' });
  expect(bad.status).toBe(400);
  expect(bad.json).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
  expect(String(bad.json.message)).toContain('unknown field "colour"');
  expect((await http(server, 'POST', '/_floatip/drop-watches')).json).toEqual({ dropped: 0 });
  expect((await http(server, 'POST', '/_floatip/expire-history')).json).toEqual({
    compactedRevision: server.revision(),
  });
});

test('dropped watches make an informer re-watch, and it still sees later changes', async () => {
  const informer = makeInformer(
    server.kubeConfig(),
    '/apis/galaxy.k8s.io/v1alpha1/floatingips',
    async () => (await custom.listClusterCustomObject(FIP)) as never,
  );
  const added: string[] = [];
  const errors: unknown[] = [];
  let connects = 0;
  informer.on(ADD, (o: KubernetesObject) => added.push(o.metadata?.name ?? ''));
  informer.on(ERROR, (e) => errors.push(e));
  informer.on('connect', () => connects++);
  await informer.start();
  for (let round = 1; round <= 3; round++) {
    await waitFor('a watch to be open', () => server.faults.dropWatches() === 1);
    await custom.createClusterCustomObject({ ...FIP, body: fip(`10.0.100.${70 + round}`) });
    await waitFor(`the object of round ${round}`, () => added.length === round);
  }
  expect(added).toEqual(['10.0.100.71', '10.0.100.72', '10.0.100.73']);
  expect(connects).toBeGreaterThanOrEqual(4);
  expect(errors).toEqual([]);
  await informer.stop();
});
