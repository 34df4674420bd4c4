// Custom resources come and go with their CRDs: discovery, REST paths, scope, status and scale subresources.
import {
  ApiextensionsV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { failure, http, withServer } from './helpers.js';

let server: EmbeddedApiServer;
let ext: ApiextensionsV1Api;
let custom: CustomObjectsApi;

beforeEach(async () => {
  server = await withServer({ seed: 'none' });
  ext = server.kubeConfig().makeApiClient(ApiextensionsV1Api);
  custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
});
afterEach(() => server.close());

const widgets = (scope: 'Namespaced' | 'Cluster' = 'Namespaced'): V1CustomResourceDefinition => ({
  metadata: { name: 'widgets.example.io' },
  spec: {
    group: 'example.io',
    scope,
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
        subresources: {
          status: {},
          scale: {
            specReplicasPath: '.spec.size',
            statusReplicasPath: '.status.size',
            labelSelectorPath: '.status.selector',
          },
        },
        selectableFields: [{ jsonPath: '.spec.color' }],
      },
    ],
  },
});
const W = { group: 'example.io', version: 'v1', plural: 'widgets' };

test('creating a CRD serves its resource in discovery and at its REST path; deleting it removes both', async () => {
  expect((await http(server, 'GET', '/apis/example.io/v1')).status).toBe(404);
  const crd = await ext.createCustomResourceDefinition({ body: widgets() });
  expect(crd.status?.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
    'NamesAccepted=True',
    'Established=True',
  ]);
  expect(crd.status?.acceptedNames?.kind).toBe('Widget');

  const groups = await http(server, 'GET', '/apis');
  expect(groups.json.groups).toEqual(
    expect.arrayContaining([
      {
        name: 'example.io',
        versions: [{ groupVersion: 'example.io/v1', version: 'v1' }],
        preferredVersion: { groupVersion: 'example.io/v1', version: 'v1' },
      },
    ]),
  );
  const resources = await http(server, 'GET', '/apis/example.io/v1');
  expect(resources.json).toMatchObject({ kind: 'APIResourceList', groupVersion: 'example.io/v1' });
  expect((resources.json.resources as { name: string }[]).map((r) => r.name)).toEqual([
    'widgets',
    'widgets/status',
    'widgets/scale',
  ]);
  expect(resources.json.resources).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ name: 'widgets', namespaced: true, kind: 'Widget', shortNames: ['wd'] }),
    ]),
  );

  await custom.createNamespacedCustomObject({
    ...W,
    namespace: 'default',
    body: {
      apiVersion: 'example.io/v1',
      kind: 'Widget',
      metadata: { name: 'w1' },
      spec: { color: 'red', size: 1 },
    },
  });
  const list = (await custom.listNamespacedCustomObject({ ...W, namespace: 'default' })) as {
    kind: string;
    items: unknown[];
  };
  expect(list.kind).toBe('WidgetList');
  expect(list.items).toHaveLength(1);

  await ext.deleteCustomResourceDefinition({ name: 'widgets.example.io' });
  expect((await http(server, 'GET', '/apis/example.io/v1')).status).toBe(404);
  expect(
    ((await http(server, 'GET', '/apis')).json.groups as { name: string }[]).map((g) => g.name),
  ).not.toContain('example.io');
  expect((await failure(custom.listNamespacedCustomObject({ ...W, namespace: 'default' }))).code).toBe(404);
  // Re-creating the CRD starts empty: the objects went with it.
  await ext.createCustomResourceDefinition({ body: widgets() });
  expect(
    ((await custom.listNamespacedCustomObject({ ...W, namespace: 'default' })) as { items: unknown[] }).items,
  ).toEqual([]);
});

test('scope comes from the CRD: cluster-scoped resources have no namespace path', async () => {
  await ext.createCustomResourceDefinition({ body: widgets('Cluster') });
  await custom.createClusterCustomObject({
    ...W,
    body: { apiVersion: 'example.io/v1', kind: 'Widget', metadata: { name: 'c1', namespace: 'ignored' } },
  });
  const got = (await custom.getClusterCustomObject({ ...W, name: 'c1' })) as {
    metadata: { namespace?: string };
  };
  expect(got.metadata.namespace).toBeUndefined();
  expect((await http(server, 'GET', '/apis/example.io/v1/namespaces/default/widgets')).status).toBe(404);
});

test('status and scale subresources declared in the CRD work; selectableFields are honoured', async () => {
  await ext.createCustomResourceDefinition({ body: widgets() });
  await custom.createNamespacedCustomObject({
    ...W,
    namespace: 'default',
    body: {
      apiVersion: 'example.io/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { color: 'blue', size: 2 },
    },
  });
  const viaMain = (await custom.patchNamespacedCustomObject(
    { ...W, namespace: 'default', name: 'w', body: { status: { size: 9 } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  )) as { status?: unknown; metadata: { generation: number } };
  expect(viaMain.status).toBeUndefined();
  const viaStatus = (await custom.patchNamespacedCustomObjectStatus(
    { ...W, namespace: 'default', name: 'w', body: { status: { size: 2, selector: 'app=w' } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  )) as { status: unknown; metadata: { generation: number } };
  expect(viaStatus.status).toEqual({ size: 2, selector: 'app=w' });
  expect(viaStatus.metadata.generation).toBe(1);

  const scale = (await custom.getNamespacedCustomObjectScale({ ...W, namespace: 'default', name: 'w' })) as {
    spec: { replicas: number };
    status: { replicas: number; selector: string };
  };
  expect(scale.spec.replicas).toBe(2);
  expect(scale.status).toEqual({ replicas: 2, selector: 'app=w' });
  await custom.replaceNamespacedCustomObjectScale({
    ...W,
    namespace: 'default',
    name: 'w',
    body: {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'w', namespace: 'default' },
      spec: { replicas: 5 },
    },
  });
  const after = (await custom.getNamespacedCustomObject({ ...W, namespace: 'default', name: 'w' })) as {
    spec: { size: number };
    metadata: { generation: number };
  };
  expect(after.spec.size).toBe(5);
  expect(after.metadata.generation).toBe(2);

  const byColor = (await custom.listNamespacedCustomObject({
    ...W,
    namespace: 'default',
    fieldSelector: 'spec.color=blue',
  })) as { items: unknown[] };
  expect(byColor.items).toHaveLength(1);
  expect(
    (
      await failure(
        custom.listNamespacedCustomObject({ ...W, namespace: 'default', fieldSelector: 'spec.size=5' }),
      )
    ).code,
  ).toBe(400);
});

test('a CRD serving two versions serves one stored object at both', async () => {
  const twoVersions = widgets('Cluster');
  twoVersions.spec.versions = [
    { name: 'v1', served: true, storage: true },
    { name: 'v2beta1', served: true, storage: false },
  ];
  await ext.createCustomResourceDefinition({ body: twoVersions });
  expect(
    ((await http(server, 'GET', '/apis/example.io')).json.versions as { version: string }[]).map(
      (v) => v.version,
    ),
  ).toEqual(['v1', 'v2beta1']);
  await custom.createClusterCustomObject({
    ...W,
    body: { apiVersion: 'example.io/v1', kind: 'Widget', metadata: { name: 'both' } },
  });
  const atV2 = (await custom.getClusterCustomObject({ ...W, version: 'v2beta1', name: 'both' })) as {
    apiVersion: string;
  };
  expect(atV2.apiVersion).toBe('example.io/v2beta1');
  const listV2 = (await custom.listClusterCustomObject({ ...W, version: 'v2beta1' })) as {
    apiVersion: string;
    items: { apiVersion: string }[];
  };
  expect(listV2.apiVersion).toBe('example.io/v2beta1');
  expect(listV2.items.map((i) => i.apiVersion)).toEqual(['example.io/v2beta1']);
});

test('an invalid CRD is 422 and serves nothing', async () => {
  const bad = widgets();
  bad.metadata = { name: 'wrong.example.io' };
  const res = await failure(ext.createCustomResourceDefinition({ body: bad }));
  expect(res.code).toBe(422);
  expect(res.status.reason).toBe('Invalid');
  expect(res.status.message).toContain('spec.names.plural+"."+spec.group');
  const noScope = { ...widgets(), spec: { ...widgets().spec, scope: 'Galactic' } };
  expect((await failure(ext.createCustomResourceDefinition({ body: noScope }))).code).toBe(422);
  expect((await http(server, 'GET', '/apis/example.io/v1')).status).toBe(404);
});

test('an invalid object is named by its group-qualified kind, several causes in brackets, as NewInvalid words it', async () => {
  const nameless = {
    ...widgets(),
    spec: { ...widgets().spec, group: '', names: { kind: 'Widget' } },
  } as unknown as V1CustomResourceDefinition;
  const res = await failure(ext.createCustomResourceDefinition({ body: nameless }));
  expect(res.status.message).toBe(
    'CustomResourceDefinition.apiextensions.k8s.io "widgets.example.io" is invalid: ' +
      '[spec.group: Required value, spec.names.plural: Required value]',
  );
  expect(res.status.details).toMatchObject({
    kind: 'CustomResourceDefinition',
    group: 'apiextensions.k8s.io',
  });
  const bad = widgets();
  bad.metadata = { name: 'wrong.example.io' };
  expect((await failure(ext.createCustomResourceDefinition({ body: bad }))).status.message).toBe(
    'CustomResourceDefinition.apiextensions.k8s.io "wrong.example.io" is invalid: ' +
      'metadata.name: Invalid value: "wrong.example.io": must be spec.names.plural+"."+spec.group',
  );
});

test('the demo seed serves floatip’s FloatingIP (cluster) and Pool (namespaced) resources', async () => {
  const demo = await withServer({ seed: 'demo' });
  try {
    const res = await http(demo, 'GET', '/apis/galaxy.k8s.io/v1alpha1');
    expect(res.json.resources).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'floatingips',
          namespaced: false,
          kind: 'FloatingIP',
          shortNames: ['fip'],
        }),
        expect.objectContaining({ name: 'pools', namespaced: true, kind: 'Pool' }),
      ]),
    );
    const pool = await http(
      demo,
      'GET',
      '/apis/galaxy.k8s.io/v1alpha1/namespaces/kube-system/pools/demo-pool',
    );
    expect(pool.json).toMatchObject({ kind: 'Pool', size: 4, preAllocateIP: false });
  } finally {
    await demo.close();
  }
});
