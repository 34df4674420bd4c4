// --api-auth=kubernetes: the REST API asks the API server who a caller is and what they may do.
import { CoreV1Api } from '@kubernetes/client-node';
import { type EmbeddedApiServer, startApiServer } from '../../src/apiserver/index.js';
import { GALAXY_DEFAULTS } from '../../src/config/galaxy-config.js';
import { DEFAULT_RESOURCE } from '../../src/pods/pod-facts.js';
import { silentLogger } from '../../src/log.js';
import { type Floatip, startFloatip } from '../../src/server.js';

let server: EmbeddedApiServer;
let floatip: Floatip;

beforeAll(async () => {
  server = await startApiServer({
    port: 0,
    seed: 'none',
    log: () => undefined,
    auth: {
      tokens: {
        't-viewer': { username: 'viewer' },
        't-ops': { username: 'ops' },
        't-nobody': { username: 'nobody' },
      },
      grants: {
        viewer: ['list galaxy.k8s.io/floatingips', 'get galaxy.k8s.io/pools'],
        ops: [
          'list galaxy.k8s.io/floatingips',
          'delete galaxy.k8s.io/floatingips',
          'update galaxy.k8s.io/pools',
        ],
      },
    },
  });
  const core = server.kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: 'kube-system' } } });
  await core.createNamespacedConfigMap({
    namespace: 'kube-system',
    body: {
      metadata: { name: 'floatingip-config' },
      data: {
        floatingips:
          '[{"nodeSubnets":["10.0.1.0/24"],"ips":["10.0.100.10~10.0.100.20"],"subnet":"10.0.100.0/24","gateway":"10.0.100.1"}]',
      },
    },
  });
  floatip = await startFloatip({
    kubeConfig: server.kubeConfig(),
    galaxy: GALAXY_DEFAULTS,
    resource: DEFAULT_RESOURCE,
    poolNamespace: 'kube-system',
    bind: '127.0.0.1',
    port: 0,
    apiPort: 0,
    apiAuth: 'kubernetes',
    log: silentLogger(),
    resyncIntervalMs: 0,
  });
});

afterAll(async () => {
  await floatip.close();
  await server.close();
});

const call = async (method: string, path: string, token?: string, body?: unknown) => {
  const res = await fetch(`${floatip.apiUrl}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as { code: number; message: string } };
};

test('E8-7 no token: 401', async () => {
  expect(await call('GET', '/v1/ip')).toEqual({
    status: 401,
    body: { code: 401, message: 'unauthorized: send a bearer token (Authorization: Bearer <token>)' },
  });
  expect((await call('GET', '/v1/ip', 'forged')).status).toBe(401);
});

test('E8-7b an unauthenticated caller is refused before its body is read or validated', async () => {
  // a body that is not JSON, and one over the limit: 401 either way, not 400 or 413
  for (const body of ['{not json', JSON.stringify({ ips: Array(200_000).fill({ ip: '10.0.100.10' }) })]) {
    const res = await fetch(`${floatip.apiUrl}/v1/ip`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
    });
    expect(res.status).toBe(401);
  }
});

test('E8-8 a token without the permission: 403 naming it', async () => {
  expect(await call('GET', '/v1/ip', 't-nobody')).toEqual({
    status: 403,
    body: { code: 403, message: 'forbidden: nobody may not list floatingips.galaxy.k8s.io' },
  });
  expect(
    (
      await call('POST', '/v1/ip', 't-viewer', {
        ips: [{ ip: '10.0.100.10', podName: 'x', namespace: 'ns1' }],
      })
    ).status,
  ).toBe(403);
  expect((await call('POST', '/v1/pool', 't-viewer', { name: 'p1', size: 1 })).status).toBe(403);
});

test('E8-9 with the permission: it works', async () => {
  expect((await call('GET', '/v1/ip', 't-viewer')).status).toBe(200);
  expect((await call('POST', '/v1/pool', 't-ops', { name: 'p1', size: 1 })).status).toBe(200);
  // the OpenAPI document and Swagger UI stay public
  expect((await fetch(`${floatip.apiUrl}/openapi.json`)).status).toBe(200);
});

test('E8-10 answers are cached briefly, and the cache is bounded: random tokens evict, they do not pile up', async () => {
  // a fault that never fails counts the TokenReviews the API server receives
  const counter = server.faults.delayNext({ verb: 'create', resource: 'tokenreviews' }, 0, {
    times: 1_000_000,
  });
  const reviews = () => server.faults.pending().find((f) => f.id === counter.id)!.fired;
  expect((await call('GET', '/v1/ip', 't-viewer')).status).toBe(200);
  const first = reviews();
  expect((await call('GET', '/v1/ip', 't-viewer')).status).toBe(200);
  expect(reviews()).toBe(first);
  const forged = Array.from({ length: 1200 }, (_, i) => `forged-${i}`);
  for (let i = 0; i < forged.length; i += 50)
    await Promise.all(
      forged.slice(i, i + 50).map(async (t) => expect((await call('GET', '/v1/ip', t)).status).toBe(401)),
    );
  expect(reviews()).toBe(first + 1200);
  // the viewer's answer was evicted by the newer ones: asked again
  expect((await call('GET', '/v1/ip', 't-viewer')).status).toBe(200);
  expect(reviews()).toBe(first + 1201);
  server.faults.clear();
});

test('E8-8b the permission follows the route express matches, whatever the spelling of its path', async () => {
  // express routes case-insensitively with an optional trailing slash: each of these is the
  // release or a pool change, and a token that may only list must not get through with it
  const release = { ips: [{ ip: '10.0.100.10', podName: 'x', namespace: 'ns1' }] };
  for (const path of ['/V1/IP', '/v1/ip/', '/v1/IP', '/V1/Ip/']) {
    expect(await call('POST', path, 't-viewer', release)).toEqual({
      status: 403,
      body: { code: 403, message: 'forbidden: viewer may not delete floatingips.galaxy.k8s.io' },
    });
  }
  for (const path of ['/V1/POOL', '/v1/Pool/'])
    expect((await call('POST', path, 't-viewer', { name: 'p2', size: 1 })).body.message).toBe(
      'forbidden: viewer may not update pools.galaxy.k8s.io',
    );
  for (const path of ['/V1/pool/p1', '/v1/POOL/p1/'])
    expect((await call('DELETE', path, 't-viewer')).body.message).toBe(
      'forbidden: viewer may not delete pools.galaxy.k8s.io',
    );
  // and reading a pool, however spelt, is still `get pools`, which the viewer has
  expect((await call('GET', '/V1/POOL/p1/', 't-viewer')).status).not.toBe(403);
});
