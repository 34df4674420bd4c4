// Every typed client-node call floatip makes (apiClient) sends a 429 again after its Retry-After, as
// client-go does for galaxy: against a plain HTTP server standing in for a busy kube-apiserver, what
// is sent again (the same request, credentials included), when the 429 stays the answer (no whole
// seconds, the call's deadline first, client-go's ten sends), and what is never sent again (a 5xx).
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { withinMs } from '../../src/kube/call-signal.js';
import { kubeError } from '../../src/kube/api-error.js';
import { apiClient, MAX_SENDS, retryAfterMs } from '../../src/kube/resend.js';
import { type Reply, type Seen, stubApiServer, tooManyRequests } from './stub-api-server.js';

const POD = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p1', namespace: 'ns1' } });

const apiServer = (answer: (seen: Seen, n: number) => Reply) => stubApiServer(answer);

const readPod = (kc: KubeConfig, timeoutMs?: number) =>
  apiClient(kc, CoreV1Api)
    .readNamespacedPod({ namespace: 'ns1', name: 'p1' }, withinMs(timeoutMs))
    .catch((e: unknown) => kubeError(e, 'get pod ns1/p1'));

test('a read turned away with 429 and a Retry-After is sent again after that wait, as client-go does, and answers', async () => {
  const api = await apiServer((_, n) => (n <= 2 ? tooManyRequests('1') : [200, POD]));
  try {
    const started = Date.now();
    const pod = await readPod(api.kc);
    expect(pod).toMatchObject({ metadata: { name: 'p1', namespace: 'ns1' } });
    // the server's wait, twice: not sooner
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(api.seen.map((s) => [s.method, s.url, s.headers.authorization])).toEqual(
      Array(3).fill(['GET', '/api/v1/namespaces/ns1/pods/p1', 'Bearer secret-token']),
    );
  } finally {
    api.close();
  }
});

test('a write is sent again as it was: the same method, path, body and content type', async () => {
  const api = await apiServer((_, n) => (n === 1 ? tooManyRequests('0') : [200, '{}']));
  try {
    await apiClient(api.kc, CustomObjectsApi).patchClusterCustomObject(
      {
        group: 'galaxy.k8s.io',
        version: 'v1alpha1',
        plural: 'floatingips',
        name: '10.0.0.1',
        body: { spec: { key: 'k' } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(api.seen).toHaveLength(2);
    const [first, second] = api.seen.map((s) => [s.method, s.url, s.body, s.headers['content-type']]);
    expect(second).toEqual(first);
    expect(first).toEqual([
      'PATCH',
      '/apis/galaxy.k8s.io/v1alpha1/floatingips/10.0.0.1',
      '{"spec":{"key":"k"}}',
      'application/merge-patch+json',
    ]);
  } finally {
    api.close();
  }
});

test('a 429 stays the answer without whole seconds to wait, when the call’s deadline comes first, and after client-go’s ten sends', async () => {
  const cases: { retryAfter?: string; timeoutMs?: number; sends: number }[] = [
    { sends: 1 },
    { retryAfter: '1.5', sends: 1 },
    { retryAfter: 'Wed, 21 Oct 2015 07:28:00 GMT', sends: 1 },
    { retryAfter: '1', timeoutMs: 600, sends: 1 },
    { retryAfter: '0', sends: MAX_SENDS },
  ];
  for (const c of cases) {
    const api = await apiServer(() => tooManyRequests(c.retryAfter));
    try {
      const started = Date.now();
      const refused = await readPod(api.kc, c.timeoutMs);
      expect({ ...c, status: (refused as { status?: number }).status, sent: api.seen.length }).toEqual({
        ...c,
        status: 429,
        sent: c.sends,
      });
      expect((refused as Error).message).toBe('get pod ns1/p1: Too many requests, please try again later.');
      // the deadline ended the wait, and the 429 was the answer then, not a timeout
      if (c.timeoutMs) expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      api.close();
    }
  }
});

test('a 5xx with a Retry-After is not sent again (it may have been applied)', async () => {
  const api = await apiServer(() => [
    500,
    '{"kind":"Status","reason":"ServerTimeout","message":"timed out","code":500}',
    { 'Retry-After': '0' },
  ]);
  try {
    const ref = { group: 'galaxy.k8s.io', version: 'v1alpha1', plural: 'floatingips', name: '10.0.0.1' };
    const failed = await apiClient(api.kc, CustomObjectsApi)
      .getClusterCustomObject(ref)
      .catch((e: unknown) => kubeError(e, 'get 10.0.0.1'));
    expect(failed).toMatchObject({ status: 500, message: 'get 10.0.0.1: timed out' });
    expect(api.seen).toHaveLength(1);
  } finally {
    api.close();
  }
});

test('Retry-After is read as client-go reads it: whole seconds, a sign allowed, nothing else', () => {
  expect(
    ['1', '0', '+2', '-1', '007', ' 1', '1.5', '1s', '', 'Wed, 21 Oct 2015 07:28:00 GMT', '9999999999'].map(
      (h) => retryAfterMs(h),
    ),
  ).toEqual([1_000, 0, 2_000, 0, 7_000, undefined, undefined, undefined, undefined, undefined, undefined]);
  expect(retryAfterMs(undefined)).toBeUndefined();
});
