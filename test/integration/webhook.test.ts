// The admission webhook over real HTTPS, started by the composition root on the embedded API
// server: what it refuses and in which words (the watcher's own, for the ConfigMap), what it
// allows with a warning, and that a malformed review is a 400, never an answer.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { CoreV1Api, type CoreV1Event } from '@kubernetes/client-node';
import { type EmbeddedApiServer, startApiServer } from '../../src/apiserver/index.js';
import { GALAXY_DEFAULTS } from '../../src/config/galaxy-config.js';
import { silentLogger } from '../../src/log.js';
import { type Floatip, startFloatip } from '../../src/server.js';
import { eventually } from './helpers.js';
import { type WebhookCertificate, webhookCertificate } from './webhook-tls.js';

const ENTRY = {
  nodeSubnets: ['10.0.1.0/24'],
  ips: ['10.0.100.10~10.0.100.20'],
  subnet: '10.0.100.0/24',
  gateway: '10.0.100.1',
};

let server: EmbeddedApiServer;
let floatip: Floatip;
let tls: WebhookCertificate;
/** What floatip's webhook is given to serve (a test renews it). */
let served: WebhookCertificate;
let core: CoreV1Api;

beforeAll(async () => {
  tls = webhookCertificate(['IP:127.0.0.1']);
  served = tls;
  server = await startApiServer({ port: 0, seed: 'none', log: () => undefined });
  core = server.kubeConfig().makeApiClient(CoreV1Api);
  for (const name of ['default', 'kube-system']) await core.createNamespace({ body: { metadata: { name } } });
  await core.createNamespacedConfigMap({
    namespace: 'kube-system',
    body: { metadata: { name: 'floatingip-config' }, data: { floatingips: JSON.stringify([ENTRY]) } },
  });
  floatip = await startFloatip({
    kubeConfig: server.kubeConfig(),
    galaxy: GALAXY_DEFAULTS,
    resource: 'tke.cloud.tencent.com/eni-ip',
    poolNamespace: 'kube-system',
    bind: '127.0.0.1',
    port: 0,
    log: silentLogger(),
    resyncIntervalMs: 0,
    webhook: { port: 0, certificate: () => served, reloadMs: 50 },
  });
  // in use: a pod's address and two of pool p1's
  const none = { policy: 0, nodeName: '', podUid: '' };
  await floatip.store.allocateIP('10.0.100.10', 'NULL_default_NULL_web', none);
  await floatip.store.allocateIP('10.0.100.11', 'pool__p1_', { ...none, policy: 2 });
  await floatip.store.allocateIP('10.0.100.12', 'pool__p1_', { ...none, policy: 2 });
});
afterAll(async () => {
  await floatip?.close();
  await server?.close();
});

interface Answer {
  readonly status: number;
  readonly text: string;
}

/** POSTs to the webhook over HTTPS, trusting only the webhook's CA (as the API server's caBundle does). */
function post(
  body: string,
  path = '/validate',
  method = 'POST',
  type = 'application/json',
  ca = tls.ca,
): Promise<Answer> {
  const url = new URL(path, floatip.webhookUrl);
  return new Promise((resolve, reject) => {
    const req = request(url, { method, ca, agent: false, headers: { 'content-type': type } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface Response {
  uid: string;
  allowed: boolean;
  status?: { code: number; message: string };
  warnings?: string[];
}

let uids = 0;
async function review(
  kind: { group: string; version: string; kind: string },
  object: Record<string, unknown>,
  operation = 'CREATE',
  oldObject?: Record<string, unknown>,
): Promise<Response> {
  const metadata = object.metadata as { name: string; namespace?: string };
  const uid = `uid-${++uids}`;
  const answer = await post(
    JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid,
        kind,
        operation,
        name: metadata.name,
        namespace: metadata.namespace ?? '',
        object,
        ...(oldObject ? { oldObject } : {}),
      },
    }),
  );
  expect(answer.status).toBe(200);
  const parsed = JSON.parse(answer.text) as { apiVersion: string; kind: string; response: Response };
  expect(parsed).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
  expect(parsed.response.uid).toBe(uid);
  return parsed.response;
}

const CONFIGMAP = { group: '', version: 'v1', kind: 'ConfigMap' };
const FIP = { group: 'galaxy.k8s.io', version: 'v1alpha1', kind: 'FloatingIP' };
const POOL = { group: 'galaxy.k8s.io', version: 'v1alpha1', kind: 'Pool' };
const POD = { group: '', version: 'v1', kind: 'Pod' };

const configMap = (
  floatingips: string,
  annotations?: Record<string, string>,
  name = 'floatingip-config',
) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'kube-system', ...(annotations ? { annotations } : {}) },
  data: { floatingips },
});

async function refusalEvents(): Promise<CoreV1Event[]> {
  const list = await core.listNamespacedEvent({ namespace: 'kube-system' });
  return list.items.filter((e) => e.reason === 'InvalidFloatingIPConfig');
}

describe('the floatingip-config ConfigMap', () => {
  const bad: [string, string, RegExp][] = [
    ['bad JSON', '[{"ips": ', /not JSON: Unexpected end of JSON input/],
    [
      'a gateway outside its subnet',
      JSON.stringify([{ ...ENTRY, gateway: '10.0.200.1' }]),
      /floatingips\[0\]\.gateway "10\.0\.200\.1": /,
    ],
    ['a bad CIDR', JSON.stringify([{ ...ENTRY, subnet: '10.0.100.0/33' }]), /floatingips\[0\]\.subnet/],
    ['a VLAN out of range', JSON.stringify([{ ...ENTRY, vlan: 70000 }]), /floatingips\[0\]\.vlan/],
    [
      'overlapping ranges',
      JSON.stringify([ENTRY, { ...ENTRY, nodeSubnets: ['10.0.2.0/24'], ips: ['10.0.100.15~10.0.100.30'] }]),
      /overlap/,
    ],
    // hostile values that fit in a ConfigMap: judged, never a 500 (a RangeError from JSON.stringify
    // of the nesting), and named in a bounded message the watcher can still file as an Event
    [
      'an entry nested 100,000 deep',
      `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
      /^invalid floating IP configuration: floatingips\[0\] \[\.\.\.\]: an entry must be a JSON object$/,
    ],
    [
      '400,001 bad entries',
      `[${'1,'.repeat(400_000)}1]`,
      /floatingips\[19\] 1: an entry must be a JSON object; and 399981 more problems$/,
    ],
    [
      'a gateway of 700,000 characters',
      JSON.stringify([{ ...ENTRY, gateway: '1'.repeat(700_000) }]),
      /^invalid floating IP configuration: floatingips\[0\]\.gateway "1{199}\.\.\. \(700002 characters\): invalid IP address: "1+\.\.\. \(700022 characters\)$/,
    ],
  ];

  test.each(bad)(
    '%s is refused, in the words the watcher puts in its Event',
    async (_what, text, pattern) => {
      const verdict = await review(CONFIGMAP, configMap(text), 'UPDATE');
      expect(verdict.allowed).toBe(false);
      expect(verdict.status?.code).toBe(403);
      expect(verdict.status?.message).toMatch(pattern);
      expect(verdict.status!.message.length).toBeLessThan(16_384);
      // the same text written past the webhook (the embedded server calls none): the watcher's Event
      const before = (await refusalEvents()).length;
      await core.replaceNamespacedConfigMap({
        name: 'floatingip-config',
        namespace: 'kube-system',
        body: configMap(text),
      });
      await eventually('the watcher’s refusal', async () => (await refusalEvents()).length > before);
      const messages = (await refusalEvents()).map((e) => e.message ?? '');
      expect(
        messages.some((m) => m === `${verdict.status!.message}; the last valid configuration stays in force`),
      ).toBe(true);
    },
  );

  test('a ConfigMap without the key is refused with the watcher’s words', async () => {
    const verdict = await review(CONFIGMAP, { ...configMap(''), data: { other: '[]' } }, 'UPDATE');
    expect(verdict).toMatchObject({
      allowed: false,
      status: { message: "configmap floatingip-config_kube-system doesn't have a key floatingips" },
    });
  });

  test('a change that leaves addresses in use outside the configuration is refused with their list', async () => {
    const narrower = JSON.stringify([{ ...ENTRY, ips: ['10.0.100.12~10.0.100.20'] }]);
    const verdict = await review(CONFIGMAP, configMap(narrower), 'UPDATE');
    expect(verdict.allowed).toBe(false);
    expect(verdict.status?.message).toBe(
      'the change leaves 2 addresses in use outside the configuration: 10.0.100.10 (NULL_default_NULL_web), 10.0.100.11 (pool__p1_); release them first, or annotate the ConfigMap floatip.io/allow-orphans="true" to keep them as orphans',
    );
    const allowed = await review(
      CONFIGMAP,
      configMap(narrower, { 'floatip.io/allow-orphans': 'true' }),
      'UPDATE',
    );
    expect(allowed.allowed).toBe(true);
    expect(allowed.warnings).toEqual([
      'the change leaves 2 addresses in use outside the configuration: 10.0.100.10 (NULL_default_NULL_web), 10.0.100.11 (pool__p1_); kept as orphans (floatip.io/allow-orphans: "true")',
    ]);
    // any other value of the annotation is no override
    const no = await review(CONFIGMAP, configMap(narrower, { 'floatip.io/allow-orphans': 'yes' }), 'UPDATE');
    expect(no.allowed).toBe(false);
  });

  test('a change that makes an address in use the gateway passes with a warning naming it and its holder', async () => {
    const gatewayInUse = JSON.stringify([{ ...ENTRY, gateway: '10.0.100.11' }]);
    expect(await review(CONFIGMAP, configMap(gatewayInUse), 'UPDATE')).toEqual({
      uid: expect.any(String),
      allowed: true,
      warnings: [
        'the change makes an address in use one no pod gets: 10.0.100.11 (the gateway of floatingips[0]) held by pool__p1_; kept for their keys, but never handed out again once released',
      ],
    });
  });

  test('a valid change passes; other ConfigMaps are not floatip’s business', async () => {
    const wider = JSON.stringify([{ ...ENTRY, ips: ['10.0.100.10~10.0.100.50'] }]);
    expect(await review(CONFIGMAP, configMap(wider), 'UPDATE')).toEqual({
      uid: expect.any(String),
      allowed: true,
    });
    expect((await review(CONFIGMAP, configMap('not json', undefined, 'coredns'))).allowed).toBe(true);
  });
});

describe('FloatingIP objects', () => {
  const fip = (name: string, spec: Record<string, unknown>, labels?: Record<string, string>) => ({
    apiVersion: 'galaxy.k8s.io/v1alpha1',
    kind: 'FloatingIP',
    metadata: { name, ...(labels ? { labels } : {}) },
    spec: {
      key: 'NULL_default_NULL_p9',
      attribute: '',
      policy: 0,
      updateTime: '2020-01-01T00:00:00Z',
      ...spec,
    },
  });
  const refused: [string, ReturnType<typeof fip>, string][] = [
    [
      'a name that is no IP',
      fip('web-1', {}),
      'FloatingIP web-1: FloatingIP name is not an IP address: "web-1"',
    ],
    [
      'a name that is not the canonical form',
      fip('fd00-100-0-0-0-0-0-10', {}),
      'FloatingIP fd00-100-0-0-0-0-0-10: the name must be the address in canonical form: fd00-100--10',
    ],
    [
      'a key that does not parse',
      fip('10.0.100.13', { key: 'web' }),
      'FloatingIP 10.0.100.13: spec.key "web" is not an allocation key (<type>_<namespace>_<app>_<pod>, optionally after pool__<pool>_, or pool__<pool>_)',
    ],
    [
      'a megabyte of a key that does not parse, quoted by its start',
      fip('10.0.100.13', { key: 'k'.repeat(1 << 20) }),
      `FloatingIP 10.0.100.13: spec.key "${'k'.repeat(200)}"... (1048576 characters) is not an allocation key (<type>_<namespace>_<app>_<pod>, optionally after pool__<pool>_, or pool__<pool>_)`,
    ],
    [
      'a policy out of 0-2',
      fip('10.0.100.13', { policy: 3 }),
      'FloatingIP 10.0.100.13: spec.policy 3 is not 0, 1 or 2',
    ],
    [
      'an address outside the configuration',
      fip('10.0.100.99', {}),
      'FloatingIP 10.0.100.99: 10.0.100.99 is in no range of the floating IP configuration; add it to the ConfigMap, or label the object reserved to set it aside',
    ],
  ];
  test.each(refused)('%s is refused', async (_what, object, message) => {
    const verdict = await review(FIP, object);
    expect(verdict).toMatchObject({ allowed: false, status: { code: 403, message } });
  });

  test('good ones pass: a configured address, a reserved one outside, a pool key, an orphan kept on update', async () => {
    expect((await review(FIP, fip('10.0.100.13', {}))).allowed).toBe(true);
    expect((await review(FIP, fip('fd00-100--10', {}, { reserved: 'x' }))).allowed).toBe(true);
    expect(
      (await review(FIP, fip('10.0.100.99', { key: 'pool__p2_' }, { reserved: 'for-node' }))).allowed,
    ).toBe(true);
    expect((await review(FIP, fip('10.0.100.99', { key: 'dp_ns_app_' }), 'UPDATE')).allowed).toBe(true);
    // a pool annotation is free text: a pod of pool a_b is recorded under pool__a_b_ (bind's writes
    // were refused here, and every bind of such a pod rolled back)
    expect((await review(FIP, fip('10.0.100.13', { key: 'pool__a_b_dp_ns_app_app-1' }))).allowed).toBe(true);
    expect((await review(FIP, fip('10.0.100.13', { key: 'pool__a_b_' }))).allowed).toBe(true);
  });
  test('an address outside the configuration passes for the pod that runs with it (floatip writing again the object of an orphan it keeps), for no other', async () => {
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: {
          name: 'runs-outside',
          annotations: {
            'k8s.v1.cni.galaxy.io/args': JSON.stringify({
              common: { ipinfos: [{ ip: '10.0.100.99/24', vlan: 0, gateway: '10.0.100.1' }] },
            }),
          },
        },
        spec: { nodeName: 'a1', containers: [{ name: 'app', image: 'app' }] },
      },
    });
    const own = fip('10.0.100.99', { key: 'NULL_default_NULL_runs-outside' });
    await eventually('floatip to let the pod’s own object in', async () => (await review(FIP, own)).allowed);
    const outside = (name: string) =>
      `FloatingIP ${name}: ${name} is in no range of the floating IP configuration; add it to the ConfigMap, or label the object reserved to set it aside`;
    expect(await review(FIP, fip('10.0.100.99', { key: 'NULL_default_NULL_other' }))).toMatchObject({
      allowed: false,
      status: { message: outside('10.0.100.99') },
    });
    expect(await review(FIP, fip('10.0.100.98', { key: 'NULL_default_NULL_runs-outside' }))).toMatchObject({
      allowed: false,
      status: { message: outside('10.0.100.98') },
    });
    await core.deleteNamespacedPod({ namespace: 'default', name: 'runs-outside', gracePeriodSeconds: 0 });
    await eventually('the pod gone from floatip’s cache', async () => !(await review(FIP, own)).allowed);
  });
});

describe('Pool objects', () => {
  const pool = (name: string, size: unknown) => ({
    apiVersion: 'galaxy.k8s.io/v1alpha1',
    kind: 'Pool',
    metadata: { name, namespace: 'kube-system' },
    size,
  });
  test('a negative or non-integer size is refused', async () => {
    expect(await review(POOL, pool('p1', -1))).toMatchObject({
      allowed: false,
      status: { message: 'Pool kube-system/p1: size must be a whole number >= 0' },
    });
    expect((await review(POOL, pool('p1', 1.5))).allowed).toBe(false);
  });
  test('a Pool with no name is refused for that, not for its size', async () => {
    expect(await review(POOL, pool('', 1))).toMatchObject({
      allowed: false,
      status: { message: 'Pool in kube-system: metadata.name is missing' },
    });
  });
  test('a size below the addresses the pool holds passes with a warning; enough passes without', async () => {
    expect(await review(POOL, pool('p1', 1), 'UPDATE')).toEqual({
      uid: expect.any(String),
      allowed: true,
      warnings: [
        'Pool kube-system/p1: size 1 is below what the pool holds (addresses for 2 pods); none is taken away (surplus is never released), and pods beyond the size are refused at bind (reached pool p1 size limit of 1)',
      ],
    });
    expect(await review(POOL, pool('p1', 2))).toEqual({ uid: expect.any(String), allowed: true });
  });
});

describe('pods written with addresses', () => {
  const ipinfo = (n: number) => ({ ip: `10.0.100.${n}/24`, vlan: 0, gateway: '10.0.100.1' });
  const pod = (args?: unknown, labels: Record<string, string> = {}) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-copy',
      namespace: 'default',
      labels,
      ...(args === undefined
        ? {}
        : {
            annotations: {
              'k8s.v1.cni.galaxy.io/args': typeof args === 'string' ? args : JSON.stringify(args),
            },
          }),
    },
    spec: { containers: [{ name: 'app', image: 'app' }] },
  });
  const asks = { request_ip_range: [['10.0.100.10~10.0.100.20']] };
  const bound = { ...asks, common: { ipinfos: [ipinfo(10)] } };

  test('a pod created with common.ipinfos is refused, naming them; one that only asks passes', async () => {
    expect(await review(POD, pod({ common: { ipinfos: [ipinfo(10), ipinfo(11)] } }))).toMatchObject({
      allowed: false,
      status: {
        code: 403,
        message:
          "pod default/web-copy: annotation k8s.v1.cni.galaxy.io/args sets common.ipinfos (10.0.100.10/24, 10.0.100.11/24); a pod's addresses are written by floatip's bind alone: leave common.ipinfos out (request_ip_range may stay)",
      },
    });
    expect((await review(POD, pod(asks))).allowed).toBe(true);
    expect((await review(POD, pod())).allowed).toBe(true);
    expect((await review(POD, pod({ common: {} }))).allowed).toBe(true);
    // what no node or adoption reads an address from: bind refuses it in the decoder's words
    expect((await review(POD, pod('{"common":'))).allowed).toBe(true);
  });

  test.each([
    ['{"common":{"ipinfos":[IPINFO]},"common":{}}', 'common'],
    ['{"common":{"ipinfos":[IPINFO]},"common":null}', 'common'],
    ['{"common":{"ipinfos":[IPINFO]},"Common":{}}', 'Common'],
  ])(
    'common named twice (%s), which Go merges into the first ipinfos, is refused on create; left as it was, an update passes',
    async (template, key) => {
      const text = template.replace('IPINFO', JSON.stringify(ipinfo(11)));
      expect(await review(POD, pod(text))).toMatchObject({
        allowed: false,
        status: {
          code: 403,
          message: `pod default/web-copy: annotation k8s.v1.cni.galaxy.io/args names common twice (${key}), which Go's decoder merges into addresses floatip cannot see: write common once, without ipinfos`,
        },
      });
      expect((await review(POD, pod(text, { tier: 'web' }), 'UPDATE', pod(text))).allowed).toBe(true);
      expect((await review(POD, pod(text), 'UPDATE', pod(bound))).allowed).toBe(false);
    },
  );

  test('an update that leaves the addresses bind wrote passes; one that changes or adds them is refused', async () => {
    expect((await review(POD, pod(bound, { tier: 'web' }), 'UPDATE', pod(bound))).allowed).toBe(true);
    // the same addresses written with the keys in another order
    const reordered = JSON.stringify({
      common: { ipinfos: [{ gateway: '10.0.100.1', vlan: 0, ip: '10.0.100.10/24' }] },
      ...asks,
    });
    expect((await review(POD, pod(reordered), 'UPDATE', pod(bound))).allowed).toBe(true);
    expect((await review(POD, pod(asks), 'UPDATE', pod(bound))).allowed).toBe(true);
    expect(
      await review(POD, pod({ ...asks, common: { ipinfos: [ipinfo(12)] } }), 'UPDATE', pod(bound)),
    ).toMatchObject({
      allowed: false,
      status: {
        message: expect.stringMatching(
          /^pod default\/web-copy: annotation k8s.v1.cni.galaxy.io\/args changes common.ipinfos \(10.0.100.12\/24\)/,
        ),
      },
    });
    expect(await review(POD, pod(bound), 'UPDATE', pod(asks))).toMatchObject({ allowed: false });
    // deleting is never refused
    expect((await review(POD, pod(bound), 'DELETE')).allowed).toBe(true);
  });
});

describe('a review that is not one', () => {
  const good = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u', kind: CONFIGMAP, operation: 'CREATE', object: configMap('[]') },
  };
  test.each([
    ['not JSON', '{"apiVersion":', /^bad request: not JSON: /],
    [
      'v1beta1',
      JSON.stringify({ ...good, apiVersion: 'admission.k8s.io/v1beta1' }),
      /admissionReviewVersions: \["v1"\]/,
    ],
    [
      'no uid',
      JSON.stringify({ ...good, request: { ...good.request, uid: undefined } }),
      /request\.uid: must be a non-empty string/,
    ],
    [
      'no object on CREATE',
      JSON.stringify({ ...good, request: { ...good.request, object: null } }),
      /request\.object: required for CREATE/,
    ],
    [
      'an unknown operation',
      JSON.stringify({ ...good, request: { ...good.request, operation: 'PATCH' } }),
      /request\.operation: "PATCH"/,
    ],
    [
      'a kind floatip does not judge',
      JSON.stringify({
        ...good,
        request: { ...good.request, kind: { group: 'apps', version: 'v1', kind: 'Deployment' } },
      }),
      /floatip judges ConfigMap, FloatingIP, Pool and Pod objects, not apps\/v1 Deployment/,
    ],
  ])('%s is a 400 naming what is wrong', async (_what, body, pattern) => {
    const answer = await post(body);
    expect(answer.status).toBe(400);
    expect(answer.text).toMatch(pattern);
  });

  test('other methods, paths and media types', async () => {
    expect((await post('', '/validate', 'GET')).status).toBe(405);
    expect((await post('', '/mutate')).status).toBe(404);
    // a JSON type named its own way (parameters, case) is JSON; a JSON-based other type is not
    expect((await post('{}', '/validate', 'POST', 'Application/JSON; charset=utf-8')).status).toBe(400);
    expect((await post('[]', '/validate', 'POST', 'application/json-patch+json')).status).toBe(415);
    const large = await post(' '.repeat(8 * 1024 * 1024 + 1));
    expect(large).toEqual({
      status: 413,
      text: 'request entity too large: an AdmissionReview is at most 8388608 bytes\n',
    });
    expect(await post('', '/healthz', 'GET')).toEqual({ status: 200, text: 'ok\n' });
  });

  test('a caller that waits for 100 Continue is sent it once its review is to be read, and never when it is refused unread', async () => {
    // Go's server sends the 100 when the handler reads the body; node sent it to every request
    const ask = (path: string, body: string, type = 'application/json') =>
      new Promise<{ continued: boolean; status: number }>((resolve, reject) => {
        let continued = false;
        const req = request(
          new URL(path, floatip.webhookUrl),
          {
            method: 'POST',
            ca: tls.ca,
            agent: false,
            headers: {
              'content-type': type,
              'content-length': Buffer.byteLength(body),
              expect: '100-continue',
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => (req.destroy(), resolve({ continued, status: res.statusCode ?? 0 })));
          },
        );
        req.on('continue', () => ((continued = true), req.end(body)));
        req.on('error', reject);
        req.flushHeaders();
      });
    const body = JSON.stringify(good);
    expect(await ask('/validate', body)).toEqual({ continued: true, status: 200 });
    expect(await ask('/mutate', body)).toEqual({ continued: false, status: 404 });
    expect(await ask('/validate', body, 'text/plain')).toEqual({ continued: false, status: 415 });
    expect(await ask('/validate', ' '.repeat(8 * 1024 * 1024 + 1))).toEqual({
      continued: false,
      status: 413,
    });
  });

  test('a review POSTed by hand as curl -d sends it (form data) is a 415 naming the header to send; the README says so', async () => {
    const body = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'by-hand',
        kind: { group: 'galaxy.k8s.io', version: 'v1alpha1', kind: 'Pool' },
        operation: 'CREATE',
        name: 'p',
        namespace: 'kube-system',
        object: { metadata: { name: 'p', namespace: 'kube-system' }, size: -1 },
      },
    });
    for (const type of ['application/x-www-form-urlencoded', 'text/plain']) {
      expect(await post(body, '/validate', 'POST', type)).toEqual({
        status: 415,
        text: `unsupported media type "${type}": an AdmissionReview is application/json (send the header Content-Type: application/json)\n`,
      });
    }
    const readme = readFileSync('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('## Admission webhook'), readme.indexOf('**Deploy**'));
    expect(section.replace(/\s+/g, ' ')).toContain(
      'a body not labelled `application/json` is a 415 naming the header to send',
    );
  });

  test('the webhook speaks HTTPS only, with the certificate it was given', async () => {
    await expect(
      new Promise((resolve, reject) => {
        const req = request(new URL('/healthz', floatip.webhookUrl), {}, resolve);
        req.on('error', reject);
        req.end();
      }),
    ).rejects.toThrow(/self[- ]signed|unable to verify|certificate/i);
  });
});

describe('the certificate', () => {
  test('a renewed certificate is served without a restart; an unusable one leaves the old in place', async () => {
    const renewed = webhookCertificate(['IP:127.0.0.1']);
    // a key that is not the certificate's: refused, the current one stays
    served = { ...renewed, key: tls.key };
    await new Promise((r) => setTimeout(r, 200));
    expect(await post('', '/healthz', 'GET')).toEqual({ status: 200, text: 'ok\n' });
    served = renewed;
    await eventually('the renewed certificate served', () =>
      post('', '/healthz', 'GET', 'application/json', renewed.ca).then(
        (a) => a.status === 200,
        () => false,
      ),
    );
    await expect(post('', '/healthz', 'GET')).rejects.toThrow(/certificate|self[- ]signed|verify/i);
  });
});
