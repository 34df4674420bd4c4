// Requests for the admission webhook's port: AdmissionReviews (v1 as the API server sends them,
// v1beta1 as an older webhook configuration asks for, and neither) about the objects floatip judges
// with generated field values, valid and mutated at any node; bodies that are not JSON, every
// content type and encoding; other paths and methods.
import fc from 'fast-check';
import { JSON_TYPE, notJson } from './bodies.js';
import { Req } from './http.js';
import { hostileValue, mutated } from './json-tree.js';

export const CONFIGMAP_NAME = 'floatingip-config';
export const POOL_NAMESPACE = 'kube-system';
export const ENTRY = {
  nodeSubnets: ['10.0.1.0/24'],
  ips: ['10.0.100.10~10.0.100.20'],
  subnet: '10.0.100.0/24',
  gateway: '10.0.100.1',
};
const ARGS_ANNOTATION = 'k8s.v1.cni.galaxy.io/args';

export const KINDS = {
  ConfigMap: { group: '', version: 'v1', kind: 'ConfigMap' },
  FloatingIP: { group: 'galaxy.k8s.io', version: 'v1alpha1', kind: 'FloatingIP' },
  Pool: { group: 'galaxy.k8s.io', version: 'v1alpha1', kind: 'Pool' },
  Pod: { group: '', version: 'v1', kind: 'Pod' },
} as const;

const NAMES = ['p1', 'web', CONFIGMAP_NAME, '10.0.100.10', '10.0.100.30', 'fd00-100--14', POOL_NAMESPACE];

const namespace = fc.oneof(
  { weight: 4, arbitrary: fc.constant(POOL_NAMESPACE) },
  { weight: 2, arbitrary: fc.constant('default') },
  { weight: 1, arbitrary: fc.string() },
);

/**
 * Stands for a value nested 100,000 deep, which JSON.stringify cannot write: a field holding it is
 * sent holding the nesting (expand), so every field the judges read meets one.
 */
const DEEP = '\u0000deep\u0000';
const DEEP_JSON = JSON.stringify(DEEP);
const deepText = `${'{"a":['.repeat(50_000)}null${']}'.repeat(50_000)}`;
const expand = (text: string) => text.replaceAll(DEEP_JSON, deepText);
/** A field's values: its own, and now and then a deep one. */
const orDeep = <T>(values: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 12, arbitrary: values }, { weight: 1, arbitrary: fc.constant<unknown>(DEEP) });

/** Text cut at any point: JSON as a writer broke it, with escapes in its keys so a cut can end on one. */
const cut = (value: unknown) =>
  fc.nat().map((n) => {
    const text = JSON.stringify(value);
    return text.slice(0, n % (text.length + 1));
  });

/** A Pool's size: whole, negative, fractional, huge, or no number at all. */
export const poolSize = fc.oneof(
  fc.nat({ max: 100 }),
  fc.integer({ min: -100, max: -1 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, 1e300, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, -0, 0.5),
  fc.constantFrom<unknown>('1', '', null, true, [], {}, [1], { size: 1 }, DEEP),
);

const pool = fc.record(
  {
    apiVersion: fc.constant('galaxy.k8s.io/v1alpha1'),
    kind: fc.constant('Pool'),
    metadata: fc.record(
      { name: orDeep(fc.constantFrom('p1', 'p2', '')), namespace },
      { requiredKeys: ['name'] },
    ),
    size: poolSize,
    preAllocateIP: orDeep(fc.oneof(fc.boolean(), fc.constant<unknown>('true'))),
  },
  { requiredKeys: ['apiVersion', 'kind', 'metadata'] },
);

const configText = fc.oneof(
  fc.constant(JSON.stringify([ENTRY])),
  fc.constant(JSON.stringify([{ ...ENTRY, ips: ['10.0.100.12~10.0.100.20'] }])),
  fc.constant(JSON.stringify([{ ...ENTRY, gateway: '10.0.100.11' }])),
  fc.constant(JSON.stringify([{ ...ENTRY, vlan: 70000 }])),
  cut([{ ...ENTRY, 'n\\"\u2028odeSubnets': ENTRY.nodeSubnets }]),
  fc.string(),
);

const configMap = fc.record(
  {
    apiVersion: fc.constant('v1'),
    kind: fc.constant('ConfigMap'),
    metadata: fc.record(
      {
        name: fc.constantFrom(CONFIGMAP_NAME, 'other'),
        namespace,
        annotations: fc.constantFrom(
          { 'floatip.io/allow-orphans': 'true' },
          {},
          { 'floatip.io/allow-orphans': 'yes' },
        ),
      },
      { requiredKeys: ['name'] },
    ),
    data: fc.oneof(
      fc.record({ floatingips: orDeep(configText) }),
      fc.constant<unknown>({ other: '[]' }),
      fc.constant<unknown>({ floatingips: 1 }),
    ),
  },
  { requiredKeys: ['apiVersion', 'kind', 'metadata'] },
);

const address = fc.oneof(
  fc.constantFrom(
    '10.0.100.10',
    '10.0.100.15',
    '10.0.100.30',
    'fd00-100--14',
    '010.0.100.15',
    '10.0.100.015',
  ),
  fc.ipV4(),
  fc.string(),
);

const floatingIP = fc.record(
  {
    apiVersion: fc.constant('galaxy.k8s.io/v1alpha1'),
    kind: fc.constant('FloatingIP'),
    metadata: fc.record(
      { name: orDeep(address), labels: orDeep(fc.constantFrom({ reserved: '' }, {}, { app: 'x' })) },
      { requiredKeys: ['name'] },
    ),
    spec: fc.record(
      {
        key: orDeep(
          fc.oneof(
            fc.constantFrom('dp_default_web_web-0', 'pool__p1_', 'dp_ns_app_', 'pool__p1_x', '_', ''),
            fc.string(),
          ),
        ),
        policy: orDeep(fc.oneof(fc.constantFrom(0, 1, 2, 3, -1, 1.5), fc.constant<unknown>('1'))),
        attribute: orDeep(fc.oneof(fc.constant('{"NodeName":"n1","uid":"u"}'), fc.string())),
        updateTime: orDeep(fc.oneof(fc.constant('2026-01-01T00:00:00Z'), fc.string())),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['apiVersion', 'kind', 'metadata'] },
);

const cniArgs = fc.oneof(
  fc.constant(JSON.stringify({ request_ip_range: [['10.0.100.10~10.0.100.20']] })),
  fc.constant(
    JSON.stringify({ common: { ipinfos: [{ ip: '10.0.100.10/24', vlan: 0, gateway: '10.0.100.1' }] } }),
  ),
  fc.constant('{"common":{"ipinfos":[]},"Common":{}}'),
  // a writer's JSON broken anywhere, escaped keys included
  cut({ 'com\\mon': { 'ip"infos': [{ ip: '10.0.100.10/24' }] }, request_ip_range: [] }),
  fc.string(),
);

const pod = fc.record(
  {
    apiVersion: fc.constant('v1'),
    kind: fc.constant('Pod'),
    metadata: fc.record(
      {
        name: fc.constantFrom('web', ''),
        namespace: fc.constant('default'),
        annotations: fc.oneof(
          orDeep(cniArgs).map((text) => ({ [ARGS_ANNOTATION]: text })),
          fc.constant<unknown>({}),
          fc.constant<unknown>({ [ARGS_ANNOTATION]: 1 }),
        ),
      },
      { requiredKeys: ['name'] },
    ),
  },
  { requiredKeys: ['apiVersion', 'kind', 'metadata'] },
);

const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const;
export const operation = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...OPERATIONS) },
  { weight: 1, arbitrary: fc.constantFrom('create', 'PATCH', '', 'Update ', 'DELETE\u0000') },
);

const uid = fc.oneof(
  fc.constant(DEEP),
  fc.uuid(),
  fc.string({ minLength: 1 }),
  fc.string({ unit: 'binary', minLength: 1 }),
  fc.constantFrom('\ud800', '"', '\\', '</script>', 'x'.repeat(100_000)),
);

const review = (apiVersion: fc.Arbitrary<string>) =>
  fc
    .tuple(
      apiVersion,
      uid,
      fc.oneof(
        pool.map((o) => ['Pool', o] as const),
        configMap.map((o) => ['ConfigMap', o] as const),
        floatingIP.map((o) => ['FloatingIP', o] as const),
        pod.map((o) => ['Pod', o] as const),
      ),
      operation,
      fc.oneof(fc.constant(undefined), pool, configMap, floatingIP, pod),
      fc.option(fc.boolean(), { nil: undefined }),
    )
    .map(([version, id, [kind, object], op, oldObject, dryRun]) => {
      const metadata = object.metadata as { name: string; namespace?: string };
      const gvk = KINDS[kind];
      return {
        apiVersion: version,
        kind: 'AdmissionReview',
        request: {
          uid: id,
          kind: gvk,
          resource: { group: gvk.group, version: gvk.version, resource: `${kind.toLowerCase()}s` },
          requestKind: gvk,
          operation: op,
          name: metadata.name,
          namespace: metadata.namespace ?? (kind === 'FloatingIP' ? '' : POOL_NAMESPACE),
          // DELETE carries no object, only the old one
          ...(op === 'DELETE' ? {} : { object }),
          ...(oldObject ? { oldObject } : {}),
          ...(dryRun === undefined ? {} : { dryRun }),
          userInfo: { username: 'kubernetes-admin', groups: ['system:masters'] },
          options: { apiVersion: 'meta.k8s.io/v1', kind: `${op[0]}${op.slice(1).toLowerCase()}Options` },
        },
      };
    });

/** Reviews as the API server sends them (v1). */
export const v1Review = review(fc.constant('admission.k8s.io/v1'));
/** Reviews of any version: v1, v1beta1 and others. */
const anyReview = review(
  fc.oneof(
    { weight: 3, arbitrary: fc.constant('admission.k8s.io/v1') },
    { weight: 2, arbitrary: fc.constant('admission.k8s.io/v1beta1') },
    { weight: 1, arbitrary: fc.constantFrom('admission.k8s.io/v2', 'v1', '', 'ADMISSION.K8S.IO/V1') },
  ),
);

const hostile = hostileValue(NAMES, { maxString: 1_000_000 });

/** The content type the API server sends, mostly; others, and Content-Encodings, now and then. */
const headers: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 10, arbitrary: fc.constant(JSON_TYPE) },
  {
    weight: 3,
    arbitrary: fc.constantFrom<Record<string, string>>(
      {},
      { 'Content-Type': 'text/plain' },
      { 'Content-Type': 'application/x-www-form-urlencoded' },
      { 'Content-Type': 'application/json; charset=utf-16' },
      { 'Content-Type': 'APPLICATION/JSON ; charset=utf-8' },
      { 'Content-Type': 'application/json-patch+json' },
      { 'Content-Type': 'application/jsonx' },
      { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      { 'Content-Type': 'application/json', 'Content-Encoding': 'br' },
      { 'Content-Type': 'application/json', 'Content-Encoding': 'identity' },
      { 'Content-Type': 'application/json', 'Content-Encoding': 'x-unknown' },
      { 'Content-Type': 'application/json', Expect: '100-continue' },
      { 'Content-Type': 'application/json', 'Transfer-Encoding': 'identity' },
    ),
  },
);

const post = (body: fc.Arbitrary<string | Buffer>) =>
  fc
    .tuple(body, headers, fc.constantFrom('/validate', '/validate?timeout=10s', '/validate?'))
    .map(([b, h, target]) => new Req('webhook', 'POST', target, h, b));

/** A review as sent: valid (by weight) or mutated at any node, or not JSON. */
export const reviews = post(
  fc.oneof(
    { weight: 6, arbitrary: anyReview.map((r) => expand(JSON.stringify(r))) },
    { weight: 6, arbitrary: mutated(anyReview, hostile).map(expand) },
    { weight: 1, arbitrary: notJson(v1Review) },
  ),
);

/** Pool reviews as the API server sends them: the oracle's cases. */
export const poolReviews = fc
  .tuple(uid, pool, fc.constantFrom('CREATE', 'UPDATE'), fc.option(pool, { nil: undefined }))
  .map(([id, object, op, oldObject]) => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: id,
      kind: KINDS.Pool,
      operation: op,
      name: object.metadata.name,
      namespace: object.metadata.namespace ?? POOL_NAMESPACE,
      object,
      ...(oldObject ? { oldObject } : {}),
    },
  }));

const odd = fc.constantFrom(
  '/',
  '/healthz',
  '/healthz/',
  '/HEALTHZ',
  '/validate/',
  '/Validate',
  '//validate',
  '/validate/../validate',
  '/%76alidate',
  '/validate%00',
  '/validate;x',
  '/validate#x',
  '*',
  '/mutate',
  '/metrics',
  `/${'a'.repeat(10_000)}`,
);

/** Other methods and paths, and bodies over the 8 MiB limit (sent whole, or only announced). */
export const other = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(
        fc.constantFrom('GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'POST', 'PROPFIND', 'TRACE'),
        odd,
        fc.option(fc.constant('{}'), { nil: undefined }),
      )
      .map(([method, target, body]) => new Req('webhook', method, target, JSON_TYPE, body)),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      new Req('webhook', 'POST', '/validate', JSON_TYPE, '{}', 9 * 1024 * 1024),
      new Req('webhook', 'POST', '/validate', JSON_TYPE, Buffer.alloc(8 * 1024 * 1024 + 1, 0x20)),
      new Req('webhook', 'POST', '/validate', JSON_TYPE, `{"a":"${'x'.repeat(8 * 1024 * 1024)}"}`),
    ),
  },
);
