// Discovery documents and the non-resource paths, as kubectl and client libraries read them.
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { http, withServer } from './helpers.js';

let server: EmbeddedApiServer;
beforeAll(async () => {
  server = await withServer({ seed: 'demo' });
});
afterAll(() => server.close());

test('/api, /api/v1 and /version', async () => {
  expect((await http(server, 'GET', '/api')).json).toEqual({
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [
      { clientCIDR: '0.0.0.0/0', serverAddress: server.url.replace('http://', '') },
    ],
  });
  const core = await http(server, 'GET', '/api/v1');
  const names = (core.json.resources as { name: string }[]).map((r) => r.name);
  expect(names).toEqual([
    'configmaps',
    'events',
    'namespaces',
    'namespaces/status',
    'nodes',
    'nodes/status',
    'pods',
    'pods/binding',
    'pods/status',
    'serviceaccounts',
    'services',
    'services/status',
  ]);
  expect(core.json.resources).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        name: 'pods',
        namespaced: true,
        kind: 'Pod',
        shortNames: ['po'],
        verbs: expect.arrayContaining(['watch', 'deletecollection']),
      }),
      { name: 'pods/binding', singularName: '', namespaced: true, kind: 'Binding', verbs: ['create'] },
    ]),
  );
  expect((await http(server, 'GET', '/version')).json).toMatchObject({ major: '1', minor: '32' });
});

test('/apis lists every group; a group and its versions are served; scale is autoscaling/v1', async () => {
  const groups = (await http(server, 'GET', '/apis')).json.groups as { name: string }[];
  expect(groups.map((g) => g.name)).toEqual([
    'apps',
    'coordination.k8s.io',
    'authentication.k8s.io',
    'authorization.k8s.io',
    'rbac.authorization.k8s.io',
    'policy',
    'apiextensions.k8s.io',
    'galaxy.k8s.io',
  ]);
  expect((await http(server, 'GET', '/apis/apps')).json).toMatchObject({
    kind: 'APIGroup',
    name: 'apps',
    preferredVersion: { version: 'v1' },
  });
  const apps = await http(server, 'GET', '/apis/apps/v1');
  expect(apps.json.resources).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        name: 'statefulsets/scale',
        group: 'autoscaling',
        version: 'v1',
        kind: 'Scale',
      }),
    ]),
  );
});

test('asking for aggregated discovery gets plain JSON, which makes clients fall back', async () => {
  const res = await fetch(`${server.url}/apis`, {
    headers: {
      Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
    },
  });
  expect(res.headers.get('content-type')).toBe('application/json');
  expect(((await res.json()) as { kind: string }).kind).toBe('APIGroupList');
});

test('unknown paths and resources are 404 Status; unsupported methods are 405', async () => {
  for (const path of [
    '/openapi/v2/x',
    '/openapi/v3/apis/nope/v1',
    '/apis/nope',
    '/apis/nope/v1',
    '/api/v2',
    '/api/v1/secrets',
    '/api/v1/namespaces/default/nodes',
  ]) {
    const res = await http(server, 'GET', path);
    expect({ path, status: res.status }).toEqual({ path, status: 404 });
    expect(res.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404 });
  }
  expect((await http(server, 'PUT', '/api/v1/namespaces/default/pods', {})).status).toBe(405);
  expect((await http(server, 'POST', '/api/v1/pods', {})).status).toBe(405);
  expect((await http(server, 'POST', '/api', {})).status).toBe(405);
  expect((await http(server, 'GET', '/api/v1/namespaces/default/configmaps/x/status')).status).toBe(404);
  expect(await fetch(`${server.url}/healthz`).then((r) => r.text())).toBe('ok');
});

test('a malformed body is a 400 Status, never a crash', async () => {
  const res = await http(server, 'POST', '/api/v1/namespaces/default/configmaps', '{"metadata":');
  expect(res.status).toBe(400);
  expect(res.json).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
  const notObject = await http(server, 'POST', '/api/v1/namespaces/default/configmaps', '[1,2]');
  expect(notObject.status).toBe(400);
  const yaml = await http(
    server,
    'POST',
    '/api/v1/namespaces/default/configmaps',
    'a: b',
    'application/yaml',
  );
  expect(yaml.status).toBe(415);
  const badLimit = await http(server, 'GET', '/api/v1/pods?limit=-1');
  expect(badLimit.status).toBe(400);
  expect((await http(server, 'GET', '/api/v1/pods?dryRun=Some')).status).toBe(200);
  expect(
    (
      await http(server, 'POST', '/api/v1/namespaces/default/configmaps?dryRun=Some', {
        metadata: { name: 'x' },
      })
    ).status,
  ).toBe(400);
});
