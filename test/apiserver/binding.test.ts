// pods/binding, the way floatip's bind verb uses it: node name set, annotations copied, 409s as on kube-apiserver.
import { CoreV1Api } from '@kubernetes/client-node';
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { failure, http, withServer } from './helpers.js';

let server: EmbeddedApiServer;
let core: CoreV1Api;

beforeAll(async () => {
  server = await withServer({ seed: 'demo' });
  core = server.kubeConfig().makeApiClient(CoreV1Api);
});
afterAll(() => server.close());

const createPod = (name: string): ReturnType<CoreV1Api['createNamespacedPod']> =>
  core.createNamespacedPod({
    namespace: 'default',
    body: {
      metadata: { name, annotations: { existing: 'x' } },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    },
  });

test('binding sets spec.nodeName, copies the annotations and marks the pod scheduled', async () => {
  const pod = await createPod('bind-1');
  const ipinfos = '[{"ip":"10.0.100.10/24","vlan":0,"gateway":"10.0.100.1"}]';
  await core.createNamespacedPodBinding({
    name: 'bind-1',
    namespace: 'default',
    body: {
      metadata: {
        name: 'bind-1',
        uid: pod.metadata?.uid,
        annotations: { 'k8s.v1.cni.galaxy.io/args': `{"common":{"ipinfos":${ipinfos}}}` },
      },
      target: { kind: 'Node', name: 'demo-node-1' },
    },
  });
  const bound = await core.readNamespacedPod({ name: 'bind-1', namespace: 'default' });
  expect(bound.spec?.nodeName).toBe('demo-node-1');
  expect(bound.metadata?.annotations).toEqual({
    existing: 'x',
    'k8s.v1.cni.galaxy.io/args': `{"common":{"ipinfos":${ipinfos}}}`,
  });
  expect(bound.status?.conditions?.find((c) => c.type === 'PodScheduled')?.status).toBe('True');
  expect(Number(bound.metadata?.resourceVersion)).toBeGreaterThan(Number(pod.metadata?.resourceVersion));
});

test('the response is a Success Status with code 201', async () => {
  await createPod('bind-raw');
  const res = await http(server, 'POST', '/api/v1/namespaces/default/pods/bind-raw/binding', {
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { name: 'bind-raw' },
    target: { name: 'demo-node-2' },
  });
  expect(res.status).toBe(201);
  expect(res.json).toMatchObject({ kind: 'Status', status: 'Success', code: 201 });
});

test('binding a bound pod is 409; a wrong uid precondition is 409; a missing pod is 404', async () => {
  await createPod('bind-2');
  const body = (
    name: string,
    uid?: string,
  ): { metadata: { name: string; uid?: string }; target: { name: string } } => ({
    metadata: { name, ...(uid ? { uid } : {}) },
    target: { name: 'demo-node-3' },
  });
  const wrongUid = await failure(
    core.createNamespacedPodBinding({
      name: 'bind-2',
      namespace: 'default',
      body: body('bind-2', 'stale-uid'),
    }),
  );
  expect(wrongUid.code).toBe(409);
  expect(wrongUid.status.message).toContain('Precondition failed: UID in precondition: stale-uid');
  expect(
    (await core.readNamespacedPod({ name: 'bind-2', namespace: 'default' })).spec?.nodeName,
  ).toBeUndefined();
  await core.createNamespacedPodBinding({ name: 'bind-2', namespace: 'default', body: body('bind-2') });
  const again = await failure(
    core.createNamespacedPodBinding({ name: 'bind-2', namespace: 'default', body: body('bind-2') }),
  );
  expect(again.code).toBe(409);
  // kube-apiserver's words: a conflict on pods/binding, not on the pod (a UID precondition is that)
  expect(again.status).toMatchObject({
    reason: 'Conflict',
    message:
      'Operation cannot be fulfilled on pods/binding "bind-2": pod bind-2 is already assigned to node "demo-node-3"',
    details: { name: 'bind-2', kind: 'pods/binding' },
  });
  expect(
    (
      await failure(
        core.createNamespacedPodBinding({ name: 'ghost', namespace: 'default', body: body('ghost') }),
      )
    ).code,
  ).toBe(404);
});

test('a Binding without a target, or for another name, is refused', async () => {
  await createPod('bind-3');
  const noTarget = await http(server, 'POST', '/api/v1/namespaces/default/pods/bind-3/binding', {
    metadata: { name: 'bind-3' },
    target: {},
  });
  expect(noTarget.status).toBe(422);
  const otherName = await http(server, 'POST', '/api/v1/namespaces/default/pods/bind-3/binding', {
    metadata: { name: 'other' },
    target: { name: 'demo-node-1' },
  });
  expect(otherName.status).toBe(400);
  const notANode = await http(server, 'POST', '/api/v1/namespaces/default/pods/bind-3/binding', {
    metadata: { name: 'bind-3' },
    target: { kind: 'Pod', name: 'x' },
  });
  expect(notANode.status).toBe(422);
});

test('a pod being deleted (held by a finalizer) is refused as kube-apiserver refuses it: on pods/binding', async () => {
  await core.createNamespacedPod({
    namespace: 'default',
    body: {
      metadata: { name: 'bind-dying', finalizers: ['example.com/hold'] },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    },
  });
  await core.deleteNamespacedPod({ name: 'bind-dying', namespace: 'default' });
  const refused = await failure(
    core.createNamespacedPodBinding({
      name: 'bind-dying',
      namespace: 'default',
      body: { metadata: { name: 'bind-dying' }, target: { kind: 'Node', name: 'demo-node-1' } },
    }),
  );
  expect(refused.code).toBe(409);
  expect(refused.status).toMatchObject({
    reason: 'Conflict',
    message:
      'Operation cannot be fulfilled on pods/binding "bind-dying": pod bind-dying is being deleted, cannot be assigned to a host',
    details: { name: 'bind-dying', kind: 'pods/binding' },
  });
});
