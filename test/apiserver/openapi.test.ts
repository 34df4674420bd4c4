// OpenAPI v3 as kubectl reads it: a root naming one document per served group/version (its URL
// hashed by content), documents whose PATCH operations name the kind and take fieldValidation.
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { FLOATINGIP_CRD } from '../../src/apiserver/seed.js';
import { http, withServer } from './helpers.js';

let server: EmbeddedApiServer;
beforeEach(async () => {
  server = await withServer({ seed: 'none' });
});
afterEach(() => server.close());

type Doc = {
  paths: Record<
    string,
    Record<
      string,
      {
        'x-kubernetes-group-version-kind'?: object;
        parameters?: { name: string }[];
        requestBody?: { content: object };
      }
    >
  >;
  components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
};

test('the root lists every served group/version; a CRD adds its own, with a new hash', async () => {
  const root = (await http(server, 'GET', '/openapi/v3')).json as {
    paths: Record<string, { serverRelativeURL: string }>;
  };
  expect(Object.keys(root.paths)).toEqual(expect.arrayContaining(['api/v1', 'apis/apps/v1']));
  expect(root.paths['apis/galaxy.k8s.io/v1alpha1']).toBeUndefined();
  expect(root.paths['api/v1']!.serverRelativeURL).toMatch(/^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}$/);
  expect(
    (await http(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', FLOATINGIP_CRD))
      .status,
  ).toBe(201);
  const after = (await http(server, 'GET', '/openapi/v3')).json as typeof root;
  expect(after.paths['apis/galaxy.k8s.io/v1alpha1']!.serverRelativeURL).toMatch(/hash=[0-9A-F]{128}$/);
  expect(after.paths['api/v1']).toEqual(root.paths['api/v1']);
});

test('a document: PATCH per kind with fieldValidation, merge and JSON patch; the kind’s schema', async () => {
  const res = await http(server, 'GET', '/openapi/v3/api/v1');
  expect(res.status).toBe(200);
  const doc = res.json as unknown as Doc;
  const patch = doc.paths['/api/v1/namespaces/{namespace}/pods/{name}']!.patch!;
  expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: '', version: 'v1', kind: 'Pod' });
  expect(patch.parameters!.map((p) => p.name)).toContain('fieldValidation');
  expect(Object.keys(patch.requestBody!.content)).toEqual([
    'application/json-patch+json',
    'application/merge-patch+json',
  ]);
  const pod = doc.components.schemas['io.k8s.api.core.v1.Pod']!;
  expect(Object.keys(pod.properties!)).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
  expect(doc.components.schemas['io.k8s.api.core.v1.Container']!.properties!.image).toEqual({
    type: 'string',
  });
  expect(doc.paths['/api/v1/nodes/{name}']!.patch!['x-kubernetes-group-version-kind']).toEqual({
    group: '',
    version: 'v1',
    kind: 'Node',
  });
});

test('a custom resource’s schema is its CRD’s, with the standard metadata', async () => {
  await http(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', FLOATINGIP_CRD);
  const doc = (await http(server, 'GET', '/openapi/v3/apis/galaxy.k8s.io/v1alpha1')).json as unknown as Doc;
  const fip = doc.components.schemas['io.k8s.galaxy.v1alpha1.FloatingIP']!;
  expect(fip.properties!.spec).toMatchObject({ required: ['attribute', 'key', 'policy', 'updateTime'] });
  expect(fip.properties!.metadata).toEqual({
    $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
  });
  expect(
    Object.keys(doc.paths['/apis/galaxy.k8s.io/v1alpha1/floatingips/{name}']!.patch!.requestBody!.content),
  ).toEqual(['application/json-patch+json', 'application/merge-patch+json']);
});

test('an unknown group/version is 404; an Accept of protobuf only is 406', async () => {
  expect((await http(server, 'GET', '/openapi/v3/apis/nope.io/v1')).status).toBe(404);
  const res = await fetch(`${server.url}/openapi/v3`, {
    headers: { Accept: 'application/vnd.kubernetes.protobuf' },
  });
  expect(res.status).toBe(406);
  expect(((await res.json()) as { reason: string }).reason).toBe('NotAcceptable');
});
