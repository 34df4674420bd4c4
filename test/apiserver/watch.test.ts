// Watches through client-node's Watch and informers: replay from a resourceVersion, 410 for history that is
// gone, bookmarks, timeouts, selector transitions, and recovery after the server drops every watch.
import {
  ADD,
  CoreV1Api,
  CustomObjectsApi,
  DELETE,
  ERROR,
  makeInformer,
  UPDATE,
  Watch,
  type KubernetesObject,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { http, waitFor, withServer } from './helpers.js';

interface Seen {
  type: string;
  name: string;
  rv: string;
  object: Record<string, unknown>;
}

/** Opens a watch and records its events until stopped; `done` records how the stream ended. */
async function record(
  server: EmbeddedApiServer,
  path: string,
  query: Record<string, string | number | boolean>,
): Promise<{ events: Seen[]; ended: () => boolean; endError: () => unknown; stop: () => void }> {
  const events: Seen[] = [];
  let ended = false;
  let endError: unknown;
  const controller = await new Watch(server.kubeConfig()).watch(
    path,
    query,
    (type, object: { metadata?: { name?: string; resourceVersion?: string } }) => {
      events.push({
        type,
        name: object.metadata?.name ?? '',
        rv: object.metadata?.resourceVersion ?? '',
        object,
      });
    },
    (err) => {
      ended = true;
      endError = err;
    },
  );
  return { events, ended: () => ended, endError: () => endError, stop: () => controller.abort() };
}

let server: EmbeddedApiServer;
let core: CoreV1Api;
const cm = (
  name: string,
  labels: Record<string, string> = {},
  data: Record<string, string> = {},
): V1ConfigMap => ({
  metadata: { name, labels },
  data,
});

beforeEach(async () => {
  server = await withServer({ seed: 'none', historySize: 50, bookmarkIntervalMs: 100 });
  core = server.kubeConfig().makeApiClient(CoreV1Api);
});
afterEach(() => server.close());

test('a watch from a resourceVersion replays the later events, then streams live ones', async () => {
  const first = await core.createNamespacedConfigMap({ namespace: 'default', body: cm('w1') });
  const from = first.metadata?.resourceVersion ?? '';
  await core.createNamespacedConfigMap({ namespace: 'default', body: cm('w2') });
  await core.patchNamespacedConfigMap({
    name: 'w1',
    namespace: 'default',
    body: [{ op: 'add', path: '/data', value: { a: 'b' } }],
  });
  await core.deleteNamespacedConfigMap({ name: 'w2', namespace: 'default' });
  const w = await record(server, '/api/v1/namespaces/default/configmaps', { resourceVersion: from });
  await waitFor('the replay', () => w.events.length === 3);
  expect(w.events.map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED w2', 'MODIFIED w1', 'DELETED w2']);
  const rvs = w.events.map((e) => Number(e.rv));
  expect(rvs).toEqual([...rvs].sort((a, b) => a - b));
  expect(rvs[0]).toBeGreaterThan(Number(from));
  await core.createNamespacedConfigMap({ namespace: 'default', body: cm('w3') });
  await core.createNamespacedConfigMap({ namespace: 'elsewhere', body: cm('w4') });
  await waitFor('the live event', () => w.events.length === 4);
  expect(w.events[3]).toMatchObject({ type: 'ADDED', name: 'w3' });
  // The DELETED event carries the deletion's own revision.
  expect(Number(w.events[2]?.rv)).toBeGreaterThan(Number(w.events[1]?.rv));
  w.stop();
});

test('a watch without a resourceVersion starts with the current objects as ADDED', async () => {
  server.createObjects([
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x1', namespace: 'default' } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x2', namespace: 'default' } },
  ]);
  const w = await record(server, '/api/v1/configmaps', {});
  await waitFor('the initial state', () => w.events.length === 2);
  expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'ADDED']);
  w.stop();
});

test('a watch from a version older than the retained history gets 410 Gone as an ERROR event', async () => {
  const first = await core.createNamespacedConfigMap({ namespace: 'default', body: cm('old') });
  for (let i = 0; i < 60; i++) {
    await core.replaceNamespacedConfigMap({
      name: 'old',
      namespace: 'default',
      body: cm('old', {}, { i: String(i) }),
    });
  }
  const w = await record(server, '/api/v1/namespaces/default/configmaps', {
    resourceVersion: first.metadata?.resourceVersion ?? '',
  });
  await waitFor('the stream to end', () => w.ended());
  expect(w.events).toHaveLength(1);
  expect(w.events[0]?.type).toBe('ERROR');
  expect(w.events[0]?.object).toMatchObject({
    kind: 'Status',
    status: 'Failure',
    code: 410,
    reason: 'Expired',
  });
  expect(String(w.events[0]?.object.message)).toMatch(/^too old resource version: \d+ \(\d+\)$/);
  // Versions still inside the window are fine.
  const recent = await record(server, '/api/v1/namespaces/default/configmaps', {
    resourceVersion: String(server.revision() - 10),
  });
  await waitFor('the recent replay', () => recent.events.length === 10);
  expect(recent.events.every((e) => e.type === 'MODIFIED')).toBe(true);
  recent.stop();
});

test('bookmarks carry the current revision; timeoutSeconds ends the stream cleanly', async () => {
  await core.createNamespacedConfigMap({ namespace: 'default', body: cm('b1') });
  const w = await record(server, '/api/v1/namespaces/default/configmaps', {
    resourceVersion: String(server.revision()),
    allowWatchBookmarks: true,
    timeoutSeconds: 1,
  });
  await waitFor('a bookmark', () => w.events.some((e) => e.type === 'BOOKMARK'));
  const bookmark = w.events.find((e) => e.type === 'BOOKMARK');
  expect(bookmark?.object).toEqual({
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { resourceVersion: String(server.revision()) },
  });
  await waitFor('the timeout', () => w.ended(), 3000);
  expect(w.endError()).toBeNull();
});

test('sendInitialEvents ends the initial state with an annotated bookmark', async () => {
  server.createObjects([
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'i1', namespace: 'default' } },
  ]);
  const w = await record(server, '/api/v1/configmaps', {
    sendInitialEvents: true,
    resourceVersionMatch: 'NotOlderThan',
    allowWatchBookmarks: true,
  });
  await waitFor('the end-of-initial-events bookmark', () => w.events.length >= 2);
  expect(w.events[0]).toMatchObject({ type: 'ADDED', name: 'i1' });
  expect(w.events[1]?.object).toMatchObject({
    metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } },
  });
  w.stop();
});

test('with a selector, objects entering and leaving the selection are ADDED and DELETED', async () => {
  const w = await record(server, '/api/v1/namespaces/default/configmaps', {
    resourceVersion: String(server.revision()),
    labelSelector: 'floatip=yes',
  });
  await core.createNamespacedConfigMap({ namespace: 'default', body: cm('s1', { floatip: 'no' }) });
  await core.replaceNamespacedConfigMap({
    name: 's1',
    namespace: 'default',
    body: cm('s1', { floatip: 'yes' }),
  });
  await core.replaceNamespacedConfigMap({
    name: 's1',
    namespace: 'default',
    body: cm('s1', { floatip: 'yes' }, { a: '1' }),
  });
  await core.replaceNamespacedConfigMap({
    name: 's1',
    namespace: 'default',
    body: cm('s1', { floatip: 'no' }),
  });
  await core.deleteNamespacedConfigMap({ name: 's1', namespace: 'default' });
  await waitFor('three events', () => w.events.length === 3);
  await new Promise((r) => setTimeout(r, 50));
  expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
  w.stop();
});

test('the legacy /watch/ path watches one named object', async () => {
  const w = await record(server, '/api/v1/watch/namespaces/default/configmaps/one', {
    resourceVersion: String(server.revision()),
  });
  await core.createNamespacedConfigMap({ namespace: 'default', body: cm('two') });
  await core.createNamespacedConfigMap({ namespace: 'default', body: cm('one') });
  await waitFor('the named object', () => w.events.length === 1);
  expect(w.events[0]).toMatchObject({ type: 'ADDED', name: 'one' });
  w.stop();
});

test('an invalid resourceVersion or selector is a 400 before the stream opens', async () => {
  expect((await http(server, 'GET', '/api/v1/pods?watch=1&resourceVersion=abc')).status).toBe(400);
  expect((await http(server, 'GET', '/api/v1/pods?watch=true&labelSelector=a%20in%20b')).status).toBe(400);
});

describe('informers', () => {
  const events = (): {
    log: string[];
    onAdd: (o: KubernetesObject) => void;
    onUpdate: (o: KubernetesObject) => void;
    onDelete: (o: KubernetesObject) => void;
  } => {
    const log: string[] = [];
    return {
      log,
      onAdd: (o) => log.push(`add ${o.metadata?.name}`),
      onUpdate: (o) => log.push(`update ${o.metadata?.name}`),
      onDelete: (o) => log.push(`delete ${o.metadata?.name}`),
    };
  };

  test('an informer lists, then sees add/update/delete, and recovers after the server drops its watch', async () => {
    server.createObjects([
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pre', namespace: 'default' } },
    ]);
    const informer = makeInformer(server.kubeConfig(), '/api/v1/namespaces/default/configmaps', () =>
      core.listNamespacedConfigMap({ namespace: 'default' }),
    );
    const e = events();
    const errors: unknown[] = [];
    informer.on(ADD, e.onAdd);
    informer.on(UPDATE, e.onUpdate);
    informer.on(DELETE, e.onDelete);
    informer.on(ERROR, (err) => errors.push(err));
    await informer.start();
    expect(e.log).toEqual(['add pre']);
    await core.createNamespacedConfigMap({ namespace: 'default', body: cm('live') });
    await core.replaceNamespacedConfigMap({
      name: 'live',
      namespace: 'default',
      body: cm('live', {}, { a: '1' }),
    });
    await core.deleteNamespacedConfigMap({ name: 'pre', namespace: 'default' });
    await waitFor('add/update/delete', () => e.log.length === 4);
    expect(e.log).toEqual(['add pre', 'add live', 'update live', 'delete pre']);

    expect(server.faults.dropWatches()).toBe(1);
    // Changes made while the watch is down are replayed when the informer re-watches from its version.
    await core.createNamespacedConfigMap({ namespace: 'default', body: cm('after-drop') });
    await waitFor('the change after the drop', () => e.log.includes('add after-drop'));
    await core.deleteNamespacedConfigMap({ name: 'live', namespace: 'default' });
    await waitFor('a later delete', () => e.log.includes('delete live'));
    expect(informer.list().map((o) => o.metadata?.name)).toEqual(['after-drop']);
    expect(errors).toEqual([]);
    await informer.stop();
  });

  test('an informer whose version has expired re-lists (410) and converges', async () => {
    const custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
    server.createObjects([
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'things.example.io' },
        spec: {
          group: 'example.io',
          scope: 'Cluster',
          names: { plural: 'things', kind: 'Thing' },
          versions: [{ name: 'v1', served: true, storage: true }],
        },
      },
    ]);
    const path = '/apis/example.io/v1/things';
    const informer = makeInformer(
      server.kubeConfig(),
      path,
      async () =>
        (await custom.listClusterCustomObject({
          group: 'example.io',
          version: 'v1',
          plural: 'things',
        })) as never,
    );
    const e = events();
    informer.on(ADD, e.onAdd);
    informer.on(DELETE, e.onDelete);
    await informer.start();
    await custom.createClusterCustomObject({
      group: 'example.io',
      version: 'v1',
      plural: 'things',
      body: { apiVersion: 'example.io/v1', kind: 'Thing', metadata: { name: 't1' } },
    });
    await waitFor('t1', () => e.log.includes('add t1'));
    await informer.stop();
    // While the informer is away, changes happen and the history is compacted past its version.
    await custom.deleteClusterCustomObject({
      group: 'example.io',
      version: 'v1',
      plural: 'things',
      name: 't1',
    });
    await custom.createClusterCustomObject({
      group: 'example.io',
      version: 'v1',
      plural: 'things',
      body: { apiVersion: 'example.io/v1', kind: 'Thing', metadata: { name: 't2' } },
    });
    server.faults.expireHistory();
    await informer.start();
    await waitFor('the re-list', () => e.log.includes('add t2') && e.log.includes('delete t1'));
    expect(informer.list().map((o) => o.metadata?.name)).toEqual(['t2']);
    await informer.stop();
  });
});

test('a watch asked for Tables (kubectl get -w) sends one-row Tables, the columns with the first event only', async () => {
  const cm = (name: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    data: { a: '1' },
  });
  await http(server, 'POST', '/api/v1/namespaces/table-watch/configmaps', cm('first'));
  const res = await fetch(`${server.url}/api/v1/namespaces/table-watch/configmaps?watch=1&timeoutSeconds=1`, {
    headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
  });
  await http(server, 'POST', '/api/v1/namespaces/table-watch/configmaps', cm('second'));
  const events = (await res.text())
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; object: Record<string, unknown> })
    .filter((e) => e.type !== 'BOOKMARK');
  expect(
    events.map((e) => [e.type, e.object.kind, (e.object.rows as { cells: unknown[] }[])[0]!.cells[0]]),
  ).toEqual([
    ['ADDED', 'Table', 'first'],
    ['ADDED', 'Table', 'second'],
  ]);
  expect((events[0]!.object.columnDefinitions as { name: string }[]).map((c) => c.name)).toEqual([
    'Name',
    'Data',
    'Age',
  ]);
  expect(events[1]!.object.columnDefinitions).toBeNull();
});
