// Optimistic concurrency and preconditions: the 409s floatip's store must handle.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { failure, http, withServer } from './helpers.js';

let server: EmbeddedApiServer;
let core: CoreV1Api;
let custom: CustomObjectsApi;
const FIP = { group: 'galaxy.k8s.io', version: 'v1alpha1', plural: 'floatingips' };

beforeAll(async () => {
  server = await withServer({ seed: 'demo' });
  core = server.kubeConfig().makeApiClient(CoreV1Api);
  custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
});
afterAll(() => server.close());

const fip = (name: string, key: string): Record<string, unknown> => ({
  apiVersion: 'galaxy.k8s.io/v1alpha1',
  kind: 'FloatingIP',
  metadata: { name },
  spec: { key, attribute: '{"NodeName":"","Uid":""}', policy: 0, updateTime: '2026-01-01T00:00:00Z' },
});

test('PUT with a stale resourceVersion is 409 Conflict; without one it is unconditional', async () => {
  const created = await core.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name: 'cc' }, data: { v: '1' } },
  });
  await core.replaceNamespacedConfigMap({
    name: 'cc',
    namespace: 'default',
    body: { ...created, data: { v: '2' } },
  });
  const stale = await failure(
    core.replaceNamespacedConfigMap({
      name: 'cc',
      namespace: 'default',
      body: { ...created, data: { v: '3' } },
    }),
  );
  expect(stale.code).toBe(409);
  expect(stale.status).toMatchObject({
    kind: 'Status',
    status: 'Failure',
    reason: 'Conflict',
    code: 409,
    details: { name: 'cc', kind: 'configmaps' },
  });
  expect(stale.status.message).toBe(
    'Operation cannot be fulfilled on configmaps "cc": the object has been modified; please apply your changes to the latest version and try again',
  );
  const unconditional = await core.replaceNamespacedConfigMap({
    name: 'cc',
    namespace: 'default',
    body: { metadata: { name: 'cc' }, data: { v: '4' } },
  });
  expect(unconditional.data).toEqual({ v: '4' });
});

test('custom objects: stale update is 409, and a resourceVersion inside a merge patch is a precondition', async () => {
  const created = (await custom.createClusterCustomObject({ ...FIP, body: fip('10.0.100.30', 'a') })) as {
    metadata: { resourceVersion: string };
  };
  await custom.replaceClusterCustomObject({
    ...FIP,
    name: '10.0.100.30',
    body: { ...fip('10.0.100.30', 'b'), metadata: created.metadata },
  });
  const stale = await failure(
    custom.replaceClusterCustomObject({
      ...FIP,
      name: '10.0.100.30',
      body: { ...fip('10.0.100.30', 'c'), metadata: created.metadata },
    }),
  );
  expect(stale.code).toBe(409);
  expect(stale.status.message).toContain('floatingips.galaxy.k8s.io "10.0.100.30"');
  const stalePatch = await failure(
    custom.patchClusterCustomObject(
      {
        ...FIP,
        name: '10.0.100.30',
        body: { metadata: { resourceVersion: created.metadata.resourceVersion }, spec: { key: 'd' } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    ),
  );
  expect(stalePatch.code).toBe(409);
});

test('creating a duplicate is 409 AlreadyExists', async () => {
  await custom.createClusterCustomObject({ ...FIP, body: fip('10.0.100.31', 'a') });
  const dup = await failure(custom.createClusterCustomObject({ ...FIP, body: fip('10.0.100.31', 'b') }));
  expect(dup.code).toBe(409);
  expect(dup.status).toMatchObject({
    reason: 'AlreadyExists',
    message: 'floatingips.galaxy.k8s.io "10.0.100.31" already exists',
    details: { name: '10.0.100.31', group: 'galaxy.k8s.io', kind: 'floatingips' },
  });
  const podDup = await failure(
    core.createNamespacedConfigMap({
      namespace: 'kube-system',
      body: { metadata: { name: 'floatingip-config' } },
    }),
  );
  expect(podDup.status.reason).toBe('AlreadyExists');
});

test('delete with a wrong uid or resourceVersion precondition is 409 and deletes nothing', async () => {
  const created = await core.createNamespacedPod({
    namespace: 'default',
    body: { metadata: { name: 'pre' }, spec: { containers: [{ name: 'c', image: 'i' }] } },
  });
  const wrongUid = await failure(
    core.deleteNamespacedPod({
      name: 'pre',
      namespace: 'default',
      body: { preconditions: { uid: 'not-the-uid' } },
    }),
  );
  expect(wrongUid.code).toBe(409);
  expect(wrongUid.status.reason).toBe('Conflict');
  expect(wrongUid.status.message).toContain('Precondition failed: UID in precondition: not-the-uid');
  const wrongRv = await failure(
    core.deleteNamespacedPod({
      name: 'pre',
      namespace: 'default',
      body: { preconditions: { resourceVersion: '1' } },
    }),
  );
  expect(wrongRv.code).toBe(409);
  expect((await core.readNamespacedPod({ name: 'pre', namespace: 'default' })).metadata?.uid).toBe(
    created.metadata?.uid,
  );
  const deleted = await core.deleteNamespacedPod({
    name: 'pre',
    namespace: 'default',
    body: {
      preconditions: { uid: created.metadata?.uid, resourceVersion: created.metadata?.resourceVersion },
    },
  });
  expect(deleted.metadata?.name).toBe('pre');
  expect((await failure(core.readNamespacedPod({ name: 'pre', namespace: 'default' }))).code).toBe(404);
});

test('finalizers hold a deleted object until they are removed', async () => {
  const cm = await core.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name: 'fin', finalizers: ['floatip.io/test'] } },
  });
  const res = await http(server, 'DELETE', '/api/v1/namespaces/default/configmaps/fin');
  expect(res.status).toBe(202);
  const pending = await core.readNamespacedConfigMap({ name: 'fin', namespace: 'default' });
  expect(pending.metadata?.deletionTimestamp).toBeInstanceOf(Date);
  expect(pending.metadata?.uid).toBe(cm.metadata?.uid);
  await core.patchNamespacedConfigMap(
    { name: 'fin', namespace: 'default', body: [{ op: 'remove', path: '/metadata/finalizers' }] },
    setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
  );
  expect((await failure(core.readNamespacedConfigMap({ name: 'fin', namespace: 'default' }))).code).toBe(404);
});
