// Property tests of the admission webhook over real HTTPS, started by the composition root on the
// embedded API server with addresses in use: generated AdmissionReviews (v1, v1beta1, others) about
// Pools, the ConfigMap, FloatingIPs and pods, valid and mutated at any node, bodies that are not
// JSON, every content type and encoding, other paths and methods. No answer is a 5xx or a dropped
// connection; a 200 is a v1 AdmissionReview answering the request's uid; anything that is not a
// v1 review is a 4xx saying why, never "allowed"; a Pool's verdict is its size's; deletions pass;
// /healthz answers after every batch.
import { CoreV1Api } from '@kubernetes/client-node';
import fc from 'fast-check';
import { type EmbeddedApiServer, startApiServer } from '../../src/apiserver/index.js';
import { GALAXY_DEFAULTS } from '../../src/config/galaxy-config.js';
import { silentLogger } from '../../src/log.js';
import { type Floatip, startFloatip } from '../../src/server.js';
import { webhookCertificate } from '../integration/webhook-tls.js';
import { type Answer, Req, closeConnections, requestsSent, trustCa } from './http.js';
import { type Violation, answer, failedProperties, holds, isViolation, timeLimit } from './property.js';
import { CONFIGMAP_NAME, ENTRY, POOL_NAMESPACE, other, poolReviews, reviews } from './webhook-requests.js';

let server: EmbeddedApiServer;
let floatip: Floatip;

beforeAll(async () => {
  const tls = webhookCertificate(['IP:127.0.0.1']);
  trustCa(tls.ca);
  server = await startApiServer({ port: 0, seed: 'none', log: () => undefined });
  const core = server.kubeConfig().makeApiClient(CoreV1Api);
  for (const name of ['default', POOL_NAMESPACE])
    await core.createNamespace({ body: { metadata: { name } } });
  await core.createNamespacedConfigMap({
    namespace: POOL_NAMESPACE,
    body: { metadata: { name: CONFIGMAP_NAME }, data: { floatingips: JSON.stringify([ENTRY]) } },
  });
  floatip = await startFloatip({
    kubeConfig: server.kubeConfig(),
    galaxy: GALAXY_DEFAULTS,
    resource: 'tke.cloud.tencent.com/eni-ip',
    poolNamespace: POOL_NAMESPACE,
    bind: '127.0.0.1',
    port: 0,
    log: silentLogger(),
    resyncIntervalMs: 0,
    webhook: { port: 0, certificate: () => tls },
  });
  // in use: so that a narrower ConfigMap is refused and a small Pool warned about
  const none = { policy: 0, nodeName: '', podUid: '' };
  await floatip.store.allocateIP('10.0.100.10', 'NULL_default_NULL_web', none);
  await floatip.store.allocateIP('10.0.100.11', 'pool__p1_', { ...none, policy: 2 });
  await floatip.store.allocateIP('10.0.100.12', 'pool__p1_', { ...none, policy: 2 });
}, 60_000);

afterAll(async () => {
  closeConnections();
  await floatip?.close();
  await server?.close();
});

const base = () => floatip.webhookUrl!;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The request's body as the webhook reads it, when it reads it as JSON. */
function sentJson(r: Req): unknown {
  try {
    return JSON.parse(r.bytes?.toString('utf8') ?? '');
  } catch {
    return undefined;
  }
}

const header = (r: Req, name: string) =>
  Object.entries(r.headers).find(([h]) => h.toLowerCase() === name)?.[1];

/** What is wrong with the answer `a` to `r`, whatever `r` was. */
export function webhookProblems(r: Req, a: Answer): string[] {
  if (a.status >= 500) return [`a server error (${a.status})`];
  if (/\n\s+at .+:\d+:\d+/.test(a.text)) return ['a stack trace in the answer'];
  if (r.path === '/healthz' && r.method === 'GET')
    return a.status === 200 && a.text === 'ok\n' ? [] : [`the health check answered ${a.status} ${a.text}`];
  // the API server logs it, kubectl prints it: a value quoted in it is clipped
  if (a.status >= 400 && a.text.length > 2048) return [`an error of ${a.text.length} characters`];
  if (a.status >= 400)
    return r.method !== 'HEAD' && a.text.trim() === '' ? [`an error (${a.status}) saying nothing`] : [];
  if (!(r.method === 'POST' && r.path === '/validate')) return [`${a.status} to ${r.endpoint}`];
  if (a.status !== 200) return [`an unexpected answer ${a.status}`];
  const sent = sentJson(r);
  const encoding = header(r, 'content-encoding')?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') return [`a body sent ${encoding} judged as if it were plain JSON`];
  if (!isObject(sent) || sent.apiVersion !== 'admission.k8s.io/v1' || sent.kind !== 'AdmissionReview')
    return ['a body that is not a v1 AdmissionReview answered 200'];
  const request = sent.request as Record<string, unknown> | undefined;
  if (!isObject(request) || typeof request.uid !== 'string' || request.uid === '')
    return ['a review without a uid answered 200'];
  const json = a.json;
  if (!isObject(json) || json.apiVersion !== 'admission.k8s.io/v1' || json.kind !== 'AdmissionReview')
    return ['a 200 that is not a v1 AdmissionReview'];
  const response = json.response;
  if (!isObject(response)) return ['an AdmissionReview without its response'];
  if (response.uid !== request.uid)
    return [`response.uid ${JSON.stringify(response.uid)} is not the request's`];
  if (typeof response.allowed !== 'boolean') return ['response.allowed is not a boolean'];
  if (!response.allowed) {
    const status = response.status as { code?: unknown; message?: unknown } | undefined;
    if (status?.code !== 403 || typeof status.message !== 'string' || status.message === '')
      return ['a refusal without its 403 and message'];
    if (status.message.length > 16_384) return [`a refusal of ${status.message.length} characters`];
  }
  if (request.operation === 'DELETE' && !response.allowed) return ['a deletion refused'];
  return [];
}

async function healthy(): Promise<Violation[]> {
  const r = new Req('webhook', 'GET', '/healthz');
  const a = await answer(base(), r);
  if (isViolation(a)) return [{ ...a, problem: `the webhook is down after the batch: ${a.problem}` }];
  return webhookProblems(r, a).map((problem) => ({ requests: [r], answer: a, problem }));
}

async function checked(batch: readonly Req[], extra = (_r: Req, _a: Answer): string[] => []) {
  const results = await Promise.all(batch.map((r) => answer(base(), r)));
  const violations: Violation[] = [];
  results.forEach((a, i) => {
    if (isViolation(a)) return violations.push(a);
    for (const problem of [...webhookProblems(batch[i]!, a), ...extra(batch[i]!, a)])
      violations.push({ requests: [batch[i]!], answer: a, problem });
  });
  return [...violations, ...(await healthy())];
}

test(
  'reviews valid, mutated and not JSON: no 5xx, a 200 answers the uid, anything else a 4xx saying why',
  async () => {
    await holds('webhook reviews', fc.array(reviews, { minLength: 1, maxLength: 6 }), 600, (batch) =>
      checked(batch),
    );
  },
  timeLimit(150_000),
);

/** The Pool store's rule, written out again: a whole number, not below zero. */
const wholeSize = (size: unknown) => typeof size === 'number' && Number.isInteger(size) && size >= 0;

test(
  'a Pool is allowed exactly when it has a name and its size is a whole number >= 0',
  async () => {
    await holds('webhook pools', fc.array(poolReviews, { minLength: 1, maxLength: 6 }), 300, (batch) =>
      checked(
        batch.map(
          (review) =>
            new Req(
              'webhook',
              'POST',
              '/validate',
              { 'Content-Type': 'application/json' },
              JSON.stringify(review),
            ),
        ),
        (r, a) => {
          const { request } = sentJson(r) as (typeof batch)[number];
          const allowed = (a.json as { response?: { allowed?: unknown } } | undefined)?.response?.allowed;
          const expected = request.name !== '' && wholeSize(request.object.size);
          if (a.status !== 200) return [`a Pool review answered ${a.status}`];
          return allowed === expected
            ? []
            : [
                `Pool ${request.name} of size ${JSON.stringify(request.object.size)}: allowed ${String(allowed)}`,
              ];
        },
      ),
    );
  },
  timeLimit(100_000),
);

test(
  'other paths and methods, bodies over the limit: no 5xx, a 4xx saying why',
  async () => {
    await holds('webhook other', fc.array(other, { minLength: 1, maxLength: 4 }), 150, (batch) =>
      checked(batch),
    );
  },
  timeLimit(120_000),
);

test('at least 2,000 requests reached the webhook', () => {
  if (failedProperties().length > 0)
    throw new Error(
      `not counted: ${failedProperties().join(', ')} failed (above) before sending all its cases`,
    );
  expect(requestsSent()).toBeGreaterThanOrEqual(2000);
});

// The counterexamples the properties found, kept as plain cases.
describe('regressions', () => {
  const post = (body: string, headers: Record<string, string> = { 'Content-Type': 'application/json' }) =>
    answer(base(), new Req('webhook', 'POST', '/validate', headers, body)) as Promise<Answer>;
  const review = (request: Record<string, unknown>) =>
    JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
  const deep = (depth: number) => '{"a":'.repeat(depth) + 'null' + '}'.repeat(depth);

  test.each(['apiVersion', 'kind'])(
    'a %s nested 100,000 deep is a 400 naming it, not a 500',
    async (field) => {
      const body = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",${JSON.stringify(field)}:${deep(100_000)}}`;
      const a = await post(body);
      expect(a.status).toBe(400);
      expect(a.text).toBe(
        `bad request: expected apiVersion admission.k8s.io/v1, kind AdmissionReview; got ${field === 'apiVersion' ? 'an object, "AdmissionReview"' : '"admission.k8s.io/v1", an object'} (set admissionReviewVersions: ["v1"])\n`,
      );
    },
  );

  test('a pod whose args annotation breaks off after a backslash in a key is judged (it names no addresses): allowed, not a 500', async () => {
    const a = await post(
      review({
        uid: 'u1',
        kind: { group: '', version: 'v1', kind: 'Pod' },
        operation: 'CREATE',
        name: 'web',
        namespace: 'default',
        object: { metadata: { name: 'web', annotations: { 'k8s.v1.cni.galaxy.io/args': '{"com\\m' } } },
      }),
    );
    expect(a.status).toBe(200);
    expect(a.json).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u1', allowed: true },
    });
  });

  test('a FloatingIP whose policy is nested 100,000 deep is refused naming the field, not a 500', async () => {
    const body = review({
      uid: 'u3',
      kind: { group: 'galaxy.k8s.io', version: 'v1alpha1', kind: 'FloatingIP' },
      operation: 'CREATE',
      name: '10.0.100.15',
      namespace: '',
      object: { metadata: { name: '10.0.100.15' }, spec: { key: 'pool__p1_', policy: '\u0000' } },
    }).replace('"\\u0000"', deep(100_000));
    const a = await post(body);
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({
      response: {
        uid: 'u3',
        allowed: false,
        status: { code: 403, message: 'FloatingIP 10.0.100.15: spec.policy (an object) is not 0, 1 or 2' },
      },
    });
  });

  const long = 'x'.repeat(600_000);
  test.each([
    ['an operation', { operation: long }],
    ['a kind', { kind: { group: long, version: 'v1', kind: long } }],
  ])('%s of 600,000 characters is named clipped in the 400 (it came back whole)', async (_what, fields) => {
    const a = await post(
      review({
        uid: 'u4',
        kind: { group: '', version: 'v1', kind: 'Pod' },
        operation: 'CREATE',
        object: {},
        ...fields,
      }),
    );
    expect(a.status).toBe(400);
    expect(a.text).toContain('x'.repeat(100));
    expect(a.text.length).toBeLessThan(2048);
  });

  test.each([
    ['Pool', { group: 'galaxy.k8s.io', version: 'v1alpha1', kind: 'Pool' }, { size: -1 }],
    ['FloatingIP', { group: 'galaxy.k8s.io', version: 'v1alpha1', kind: 'FloatingIP' }, {}],
    [
      'Pod',
      { group: '', version: 'v1', kind: 'Pod' },
      {
        metadata: {
          annotations: { 'k8s.v1.cni.galaxy.io/args': '{"common":{"ipinfos":[{"ip":"10.0.100.10/24"}]}}' },
        },
      },
    ],
  ])(
    'a %s named with 600,000 characters is refused naming it clipped (it was named whole)',
    async (_what, kind, object) => {
      const a = await post(
        review({
          uid: 'u5',
          kind,
          operation: 'CREATE',
          name: long,
          namespace: long,
          object: { ...object, metadata: { name: long, ...(object as { metadata?: object }).metadata } },
        }),
      );
      const response = (a.json as { response: { allowed: boolean; status: { message: string } } }).response;
      expect(response.allowed).toBe(false);
      expect(response.status.message).toContain('x'.repeat(100));
      expect(response.status.message.length).toBeLessThan(2048);
    },
  );

  test('a path of 10,000 characters is named clipped in the 404', async () => {
    const a = await answer(base(), new Req('webhook', 'GET', `/${'a'.repeat(10_000)}`));
    expect((a as Answer).status).toBe(404);
    expect((a as Answer).text.length).toBeLessThan(2048);
  });

  test.each(['gzip', 'br', 'x-unknown'])(
    'a review sent with Content-Encoding %s is a 415 naming it, not judged as plain JSON',
    async (encoding) => {
      const body = review({
        uid: 'u2',
        kind: { group: 'galaxy.k8s.io', version: 'v1alpha1', kind: 'Pool' },
        operation: 'CREATE',
        name: 'p1',
        namespace: POOL_NAMESPACE,
        object: { metadata: { name: 'p1' }, size: 1 },
      });
      const a = await post(body, { 'Content-Type': 'application/json', 'Content-Encoding': encoding });
      expect(a.status).toBe(415);
      expect(a.text).toBe(
        `unsupported content encoding ${JSON.stringify(encoding)}: the API server sends an AdmissionReview unencoded\n`,
      );
      // the same review unencoded, or labelled identity, is judged
      for (const headers of [
        { 'Content-Type': 'application/json' } as Record<string, string>,
        { 'Content-Type': 'application/json', 'Content-Encoding': 'identity' },
      ])
        expect((await post(body, headers)).status).toBe(200);
    },
  );
});
