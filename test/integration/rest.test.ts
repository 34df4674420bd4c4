// The REST API over real HTTP, with floatip on the embedded API server (World). Every answer is
// also checked against the OpenAPI document (the World turns on response validation), and every
// scenario ends with the consistency check. Scenarios are numbered so a failure names one.
import { PatchStrategy, type V1Pod, setHeaderOptions } from '@kubernetes/client-node';
import { ApiError } from '../../src/api/index.js';
import { ReleasePolicy } from '../../src/ipam/index.js';
import { DEFAULT_RESOURCE } from '../../src/pods/pod-facts.js';
import { RELEASED_EVENT_REASON } from '../../src/store/release-audit.js';
import { capturedLog, eventually } from './helpers.js';
import { World } from './world.js';

const A = '10.0.1.0/24'; // IPv4, 19 addresses
const B = '10.0.2.0/24'; // IPv6: a whole /64 but three addresses
const C = '10.0.3.0/24'; // IPv4, 3 addresses
const V6_SIZE = 2n ** 64n - 3n;
const CONFIG = [
  {
    nodeSubnets: [A],
    ips: ['10.0.100.2~10.0.100.20'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
    vlan: 2,
  },
  {
    nodeSubnets: [B],
    ips: ['fd00:100::2~fd00:100::ffff:ffff:ffff:fffe'],
    subnet: 'fd00:100::/64',
    gateway: 'fd00:100::1',
  },
  { nodeSubnets: [C], ips: ['10.0.102.2~10.0.102.4'], subnet: '10.0.102.0/24', gateway: '10.0.102.1' },
];
const TOTAL = 19n + V6_SIZE + 3n;

let world: World;

beforeEach(async () => {
  world = await World.start({ config: CONFIG });
  await world.node('a1', '10.0.1.11');
  await world.node('b1', '10.0.2.11');
  await world.node('c1', '10.0.3.11');
});

afterEach(() => world.checkAndStop());

// ---- helpers

const never = { policy: ReleasePolicy.Never, nodeName: '', podUid: '' };

/** An allocation written as the store writes them (FloatingIP object first). */
const hold = (ip: string, key: string, attrs = never) => world.floatip.store.allocateIP(ip, key, attrs);

type Json = Record<string, unknown>;
const get = async (path: string) => {
  const r = await world.rest('GET', path);
  return { ...r, body: r.json as Json };
};
const post = async (path: string, body: unknown) => {
  const r = await world.rest('POST', path, body);
  return { ...r, body: r.json as Json };
};
const ipsOf = (body: Json) => ((body.content as Json[] | undefined) ?? []).map((i) => i.ip);

const fipObject = (ip: string, key: string, labels?: Record<string, string>) => ({
  apiVersion: 'galaxy.k8s.io/v1alpha1',
  kind: 'FloatingIP',
  metadata: { name: ip, ...(labels ? { labels } : {}) },
  spec: { key, policy: 2, attribute: '', updateTime: '2020-01-01T00:00:00Z' },
});

/** A FloatingIP object created by someone else (kubectl): an operator's reservation, an orphan. */
async function createObject(ip: string, key: string, labels?: Record<string, string>) {
  await world.custom.createClusterCustomObject({
    group: 'galaxy.k8s.io',
    version: 'v1alpha1',
    plural: 'floatingips',
    body: fipObject(ip, key, labels),
  });
  await eventually(`${ip} to reach floatip`, async () => world.floatip.allocator.get(ip)?.key === key);
}

async function setPhase(name: string, phase: string, namespace = 'ns1') {
  await world.core.patchNamespacedPodStatus(
    { name, namespace, body: { status: { phase } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  await eventually(
    `pod ${name} to be ${phase}`,
    async () => world.floatip.cluster.pods.get(namespace, name)?.status?.phase === phase,
  );
}

// `never` keeps a StatefulSet pod's address on its key after the pod is gone (docs/galaxy.md#the-release-table), whatever
// the lifecycle controller does: the case an operator releases by hand
const sts = (name: string, app = 'web', policy?: 'never') =>
  world.pod({ name, owner: { kind: 'StatefulSet', name: app }, ...(policy ? { policy } : {}) });

async function boundSts(
  name: string,
  node = 'a1',
  app = 'web',
  policy?: 'never',
): Promise<{ pod: V1Pod; ip: string }> {
  const pod = await sts(name, app, policy);
  expect(await world.bind(pod, node)).toBe('');
  const [ip] = await world.addressesOf(name);
  return { pod, ip: ip! };
}

async function auditEvents(ip: string) {
  await world.floatip.events.flush();
  const events = await world.core.listNamespacedEvent({ namespace: 'default' });
  return events.items.filter(
    (e) =>
      e.involvedObject.kind === 'FloatingIP' &&
      e.involvedObject.apiVersion === 'galaxy.k8s.io/v1alpha1' &&
      e.involvedObject.name === ip &&
      e.reason === RELEASED_EVENT_REASON,
  );
}

// ---- GET /v1/ip

describe('R1 GET /v1/ip', () => {
  test('R1a unfiltered: every configured address in numeric order, free ones included; exact counts past 2^53', async () => {
    await boundSts('web-0');
    const { status, text, body } = await get('/v1/ip');
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual([
      'last',
      'totalElements',
      'totalPages',
      'first',
      'numberOfElements',
      'size',
      'number',
      'content',
    ]);
    // written exactly, not rounded through a double
    expect(BigInt(/"totalElements":(\d+)/.exec(text)![1]!)).toBe(TOTAL);
    expect(BigInt(/"totalPages":(\d+)/.exec(text)![1]!)).toBe((TOTAL + 9n) / 10n);
    expect(body).toMatchObject({ last: false, first: true, numberOfElements: 10, size: 10, number: 0 });
    const content = body.content as Json[];
    expect(content.map((i) => i.ip)).toEqual([
      '10.0.100.2',
      '10.0.100.3',
      '10.0.100.4',
      '10.0.100.5',
      '10.0.100.6',
      '10.0.100.7',
      '10.0.100.8',
      '10.0.100.9',
      '10.0.100.10',
      '10.0.100.11',
    ]);
    expect(Object.keys(content[0]!)).toEqual([
      'ip',
      'namespace',
      'appName',
      'podName',
      'policy',
      'appType',
      'updateTime',
      'status',
    ]);
    expect(content[0]).toMatchObject({
      namespace: 'ns1',
      appName: 'web',
      podName: 'web-0',
      appType: 'statefulset',
    });
    // a free address: since when it is free (here, since the configuration was applied)
    expect(content[1]).toEqual({
      ip: '10.0.100.3',
      policy: 0,
      updateTime: expect.stringMatching(/^20\d\d-/),
    });
    // the IPv6 entry follows the IPv4 ones, whatever their order in the configuration
    const later = await get('/v1/ip?page=1&size=19');
    expect(ipsOf(later.body).slice(0, 5)).toEqual([
      '10.0.102.2',
      '10.0.102.3',
      '10.0.102.4',
      'fd00:100::2',
      'fd00:100::3',
    ]);
    expect(ipsOf((await get('/v1/ip?sort=ip%20desc&size=2')).body)).toEqual([
      'fd00:100::ffff:ffff:ffff:fffe',
      'fd00:100::ffff:ffff:ffff:fffd',
    ]);
  });

  test("R1b galaxy's paging: a last partial page, a page past the end (no content), nothing at all", async () => {
    await hold('10.0.100.2', 'sts_ns1_web_web-0');
    await hold('10.0.100.3', 'sts_ns1_web_web-1');
    await hold('10.0.100.4', 'sts_ns1_web_web-2');
    expect((await get('/v1/ip?namespace=ns1&appName=web&size=2&page=1')).body).toEqual({
      last: true,
      totalElements: 3,
      totalPages: 2,
      first: false,
      numberOfElements: 1,
      size: 2,
      number: 1,
      content: [
        expect.objectContaining({ ip: '10.0.100.4', podName: 'web-2', status: 'Deleted', releasable: true }),
      ],
    });
    const past = await get('/v1/ip?namespace=ns1&appName=web&size=2&page=7');
    expect(past.text).toBe(
      '{"last":true,"totalElements":3,"totalPages":2,"first":false,"numberOfElements":0,"size":2,"number":1}',
    );
    const none = await get('/v1/ip?namespace=nowhere');
    expect(none.text).toBe(
      '{"last":true,"totalElements":0,"totalPages":0,"first":true,"numberOfElements":0,"size":10,"number":0}',
    );
  });

  test('R1f exact counts past 2^53 are written where the counts are, never into a name that looks like their marker', async () => {
    // the marker pageBody once replaced in the finished text, wherever it stood
    const key = 'NULL_\u00007\u0000_NULL_p';
    await createObject('10.0.100.5', key);
    const { status, text, body } = await get('/v1/ip?size=1&page=3');
    expect(status).toBe(200);
    expect(BigInt(/"totalElements":(\d+)/.exec(text)![1]!)).toBe(TOTAL);
    expect(BigInt(/"number":(\d+)/.exec(text)![1]!)).toBe(3n);
    expect(body.content).toEqual([
      expect.objectContaining({ ip: '10.0.100.5', namespace: '\u00007\u0000', appType: 'NULL' }),
    ]);
  });

  test('R1c page and size are clamped as galaxy; an empty parameter is no parameter; a non-number is a 400', async () => {
    await hold('10.0.100.2', 'sts_ns1_web_web-0');
    const q = (query: string) => get(`/v1/ip?namespace=ns1&${query}`);
    expect((await q('page=-4')).body).toMatchObject({ number: 0, first: true, numberOfElements: 1 });
    expect((await q('size=0')).body).toMatchObject({ size: 10 });
    expect((await q('size=20000')).body).toMatchObject({ size: 9999 });
    expect((await q('page=1000000')).body).toMatchObject({ number: 0, numberOfElements: 0, last: true });
    expect((await q('page=&size=&keyword=&sort=')).body).toMatchObject({
      size: 10,
      number: 0,
      totalElements: 1,
    });
    expect((await q('sort=sideways')).status).toBe(200);
    const bad = await q('page=abc');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ code: 400, message: 'bad request: query.page: must be integer' });
    expect((await q('size=1.5')).body).toEqual({
      code: 400,
      message: 'bad request: query.size: must be integer',
    });
    // what JavaScript's Number reads but Go's Atoi does not is no integer either
    for (const [name, value] of [
      ['size', '0x10'],
      ['size', '1e2'],
      ['page', '0b11'],
      ['size', '%201'],
      ['page', 'Infinity'],
    ])
      expect((await q(`${name}=${value}`)).body).toEqual({
        code: 400,
        message: `bad request: query.${name}: must be integer`,
      });
    // and what Atoi reads is read: a sign (`+` is a space in a query), leading zeros; a parameter
    // the operation does not have is ignored, as galaxy ignored it
    expect((await q('size=%2B07&page=-1&limit=0x10')).body).toMatchObject({ size: 7, number: 0 });
    // beyond int64 Atoi fails and galaxy takes its default; within it, the number clamps
    expect((await q('size=9223372036854775807')).body).toMatchObject({ size: 9999 });
    expect((await q('size=9223372036854775808')).body).toMatchObject({ size: 10 });
    expect((await q('size=-9223372036854775809')).body).toMatchObject({ size: 10 });
    expect((await q('size=1&page=9223372036854775807')).body).toMatchObject({
      number: 1,
      numberOfElements: 0,
    });
    expect((await q('size=1&page=99999999999999999999')).body).toMatchObject({
      number: 0,
      first: true,
      numberOfElements: 1,
    });
  });

  test('R1d status and releasable per IP: running, deleted, finished, parked, reserved', async () => {
    const running = await boundSts('web-0');
    const gone = await boundSts('web-1', 'a1', 'web', 'never');
    await world.deletePod('web-1');
    const done = await boundSts('web-2', 'a1', 'web', 'never');
    await setPhase('web-2', 'Succeeded');
    await hold('10.0.100.15', 'dp_ns1_api_');
    await createObject('10.0.100.16', 'pool__reserved-for-node_', { reserved: 'for-node' });
    const byIp = new Map(
      ((await get('/v1/ip?size=50')).body.content as Json[]).map((i) => [i.ip as string, i] as const),
    );
    expect(byIp.get(running.ip)).toMatchObject({ status: 'Pending' });
    expect(byIp.get(running.ip)).not.toHaveProperty('releasable');
    expect(byIp.get(gone.ip)).toMatchObject({ status: 'Deleted', releasable: true });
    expect(byIp.get(done.ip)).toMatchObject({ status: 'Succeeded' });
    expect(byIp.get(done.ip)).not.toHaveProperty('releasable');
    expect(byIp.get('10.0.100.15')).toMatchObject({
      namespace: 'ns1',
      appName: 'api',
      appType: 'deployment',
      policy: 2,
      status: 'Deleted',
      releasable: true,
    });
    expect(byIp.get('10.0.100.15')).not.toHaveProperty('podName');
    expect(byIp.get('10.0.100.16')).toEqual({
      ip: '10.0.100.16',
      poolName: 'reserved-for-node',
      policy: 2,
      updateTime: '2020-01-01T00:00:00Z',
    });
  });

  test('R1e galaxy-shaped filters keep their answers; the broken ones now match exactly (docs/galaxy.md#list-filters-and-sort)', async () => {
    await hold('10.0.100.10', 'sts_ns1_web_web-1');
    await hold('10.0.100.9', 'sts_ns1_web_web-10');
    await hold('10.0.100.3', 'dp_ns1_api_api-5f7-abc');
    await hold('10.0.100.4', 'dp_ns1_api_');
    await hold('10.0.100.5', 'pool__p1_dp_ns2_front_front-9c-x');
    await hold('10.0.100.6', 'pool__p1_');
    await hold('fd00:100::2', 'sts_ns2_db_db-0');
    const list = async (query: string) => ipsOf((await get(`/v1/ip?size=100&${query}`)).body);
    // galaxy's answers
    expect(await list('namespace=ns1&appName=web')).toEqual(['10.0.100.9', '10.0.100.10']);
    expect(await list('namespace=ns1&appName=api&appType=deployment')).toEqual(['10.0.100.3', '10.0.100.4']);
    expect(await list('poolName=p1')).toEqual(['10.0.100.5', '10.0.100.6']);
    expect(await list('keyword=web-1')).toEqual(['10.0.100.9', '10.0.100.10']);
    // exact pod: web-1 is not web-10
    expect(await list('namespace=ns1&appName=web&podName=web-1')).toEqual(['10.0.100.10']);
    // galaxy matched nothing for these
    expect(await list('namespace=ns2')).toEqual(['10.0.100.5', 'fd00:100::2']);
    expect(await list('appName=web')).toEqual(['10.0.100.9', '10.0.100.10']);
    expect(await list('appName=front&poolName=p1')).toEqual(['10.0.100.5']);
    // ... and everything for these
    expect(await list('podName=db-0')).toEqual(['fd00:100::2']);
    expect(await list('appType=deployment')).toEqual(['10.0.100.3', '10.0.100.4', '10.0.100.5']);
    // numeric IP order, and the sorts galaxy got wrong
    expect(await list('keyword=_&sort=ip')).toEqual([
      '10.0.100.3',
      '10.0.100.4',
      '10.0.100.5',
      '10.0.100.6',
      '10.0.100.9',
      '10.0.100.10',
      'fd00:100::2',
    ]);
    expect(await list('keyword=_&sort=namespace')).toEqual([
      '10.0.100.6',
      '10.0.100.3',
      '10.0.100.4',
      '10.0.100.9',
      '10.0.100.10',
      '10.0.100.5',
      'fd00:100::2',
    ]);
    expect(await list('keyword=_&sort=PODNAME%20DESC')).toEqual([
      '10.0.100.9',
      '10.0.100.10',
      '10.0.100.5',
      'fd00:100::2',
      '10.0.100.3',
      '10.0.100.4',
      '10.0.100.6',
    ]);
  });
});

// ---- GET /v1/ip/{ip} and /v1/subnets

describe('R2 GET /v1/ip/{ip}', () => {
  test('R2a an allocated address, a free one, an IPv6 one in any form, one outside the configuration', async () => {
    const { pod, ip } = await boundSts('web-0');
    const one = await get(`/v1/ip/${ip}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({
      code: 200,
      message: '',
      content: {
        ip,
        namespace: 'ns1',
        appName: 'web',
        podName: 'web-0',
        policy: 0,
        appType: 'statefulset',
        updateTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
        status: 'Pending',
        key: 'sts_ns1_web_web-0',
        nodeName: 'a1',
        podUid: pod.metadata!.uid,
        reserved: false,
        configured: true,
        network: { entry: 0, subnet: '10.0.100.0/24', gateway: '10.0.100.1', vlan: 2 },
      },
    });
    expect((await get('/v1/ip/10.0.100.20')).body.content).toEqual({
      ip: '10.0.100.20',
      policy: 0,
      updateTime: expect.stringMatching(/^20\d\d-\d\d-\d\dT[\d:.]+Z$/),
      key: '',
      nodeName: '',
      podUid: '',
      reserved: false,
      configured: true,
      network: { entry: 0, subnet: '10.0.100.0/24', gateway: '10.0.100.1', vlan: 2 },
    });
    expect((await get('/v1/ip/fd00:100:0:0::ff')).body.content).toMatchObject({
      ip: 'fd00:100::ff',
      network: { entry: 1, subnet: 'fd00:100::/64', gateway: 'fd00:100::1', vlan: 0 },
    });
    const missing = await get('/v1/ip/10.0.100.200');
    expect([missing.status, missing.body]).toEqual([
      404,
      { code: 404, message: 'not found: 10.0.100.200 is not in any configured range' },
    ]);
    const bad = await get('/v1/ip/10.0.100.256');
    expect([bad.status, bad.body]).toEqual([
      400,
      { code: 400, message: 'bad request: "10.0.100.256" is not a valid ip (params.ip)' },
    ]);
    const zoned = await get('/v1/ip/fd00:100::ff%25eth0');
    expect([zoned.status, zoned.body]).toEqual([
      400,
      { code: 400, message: 'bad request: "fd00:100::ff%eth0" is not a valid ip (params.ip)' },
    ]);
  });

  test('R2b an orphan (allocated outside the configuration) is shown, unconfigured', async () => {
    await createObject('10.0.100.200', 'sts_ns1_old_old-0');
    expect((await get('/v1/ip/10.0.100.200')).body.content).toMatchObject({
      ip: '10.0.100.200',
      key: 'sts_ns1_old_old-0',
      configured: false,
      releasable: true,
    });
    expect((await get('/v1/ip/10.0.100.200')).body.content).not.toHaveProperty('network');
    // and the unfiltered list has it in its place
    expect(ipsOf((await get('/v1/ip?page=1&size=10')).body)).toEqual([
      '10.0.100.12',
      '10.0.100.13',
      '10.0.100.14',
      '10.0.100.15',
      '10.0.100.16',
      '10.0.100.17',
      '10.0.100.18',
      '10.0.100.19',
      '10.0.100.20',
      '10.0.100.200',
    ]);
  });
});

describe('R3 GET /v1/subnets', () => {
  test('R3a per entry: totals (exact, as strings), allocated, reserved, free, orphaned', async () => {
    await boundSts('web-0');
    await boundSts('db-0', 'b1', 'db');
    await createObject('10.0.100.16', 'pool__reserved-for-node_', { reserved: '' });
    await createObject('10.0.100.200', 'sts_ns1_old_old-0');
    await createObject('192.168.50.5', 'sts_ns1_old_old-1');
    const { status, body } = await get('/v1/subnets');
    expect(status).toBe(200);
    expect(body).toEqual({
      code: 200,
      message: '',
      content: {
        entries: [
          {
            entry: 0,
            family: 4,
            subnet: '10.0.100.0/24',
            firstIP: '10.0.100.2',
            nodeSubnets: [A],
            total: '19',
            allocated: 2,
            reserved: 1,
            excluded: 0,
            free: '17',
            orphaned: 1,
          },
          {
            entry: 1,
            family: 6,
            subnet: 'fd00:100::/64',
            firstIP: 'fd00:100::2',
            nodeSubnets: [B],
            total: V6_SIZE.toString(),
            allocated: 1,
            reserved: 0,
            excluded: 0,
            free: (V6_SIZE - 1n).toString(),
            orphaned: 0,
          },
          {
            entry: 2,
            family: 4,
            subnet: '10.0.102.0/24',
            firstIP: '10.0.102.2',
            nodeSubnets: [C],
            total: '3',
            allocated: 0,
            reserved: 0,
            excluded: 0,
            free: '3',
            orphaned: 0,
          },
        ],
        orphaned: 2,
        orphans: ['10.0.100.200', '192.168.50.5'],
      },
    });
  });
});

// ---- POST /v1/ip

describe('R4 POST /v1/ip', () => {
  test("R4a a deleted pod's IP: galaxy's 200, the object gone, an audit Event and log line", async () => {
    const { ip } = await boundSts('web-0', 'a1', 'web', 'never');
    await world.deletePod('web-0');
    const res = await post('/v1/ip', {
      ips: [{ ip, namespace: 'ns1', appName: 'web', podName: 'web-0', appType: 'statefulset' }],
    });
    expect([res.status, res.text]).toEqual([200, '{"code":200,"message":""}']);
    expect(world.floatip.allocator.get(ip)).toBeUndefined();
    const events = await auditEvents(ip);
    expect(events).toHaveLength(1);
    expect(events[0]!.type).toBe('Normal');
    expect(events[0]!.message).toMatch(
      new RegExp(
        `^released ${ip.replace(/\./g, '\\.')} from sts_ns1_web_web-0 \\(by anonymous \\(.*127\\.0\\.0\\.1\\) via rest\\): `,
      ),
    );
  });

  test('R4b an empty appType means statefulset in the release too (docs/galaxy.md#release-empty-apptype-and-false-successes)', async () => {
    const { ip } = await boundSts('web-0', 'a1', 'web', 'never');
    await world.deletePod('web-0');
    const res = await post('/v1/ip', { ips: [{ ip, namespace: 'ns1', appName: 'web', podName: 'web-0' }] });
    expect(res.status).toBe(200);
    expect(world.floatip.allocator.get(ip)).toBeUndefined();
  });

  test("R4c refused: a pending and a running pod, a changed owner, a reserved IP, a free one, an unknown one; galaxy's reasons, floatip's details; nothing changes", async () => {
    const running = await boundSts('web-0');
    const moved = await boundSts('web-1');
    const up = await boundSts('web-2');
    await setPhase('web-2', 'Running');
    await createObject('10.0.100.16', 'pool__reserved-for-node_', { reserved: 'x' });
    const res = await post('/v1/ip', {
      ips: [
        { ip: running.ip, namespace: 'ns1', appName: 'web', podName: 'web-0' },
        { ip: up.ip, namespace: 'ns1', appName: 'web', podName: 'web-2' },
        // the caller believes web-9 holds it; web-1 does
        { ip: moved.ip, namespace: 'ns1', appName: 'web', podName: 'web-9' },
        { ip: '10.0.100.16', poolName: 'reserved-for-node' },
        // for a pod that is gone (one that exists refuses with its status first: R4i)
        { ip: '10.0.100.19', namespace: 'ns1', appName: 'web', podName: 'web-9' },
        { ip: '192.168.7.7', namespace: 'ns1', appName: 'web', podName: 'web-9' },
        { ip: '10.0.100.18' },
      ],
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      code: 202,
      message: 'Released 0 ips, 7 ips failed, please check the reasons why they failed',
      // galaxy's order: judged unreleasable first, then failed releases, each in request order
      unreleased: [running.ip, up.ip, '10.0.100.16', '10.0.100.18', moved.ip, '10.0.100.19', '192.168.7.7'],
      // galaxy's exact texts, with the pod's real phase...
      reasons: [
        'releasable is false, pod status Pending',
        'releasable is false, pod status Running',
        'releasable is false: 10.0.100.16 is reserved',
        'releasable is false, pod status ',
        'ip allocated to another pod sts_ns1_web_web-1',
        '10.0.100.19 is not allocated (already released)',
        '192.168.7.7 is not in any configured range',
      ],
      // ... and what floatip knows besides, index by index
      details: [
        `pod ns1_web-0 (uid ${running.pod.metadata!.uid}) has not finished (phase Pending)`,
        `pod ns1_web-2 (uid ${up.pod.metadata!.uid}) has not finished (phase Running)`,
        'its FloatingIP 10.0.100.16 has the label "reserved"; remove the label or the object to free it',
        'the entry names no owner: give poolName, or namespace, appName and podName',
        'the request names sts_ns1_web_web-9',
        '',
        '',
      ],
    });
    expect(world.floatip.allocator.get(running.ip)?.key).toBe('sts_ns1_web_web-0');
    expect(world.floatip.allocator.get(moved.ip)?.key).toBe('sts_ns1_web_web-1');
    expect(world.floatip.allocator.get('10.0.100.16')?.reserved).toBe(true);
    expect(await auditEvents(running.ip)).toEqual([]);
  });

  test('R4d a finished pod, and a newer pod of the same name, keep their IPs while they exist (galaxy’s rule)', async () => {
    const done = await boundSts('web-0', 'a1', 'web', 'never');
    await setPhase('web-0', 'Failed');
    // web-1 as it is when its old pod's deletion has not been handled yet: the address still
    // records the old pod's UID while a new web-1 (another UID) waits to be scheduled
    const newer = await sts('web-1');
    await hold('10.0.100.12', 'sts_ns1_web_web-1', {
      ...never,
      nodeName: 'a1',
      podUid: 'uid-of-the-old-web-1',
    });
    const listed = new Map(
      ((await get('/v1/ip?size=50')).body.content as Json[]).map((i) => [i.ip as string, i] as const),
    );
    expect([listed.get(done.ip)?.status, listed.get(done.ip)?.releasable]).toEqual(['Failed', undefined]);
    expect([listed.get('10.0.100.12')?.status, listed.get('10.0.100.12')?.releasable]).toEqual([
      'Pending',
      undefined,
    ]);
    const res = await post('/v1/ip', {
      ips: [
        { ip: done.ip, namespace: 'ns1', appName: 'web', podName: 'web-0' },
        { ip: '10.0.100.12', namespace: 'ns1', appName: 'web', podName: 'web-1' },
      ],
    });
    expect([res.status, res.body]).toEqual([
      202,
      {
        code: 202,
        message: 'Released 0 ips, 2 ips failed, please check the reasons why they failed',
        unreleased: [done.ip, '10.0.100.12'],
        reasons: ['releasable is false, pod status Failed', 'releasable is false, pod status Pending'],
        details: [
          `pod ns1_web-0 (uid ${done.pod.metadata?.uid}) has finished (phase Failed) but still exists: its owner may re-create it with this address; delete the pod first`,
          `pod ns1_web-1 exists (uid ${newer.metadata?.uid}, a newer pod than the uid uid-of-the-old-web-1 recorded): it reuses the address once the old one's deletion is handled`,
        ],
      },
    ]);
    expect(world.floatip.allocator.get(done.ip)?.key).toBe('sts_ns1_web_web-0');
    expect(world.floatip.allocator.get('10.0.100.12')?.key).toBe('sts_ns1_web_web-1');
    // a finished pod keeps its annotation; the consistency check is for pods that may still run
    await world.deletePod('web-0');
  });

  test('R4h an entry naming no pod, app or pool (a namespace alone included) is refused in galaxy’s words', async () => {
    const held = await boundSts('web-0');
    const res = await post('/v1/ip', { ips: [{ ip: held.ip }, { ip: held.ip, namespace: 'ns1' }] });
    expect([res.status, res.body.unreleased, res.body.reasons]).toEqual([
      202,
      [held.ip, held.ip],
      ['releasable is false, pod status ', 'releasable is false, pod status '],
    ]);
    expect(world.floatip.allocator.get(held.ip)?.key).toBe('sts_ns1_web_web-0');
  });

  test('R4i galaxy asks first whether the pod the entry names exists, then whose the address is; a pod name alone builds the empty key', async () => {
    const held = await boundSts('web-0');
    const other = await sts('web-1');
    const res = await post('/v1/ip', {
      ips: [
        // web-1 exists but does not hold it: galaxy refuses with web-1's status
        { ip: held.ip, namespace: 'ns1', appName: 'web', podName: 'web-1' },
        // galaxy builds the empty key from a pod name alone, which no address has
        { ip: held.ip, podName: 'web-0' },
        // a live pod named for a free address is still refused by its status
        { ip: '10.0.100.19', namespace: 'ns1', appName: 'web', podName: 'web-1' },
      ],
    });
    expect([res.status, res.body]).toEqual([
      202,
      {
        code: 202,
        message: 'Released 0 ips, 3 ips failed, please check the reasons why they failed',
        unreleased: [held.ip, '10.0.100.19', held.ip],
        reasons: [
          'releasable is false, pod status Pending',
          'releasable is false, pod status Pending',
          'ip allocated to another pod sts_ns1_web_web-0',
        ],
        details: [
          `pod ns1_web-1 (uid ${other.metadata!.uid}) exists, and ${held.ip} is held by sts_ns1_web_web-0`,
          `pod ns1_web-1 (uid ${other.metadata!.uid}) exists, and 10.0.100.19 is held by no pod`,
          'the entry names a pod without its namespace and app: the empty key',
        ],
      },
    ]);
    expect(world.floatip.allocator.get(held.ip)?.key).toBe('sts_ns1_web_web-0');
  });

  test("R4e parked addresses: an app's (appType deployment) and a pool's; mixed outcome is a 202", async () => {
    await hold('10.0.100.2', 'dp_ns1_api_');
    await hold('10.0.100.3', 'pool__p1_');
    await hold('fd00:100::7', 'pool__p1_');
    const res = await post('/v1/ip', {
      ips: [
        { ip: '10.0.100.2', namespace: 'ns1', appName: 'api', appType: 'deployment' },
        { ip: '10.0.100.3', poolName: 'p1' },
        // any textual form of an IPv6 address
        { ip: 'FD00:100:0::7', poolName: 'p1' },
        { ip: '10.0.100.4', poolName: 'p1' },
      ],
    });
    expect(res.body).toEqual({
      code: 202,
      message: 'Released 3 ips, 1 ips failed, please check the reasons why they failed',
      unreleased: ['10.0.100.4'],
      reasons: ['10.0.100.4 is not allocated (already released)'],
      details: [''],
    });
    expect(world.floatip.allocator.byPrefix('pool__p1_')).toEqual([]);
    expect(await auditEvents('fd00-100--7')).toHaveLength(1);
  });

  test('R4f dryRun answers what would be released and why, and changes nothing', async () => {
    const running = await boundSts('web-0');
    await hold('10.0.100.10', 'dp_ns1_api_');
    const before = [...world.floatip.allocator.all()].map((a) => ({ ...a }));
    const request = {
      ips: [
        { ip: '10.0.100.10', namespace: 'ns1', appName: 'api', appType: 'deployment' },
        { ip: running.ip, namespace: 'ns1', appName: 'web', podName: 'web-0' },
      ],
    };
    const res = await post('/v1/ip?dryRun=true', request);
    expect(res.body).toEqual({
      code: 202,
      message: 'dry run: would release 1 ips, 1 ips would fail, please check the reasons why they would fail',
      dryRun: true,
      released: ['10.0.100.10'],
      unreleased: [running.ip],
      reasons: ['releasable is false, pod status Pending'],
      details: [`pod ns1_web-0 (uid ${running.pod.metadata!.uid}) has not finished (phase Pending)`],
    });
    const ok = await post('/v1/ip?dryRun=true', { ips: [request.ips[0]] });
    expect(ok.body).toEqual({
      code: 200,
      message: 'dry run: would release 1 ips',
      dryRun: true,
      released: ['10.0.100.10'],
    });
    expect([...world.floatip.allocator.all()].map((a) => ({ ...a }))).toEqual(before);
    expect(await auditEvents('10.0.100.10')).toEqual([]);
    // and for real
    expect((await post('/v1/ip?dryRun=false', { ips: [request.ips[0]] })).status).toBe(200);
    expect(world.floatip.allocator.get('10.0.100.10')).toBeUndefined();
  });

  test('R4k a dry run answers what the real release then does, for an address named twice too (in two spellings)', async () => {
    await hold('10.0.100.10', 'pool__p1_');
    await hold('fd00:100::7', 'pool__p1_');
    await hold('10.0.100.11', 'pool__p1_');
    const request = {
      ips: [
        { ip: '10.0.100.10', poolName: 'p1' },
        { ip: '10.0.100.10', poolName: 'p1' },
        { ip: 'fd00:100::7', poolName: 'p1' },
        { ip: 'fd00:100:0:0::7', poolName: 'p1' },
        { ip: '10.0.100.11', poolName: 'p1' },
      ],
    };
    const dry = await post('/v1/ip?dryRun=true', request);
    expect(world.floatip.allocator.get('10.0.100.10')?.key).toBe('pool__p1_');
    const real = await post('/v1/ip', request);
    expect(real.body).toEqual({
      code: 202,
      message: 'Released 3 ips, 2 ips failed, please check the reasons why they failed',
      unreleased: ['10.0.100.10', 'fd00:100:0:0::7'],
      reasons: [
        '10.0.100.10 is not allocated (already released)',
        'fd00:100::7 is not allocated (already released)',
      ],
      details: ['', ''],
    });
    const { message, dryRun, released, ...rest } = dry.body;
    const { message: realMessage, ...realRest } = real.body;
    expect([dry.status, rest]).toEqual([real.status, realRest]);
    expect(released).toEqual(['10.0.100.10', 'fd00:100::7', '10.0.100.11']);
    expect([message, realMessage, dryRun]).toEqual([
      'dry run: would release 3 ips, 2 ips would fail, please check the reasons why they would fail',
      'Released 3 ips, 2 ips failed, please check the reasons why they failed',
      true,
    ]);
  });

  test('R4g bad input: one invalid IP refuses the whole request (galaxy), bad JSON, a non-JSON body', async () => {
    await hold('10.0.100.2', 'pool__p1_');
    const res = await post('/v1/ip', { ips: [{ ip: '10.0.100.2', poolName: 'p1' }, { ip: 'not-an-ip' }] });
    expect([res.status, res.body]).toEqual([
      400,
      { code: 400, message: 'bad request: "not-an-ip" is not a valid ip (body.ips[1].ip)' },
    ]);
    expect(world.floatip.allocator.get('10.0.100.2')).toBeDefined();
    // no ip, or a null one, is an empty one to Go's decoder, which galaxy calls no valid ip
    for (const entry of [{}, { ip: null }, { ip: '' }]) {
      const empty = await post('/v1/ip', { ips: [{ ip: '10.0.100.2', poolName: 'p1' }, entry] });
      expect([entry, empty.status, empty.body]).toEqual([
        entry,
        400,
        { code: 400, message: 'bad request: "" is not a valid ip (body.ips[1].ip)' },
      ]);
    }
    // a zone is not part of an IP to Go's net.ParseIP, so galaxy refuses it like any other bad IP
    for (const ip of ['fe80::1%eth0', '::ffff:10.0.101.10%1']) {
      const zoned = await post('/v1/ip', {
        ips: [
          { ip: '10.0.100.2', poolName: 'p1' },
          { ip, poolName: 'x' },
        ],
      });
      expect([zoned.status, zoned.body]).toEqual([
        400,
        { code: 400, message: `bad request: ${JSON.stringify(ip)} is not a valid ip (body.ips[1].ip)` },
      ]);
      expect(world.floatip.allocator.get('10.0.100.2')).toBeDefined();
    }
    // quoted as Go's %q quoted it in galaxy's message, not as JSON
    expect((await post('/v1/ip', { ips: [{ ip: '10.0.100.2\u0001\u00a0' }] })).body).toEqual({
      code: 400,
      message: 'bad request: "10.0.100.2\\x01\\u00a0" is not a valid ip (body.ips[0].ip)',
    });
    // a refusal quotes the caller's value, clipped as a log line's strings are: a megabyte sent, kilobytes back
    const huge = 'x'.repeat(1 << 20);
    for (const entry of [{ ip: huge }, { ip: '10.0.100.2', poolName: 'p1', updateTime: huge }]) {
      const long = await world.rest('POST', '/v1/ip', { ips: [entry] });
      const message = (long.json as Json).message as string;
      expect(long.status).toBe(400);
      expect(message).toMatch(/^bad request: (body\.ips\[0\]\.updateTime: )?"xxxx/);
      expect(message).toMatch(/\.\.\. \(\d+ characters\)$/);
      expect(message.length).toBeLessThan(4200);
    }
    expect(world.floatip.allocator.get('10.0.100.2')).toBeDefined();
    expect((await post('/v1/ip', { ips: [{ poolName: 'p1' }] })).body).toEqual({
      code: 400,
      message: 'bad request: "" is not a valid ip (body.ips[0].ip)',
    });
    expect((await post('/v1/ip', { ips: 'all' })).body).toEqual({
      code: 400,
      message: 'bad request: body.ips: must be array',
    });
    const broken = await world.rest('POST', '/v1/ip', '{"ips": [');
    expect(broken.status).toBe(400);
    expect((broken.json as Json).message).toMatch(/^bad request: invalid JSON: /);
    const text = await world.rest('POST', '/v1/ip', 'ips=all', { 'Content-Type': 'text/plain' });
    expect([text.status, text.json]).toEqual([
      415,
      { code: 415, message: 'unsupported media type: POST /v1/ip takes application/json, not text/plain' },
    ]);
    const untyped = await fetch(`${world.floatip.apiUrl}/v1/ip`, { method: 'POST', body: '{"ips":[]}' });
    expect([untyped.status, await untyped.json()]).toEqual([
      415,
      {
        code: 415,
        message: 'unsupported media type: POST /v1/ip takes application/json, not text/plain;charset=UTF-8',
      },
    ]);
    // no body and no Content-Type: galaxy's framework skips to its Accept check and answers 406
    for (const path of ['/v1/ip', '/v1/pool']) {
      const empty = await world.rest('POST', path);
      expect([empty.status, empty.json]).toEqual([
        406,
        {
          code: 406,
          message: `not acceptable: POST ${path} takes a JSON body (application/json), and the request has none`,
        },
      ]);
    }
    // null is JSON, but no request
    for (const body of ['null', '[]', '5']) {
      expect((await world.rest('POST', '/v1/ip', body)).json).toEqual({
        code: 400,
        message: 'bad request: body: must be object',
      });
    }
  });

  test('R4j an IPv4-mapped IPv6 address is the IPv4 address, as galaxy (Go) reads it', async () => {
    await hold('10.0.100.3', 'pool__p1_');
    expect((await get('/v1/ip/::ffff:10.0.100.3')).body.content).toMatchObject({ ip: '10.0.100.3' });
    expect((await get('/v1/ip/::ffff:a00:6403')).body.content).toMatchObject({ ip: '10.0.100.3' });
    const res = await post('/v1/ip', { ips: [{ ip: '::ffff:10.0.100.3', poolName: 'p1' }] });
    expect([res.status, res.body]).toEqual([200, { code: 200, message: '' }]);
    expect(world.floatip.allocator.get('10.0.100.3')).toBeUndefined();
  });

  test("R4k the listed fields release does not use still have galaxy's types: a wrong one refuses the whole request; a null is no field", async () => {
    await hold('10.0.100.2', 'pool__p1_');
    const entry = { ip: '10.0.100.2', poolName: 'p1' };
    // galaxy's Go decoder: policy uint16, updateTime time.Time (RFC 3339), status string, releasable bool
    const refused: [Json, string][] = [
      [{ policy: 'x' }, 'body.ips[1].policy: must be integer'],
      [
        { policy: 1.5 },
        "body.ips[1].policy: must be integer, not 1.5 (Go's decoder reads no integer written with a fraction or an exponent)",
      ],
      [{ policy: -1 }, 'body.ips[1].policy: must be >= 0'],
      [{ policy: 65536 }, 'body.ips[1].policy: must be <= 65535'],
      [
        { updateTime: 'yesterday' },
        'body.ips[1].updateTime: "yesterday" is not an RFC 3339 time (2006-01-02T15:04:05Z07:00, as Go reads it)',
      ],
      [
        { updateTime: '2026-02-29T00:00:00Z' },
        'body.ips[1].updateTime: "2026-02-29T00:00:00Z" is not an RFC 3339 time (2006-01-02T15:04:05Z07:00, as Go reads it)',
      ],
      [
        // quoted as Go's %q, as a bad ip is, not as JSON ("\u0001")
        { updateTime: 'now\u0001' },
        'body.ips[1].updateTime: "now\\x01" is not an RFC 3339 time (2006-01-02T15:04:05Z07:00, as Go reads it)',
      ],
      [{ updateTime: 1764936000 }, 'body.ips[1].updateTime: must be string'],
      [{ status: 5 }, 'body.ips[1].status: must be string'],
      [{ releasable: 'yes' }, 'body.ips[1].releasable: must be boolean'],
    ];
    for (const [fields, message] of refused) {
      const res = await post('/v1/ip', { ips: [entry, { ip: '10.0.100.3', poolName: 'p1', ...fields }] });
      expect([res.status, res.body]).toEqual([400, { code: 400, message: `bad request: ${message}` }]);
      expect(world.floatip.allocator.get('10.0.100.2')).toBeDefined();
    }
    // a null leaves Go's field as it was: the entry is the one without it
    const nulls = {
      namespace: null,
      appName: null,
      podName: null,
      appType: null,
      policy: null,
      updateTime: null,
      status: null,
      releasable: null,
    };
    const res = await post('/v1/ip', { ips: [{ ...entry, ...nulls }] });
    expect([res.status, res.body]).toEqual([200, { code: 200, message: '' }]);
    expect(world.floatip.allocator.get('10.0.100.2')).toBeUndefined();
  });

  test('R4i an item sent back as GET /v1/ip listed it names its owner: a bare pod (appType NULL) too', async () => {
    await hold('10.0.100.5', 'NULL_ns1_NULL_x');
    await hold('10.0.100.6', 'sts_ns1_web_web-3');
    await hold('10.0.100.7', 'tapp_ns1_t_t-0');
    await hold('10.0.100.8', 'pool__p1_dp_ns1_api_api-5f7-x');
    const listed = (await get('/v1/ip?namespace=ns1')).body.content as Json[];
    expect(listed.map((i) => i.appType)).toEqual(['NULL', 'statefulset', 'tapp', 'deployment']);
    // the list's own filter reads its appType back too
    expect(ipsOf((await get('/v1/ip?namespace=ns1&appName=NULL&appType=NULL')).body)).toEqual(['10.0.100.5']);
    expect(ipsOf((await get('/v1/ip?appType=NULL')).body)).toEqual(['10.0.100.5']);
    const res = await post('/v1/ip?dryRun=true', { ips: listed });
    expect([res.status, res.body.released]).toEqual([
      200,
      ['10.0.100.5', '10.0.100.6', '10.0.100.7', '10.0.100.8'],
    ]);
    expect((await post('/v1/ip', { ips: listed })).body).toEqual({ code: 200, message: '' });
    expect(world.floatip.allocator.byPrefix('')).toEqual([]);
  });
});

// ---- pools

describe('R5 /v1/pool', () => {
  test('R5e a Pool stored with a negative, missing or huge size reads as stored (galaxy) and admits no pod if below 0; a size no integer is a 500 naming it', async () => {
    // such sizes can be stored only where galaxy's schema-less CRD is installed (floatip's refuses them)
    await world.checkAndStop();
    world = await World.start({ config: CONFIG, schemalessCrds: true });
    await world.node('a1', '10.0.1.11');
    const create = (name: string, fields: Json) =>
      world.custom.createNamespacedCustomObject({
        group: 'galaxy.k8s.io',
        version: 'v1alpha1',
        plural: 'pools',
        namespace: 'kube-system',
        body: { apiVersion: 'galaxy.k8s.io/v1alpha1', kind: 'Pool', metadata: { name }, ...fields },
      });
    await create('k5', { size: -5, preAllocateIP: false });
    await create('k6', { preAllocateIP: true });
    await create('k7', { size: 2 ** 60, preAllocateIP: false });
    await create('k8', { size: 1.5, preAllocateIP: false });
    await create('k9', { size: '4', preAllocateIP: false });
    for (const [name, size, preAllocateIP] of [
      ['k5', -5, false],
      ['k6', 0, true],
      ['k7', 2 ** 60, false],
    ] as const) {
      const res = await get(`/v1/pool/${name}`);
      expect([res.status, res.body]).toEqual([
        200,
        { code: 200, message: '', pool: { name, size, preAllocateIP } },
      ]);
    }
    for (const [name, written] of [
      ['k8', '1.5'],
      ['k9', '"4"'],
    ]) {
      const res = await get(`/v1/pool/${name}`);
      expect([res.status, res.body]).toEqual([
        500,
        {
          code: 500,
          message: `server error: pool ${name}: size ${written} is not an integer, and a Pool's size must be one (it admits no pod until the object is fixed)`,
        },
      ]);
    }
    // allocation: below 0 or unreadable, no pod of the pool gets an address (galaxy: used >= size)
    await world.deployment('api', 3);
    const owner = { kind: 'ReplicaSet', name: 'api-5d8f7c9b4' };
    // the unreadable one says why its limit is 0 while kubectl shows 1.5
    for (const [pool, refusal] of [
      ['k5', 'reached pool k5 size limit of -5'],
      [
        'k8',
        'reached pool k8 size limit of 0 (its stored size 1.5 is not an integer, so the pool admits no pod until the Pool object is fixed)',
      ],
    ] as const) {
      const pod = await world.pod({ name: `api-5d8f7c9b4-${pool}`, owner, pool });
      await eventually(
        `pool ${pool} to reach floatip`,
        async () => (await world.filter(pod, ['a1'])).error === refusal,
      );
      expect(await world.bind(pod, 'a1')).toBe(refusal);
    }
    const huge = await world.pod({ name: 'api-5d8f7c9b4-k7', owner, pool: 'k7' });
    await eventually('pool k7 to reach floatip', async () => (await world.filter(huge, ['a1'])).error === '');
    expect(await world.bind(huge, 'a1')).toBe('');
  });

  test('R5a create, read, update, delete, in the pool namespace; 404s in the envelope', async () => {
    const created = await post('/v1/pool', { name: 'sample-pool', size: 4 });
    expect([created.status, created.text]).toEqual([200, '{"code":200,"message":""}']);
    expect((await get('/v1/pool/sample-pool')).text).toBe(
      '{"code":200,"message":"","pool":{"name":"sample-pool","size":4,"preAllocateIP":false}}',
    );
    const object = (await world.custom.getNamespacedCustomObject({
      group: 'galaxy.k8s.io',
      version: 'v1alpha1',
      namespace: 'kube-system',
      plural: 'pools',
      name: 'sample-pool',
    })) as Json;
    expect([object.size, object.preAllocateIP]).toEqual([4, false]);
    expect((await post('/v1/pool', { name: 'sample-pool', size: 6 })).status).toBe(200);
    expect((await get('/v1/pool/sample-pool')).body.pool).toEqual({
      name: 'sample-pool',
      size: 6,
      preAllocateIP: false,
    });
    const deleted = await world.rest('DELETE', '/v1/pool/sample-pool');
    expect([deleted.status, deleted.text]).toEqual([200, '{"code":200,"message":""}']);
    const missing = await get('/v1/pool/sample-pool');
    expect([missing.status, missing.text]).toEqual([
      404,
      '{"code":404,"message":"not found: pool sample-pool"}',
    ]);
    const again = await world.rest('DELETE', '/v1/pool/sample-pool');
    expect([again.status, again.json]).toEqual([404, { code: 404, message: 'not found: pool sample-pool' }]);
  });

  test('R5b2 preAllocateIP counts what the pool holds, not what a pool whose name extends it after `_` holds', async () => {
    // pool__my_ is also the prefix of pool my_pool's keys: counted by prefix, my_pool's address filled my
    await world.deployment('app', 2);
    const pod = await world.pod({
      name: 'app-5d8f7c9b4-a',
      owner: { kind: 'ReplicaSet', name: 'app-5d8f7c9b4' },
      pool: 'my_pool',
    });
    expect(await world.bind(pod, 'a1')).toBe('');
    const res = await post('/v1/pool', { name: 'my', size: 2, preAllocateIP: true });
    expect([res.status, res.body]).toEqual([200, { code: 200, message: '', realPoolSize: 2 }]);
    expect(world.floatip.allocator.byKey('pool__my_')).toHaveLength(2);
    // and each pool lists its own
    const mine = world.floatip.allocator.byKey('pool__my_').map((a) => a.ip);
    expect(ipsOf((await get('/v1/ip?poolName=my')).body).sort()).toEqual(mine.sort());
    expect(ipsOf((await get('/v1/ip?poolName=my_pool')).body)).toEqual(
      await world.addressesOf(pod.metadata!.name!),
    );
  });

  test('R5b preAllocateIP parks addresses at pool__<name>_ (policy never, no node), lowest first, subnets in name order', async () => {
    const res = await post('/v1/pool', { name: 'p1', size: 3, preAllocateIP: true });
    expect([res.status, res.body]).toEqual([200, { code: 200, message: '', realPoolSize: 3 }]);
    const parked = world.floatip.allocator.byKey('pool__p1_');
    expect(parked.map((a) => [a.ip, a.policy, a.nodeName, a.podUid])).toEqual([
      ['10.0.100.2', 2, '', ''],
      ['10.0.100.3', 2, '', ''],
      ['10.0.100.4', 2, '', ''],
    ]);
    // already big enough: nothing more, nothing released
    expect((await post('/v1/pool', { name: 'p1', size: 2, preAllocateIP: true })).body).toEqual({
      code: 200,
      message: '',
      realPoolSize: 3,
    });
    // past subnet A (19 addresses) it goes on in the next node subnet by name: B, IPv6
    expect((await post('/v1/pool', { name: 'p1', size: 21, preAllocateIP: true })).body).toEqual({
      code: 200,
      message: '',
      realPoolSize: 21,
    });
    expect(
      world.floatip.allocator
        .byKey('pool__p1_')
        .filter((a) => a.ip.includes(':'))
        .map((a) => a.ip),
    ).toEqual(['fd00:100::2', 'fd00:100::3']);
    // a deployment pod of the pool takes a parked one
    const listed = await get('/v1/ip?poolName=p1&size=50');
    expect(listed.body).toMatchObject({ totalElements: 21 });
    expect((listed.body.content as Json[])[0]).toMatchObject({
      poolName: 'p1',
      policy: 2,
      status: 'Deleted',
      releasable: true,
    });
  });

  test('R5c bad pools are 400s naming the field; galaxy’s message for an empty name', async () => {
    const cases: [unknown, string][] = [
      [{ name: '' }, 'bad request: pool name is empty'],
      [{}, 'bad request: pool name is empty'],
      [{ size: 3 }, 'bad request: pool name is empty'],
      // a null leaves Go's field as it was: empty
      [{ name: null, size: 3 }, 'bad request: pool name is empty'],
      [{ name: 5 }, 'bad request: body.name: must be string'],
      [
        { name: 'Bad_Name' },
        `bad request: pool name "Bad_Name" is not a Kubernetes object name (lower-case letters, digits and '-' in parts joined by '.', each starting and ending with a letter or digit; at most 253 characters)`,
      ],
      [{ name: 'p', Size: 4 }, 'bad request: body.Size: unknown field'],
      // galaxy's decoder took Name for name; the document matches keys exactly, and says which
      [
        { Name: 'p2', size: 3 },
        'bad request: pool name is empty (body.Name is not name: fields are matched exactly)',
      ],
      [{ name: 'p', size: -1 }, 'bad request: body.size: must be >= 0'],
      [{ name: 'p', size: 'four' }, 'bad request: body.size: must be integer'],
      // JSON types are not coerced (galaxy's Go decoder refuses a string for an int too)
      [{ name: 'p', size: '4' }, 'bad request: body.size: must be integer'],
      [{ name: 'p', preAllocateIP: 'yes' }, 'bad request: body.preAllocateIP: must be boolean'],
    ];
    for (const [body, message] of cases) {
      const res = await post('/v1/pool', body);
      expect([JSON.stringify(body), res.status, res.body]).toEqual([
        JSON.stringify(body),
        400,
        { code: 400, message },
      ]);
    }
  });
});

describe('R5 /v1/pool when addresses run out', () => {
  test("R5d galaxy's 202 No enough IPs, with how many it got; then, with no free address anywhere, at once", async () => {
    // without the IPv6 /64, 19 + 3 addresses in all
    await world.core.patchNamespacedConfigMap(
      {
        name: 'floatingip-config',
        namespace: 'kube-system',
        body: { data: { floatingips: JSON.stringify([CONFIG[0], CONFIG[2]]) } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await eventually('the new configuration', async () => world.floatip.allocator.stats().length === 2);
    const res = await post('/v1/pool', { name: 'big', size: 30, preAllocateIP: true });
    expect([res.status, res.text]).toEqual([202, '{"code":202,"message":"No enough IPs","realPoolSize":22}']);
    expect(
      world.floatip.allocator
        .byKey('pool__big_')
        .map((a) => a.ip)
        .slice(-4),
    ).toEqual(['10.0.100.20', '10.0.102.2', '10.0.102.3', '10.0.102.4']);
    const again = await post('/v1/pool', { name: 'big', size: 5, preAllocateIP: true });
    expect([again.status, again.body]).toEqual([
      202,
      { code: 202, message: 'No enough IPs', realPoolSize: 22 },
    ]);
    // the Pool object was stored all the same
    expect((await get('/v1/pool/big')).body.pool).toEqual({ name: 'big', size: 5, preAllocateIP: true });
  });
});

// ---- meta, errors

describe('R6 the description and the errors', () => {
  test('R6a /openapi.json and /apidocs.json serve the document; /apidocs/ the UI', async () => {
    const doc = await get('/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body).toMatchObject({
      openapi: expect.stringMatching(/^3\./),
      info: { title: 'floatip REST API' },
    });
    expect((await get('/apidocs.json')).body).toEqual(doc.body);
    const ui = await world.rest('GET', '/apidocs/');
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-type')).toMatch(/text\/html/);
    expect(ui.text).toContain('swagger-ui-bundle.js');
    const init = await world.rest('GET', '/apidocs/swagger-ui-init.js');
    expect(init.text).toContain('"floatip REST API"');
  });

  test('R6c /apidocs/index.html is floatip’s page, not swagger-ui-dist’s Petstore demo; other names are the port’s 404', async () => {
    const ui = await world.rest('GET', '/apidocs/');
    const index = await world.rest('GET', '/apidocs/index.html');
    expect([index.status, index.headers.get('content-type'), index.text]).toEqual([
      200,
      expect.stringMatching(/^text\/html/),
      ui.text,
    ]);
    // the demo's initializer, should a cached demo page ask for it, starts floatip's document too
    for (const path of ['/apidocs/swagger-ui-init.js', '/apidocs/swagger-initializer.js']) {
      const init = await world.rest('GET', path);
      expect([path, init.status, init.headers.get('content-type')]).toEqual([
        path,
        200,
        expect.stringMatching(/javascript/),
      ]);
      expect(init.text).toContain('"floatip REST API"');
      expect(init.text).not.toContain('petstore');
    }
    for (const path of [
      '/apidocs/swagger-ui-bundle.js',
      '/apidocs/swagger-ui.css',
      '/apidocs/favicon-32x32.png',
    ])
      expect([path, (await world.rest('GET', path)).status]).toEqual([path, 200]);
    for (const path of [
      '/apidocs/anything.js',
      '/apidocs/package.json',
      '/apidocs/README.md',
      '/apidocs/x/',
    ]) {
      const res = await world.rest('GET', path);
      expect([res.status, res.json]).toEqual([
        404,
        { code: 404, message: `not found: no route GET ${path}` },
      ]);
    }
    // without the slash the page's relative files would be looked for at /
    const bare = await fetch(`${world.floatip.apiUrl}/apidocs?x=1`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([301, '/apidocs/?x=1']);
    const post = await world.rest('POST', '/apidocs/index.html', {});
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
  });

  test('R6d refusals made before the document’s request check are documented too: no body 406, over 5 MiB 413; a DELETE’s body is not read', async () => {
    // the World serves with validateApiResponses: an undocumented status would be a 500 naming it
    for (const path of ['/v1/ip', '/v1/pool']) {
      const none = await world.rest('POST', path);
      expect([path, none.status, none.json]).toEqual([
        path,
        406,
        {
          code: 406,
          message: `not acceptable: POST ${path} takes a JSON body (application/json), and the request has none`,
        },
      ]);
      const huge = await world.rest('POST', path, `{"name":"p1","x":"${' '.repeat(5 * 2 ** 20)}"}`);
      expect([path, huge.status, huge.json]).toEqual([
        path,
        413,
        { code: 413, message: `request entity too large: the request body is over ${5 * 2 ** 20} bytes` },
      ]);
    }
    // an operation that reads no body does not read one over the limit either (galaxy's neither)
    const huge = await world.rest('DELETE', '/v1/pool/p1', `"${' '.repeat(5 * 2 ** 20)}"`);
    const none = await world.rest('DELETE', '/v1/pool/p1');
    expect([huge.status, huge.json]).toEqual([none.status, none.json]);
    // a malformed query string is a 400 on every /v1 operation, /v1/subnets too
    expect((await world.rest('GET', '/v1/subnets?x=%zz')).status).toBe(400);
  });

  test('R6f every JSON answer is Content-Type application/json, with no charset, as galaxy’s framework writes it, and no ETag', async () => {
    await hold('10.0.100.2', 'pool__p1_');
    for (const [method, path, body] of [
      ['GET', '/v1/ip?size=1', undefined],
      ['GET', '/v1/ip/10.0.100.2', undefined],
      ['GET', '/v1/ip/10.0.100.256', undefined],
      ['GET', '/v1/nope', undefined],
      ['POST', '/v1/ip', { ips: [] }],
      ['POST', '/v1/ip', '{not json'],
      ['GET', '/v1/pool/nosuch', undefined],
    ] as const) {
      const res = await world.rest(method, path, body);
      expect([method, path, res.headers.get('content-type'), res.headers.get('etag')]).toEqual([
        method,
        path,
        'application/json',
        null,
      ]);
      expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(res.text));
    }
  });

  test('R6e an Accept that takes no JSON is a 406 on /v1 (galaxy’s framework), after 404, 405 and 415; other paths are what they are', async () => {
    await hold('10.0.100.2', 'pool__p1_');
    const status = async (method: string, path: string, accept?: string, body?: unknown) =>
      (await world.rest(method, path, body, accept === undefined ? {} : { Accept: accept })).status;
    for (const accept of [
      undefined,
      '',
      'application/json',
      '*/*',
      'application/*',
      'APPLICATION/JSON',
      'application/json; charset=utf-8',
      'text/html, application/json;q=0.9',
      'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    ])
      expect([accept, await status('GET', '/v1/ip?size=1', accept)]).toEqual([accept, 200]);
    for (const accept of [
      'application/xml',
      'text/plain',
      'text/html, application/xml;q=0.9',
      'application/json;q=0',
      'application/json;q=0, */*',
    ]) {
      const res = await world.rest('GET', '/v1/ip?size=1', undefined, { Accept: accept });
      expect([accept, res.status, res.json]).toEqual([
        accept,
        406,
        {
          code: 406,
          message: `not acceptable: GET /v1/ip answers application/json, and the request's Accept (${accept}) does not take it`,
        },
      ]);
    }
    for (const path of ['/v1/ip/10.0.100.2', '/v1/subnets', '/v1/pool/p1', '/v1/dashboard'])
      expect([path, await status('GET', path, 'application/xml')]).toEqual([path, 406]);
    // a release refused for its Accept releases nothing
    const release = { ips: [{ ip: '10.0.100.2', poolName: 'p1' }] };
    expect(await status('POST', '/v1/ip', 'application/xml', release)).toBe(406);
    expect(world.floatip.allocator.get('10.0.100.2')?.key).toBe('pool__p1_');
    // go-restful's order: no route 404, wrong method 405, a body that is not JSON 415, then Accept
    expect(await status('GET', '/v1/nothing', 'application/xml')).toBe(404);
    expect(await status('PUT', '/v1/ip', 'application/xml')).toBe(405);
    const text = await fetch(`${world.floatip.apiUrl}/v1/ip`, {
      method: 'POST',
      headers: { Accept: 'application/xml', 'Content-Type': 'text/plain' },
      body: 'x',
    });
    expect(text.status).toBe(415);
    // the metrics' text, the Swagger UI and the document do not answer to the /v1 rule
    expect(await status('GET', '/metrics', 'text/plain')).toBe(200);
    expect(await status('GET', '/apidocs/', 'text/html')).toBe(200);
    expect(await status('GET', '/openapi.json', 'application/xml')).toBe(200);
    expect(await status('GET', '/', 'text/html')).not.toBe(406);
  });

  test('R6b unknown paths 404, wrong methods 405, in the envelope', async () => {
    expect((await get('/v1/nothing')).body).toEqual({
      code: 404,
      message: 'not found: no route GET /v1/nothing',
    });
    expect((await get('/elsewhere')).body).toEqual({
      code: 404,
      message: 'not found: no route GET /elsewhere',
    });
    const put = await world.rest('PUT', '/v1/ip', {});
    expect([put.status, put.json]).toEqual([405, { code: 405, message: 'method not allowed: PUT /v1/ip' }]);
  });
});

// ---- races

describe('R7 a release racing a bind never assigns an address twice', () => {
  const ROUNDS = 12;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  // [release delay, bind delay] per round: simultaneous, each side clearly first, and near misses
  const STAGGER: [number, number][] = [
    [0, 0],
    [0, 400],
    [400, 0],
    [0, 5],
    [5, 0],
    [0, 20],
    [20, 0],
    [0, 0],
    [2, 0],
    [0, 2],
    [40, 0],
    [0, 40],
  ];
  const staggered = <T>(ms: number, work: () => Promise<T>) => sleep(ms).then(work);

  /** The lowest address of subnet A no one holds. */
  const freeInA = (): string => {
    for (let n = 2; n <= 20; n++) if (!world.floatip.allocator.get(`10.0.100.${n}`)) return `10.0.100.${n}`;
    throw new Error('subnet A is full');
  };

  // each round has its own pod (and address), so that nothing needs cleaning up between rounds
  test("R7a a deployment's parked address: released through the API while a pod of the app unparks it", async () => {
    await world.deployment('app', ROUNDS + 1);
    const outcomes = new Set<number>();
    for (let round = 0; round < ROUNDS; round++) {
      const parked = freeInA();
      await hold(parked, 'dp_ns1_app_');
      const name = `app-7f9c-${round}`;
      const pod = await world.pod({ name, owner: { kind: 'ReplicaSet', name: 'app-7f9c' }, policy: 'never' });
      const [releaseAfter, bindAfter] = STAGGER[round % STAGGER.length]!;
      const [released, bound] = await Promise.all([
        staggered(releaseAfter, () =>
          world.rest('POST', '/v1/ip', {
            ips: [{ ip: parked, namespace: 'ns1', appName: 'app', appType: 'deployment' }],
          }),
        ),
        staggered(bindAfter, () => world.bind(pod, 'a1')),
      ]);
      outcomes.add(released.status);
      expect(bound).toBe('');
      const [ip] = await world.addressesOf(name);
      // whichever came first, the pod holds its address alone, and the object says so
      expect(world.floatip.allocator.get(ip!)?.key).toBe(`dp_ns1_app_${name}`);
      expect(world.floatip.allocator.byKey(`dp_ns1_app_${name}`)).toHaveLength(1);
      if (released.status === 202) {
        expect(released.json).toMatchObject({
          reasons: [`ip allocated to another pod dp_ns1_app_${name}`],
          details: ['the request names dp_ns1_app_'],
        });
      }
      await world.expectConsistent();
    }
    // both orders happened (the staggered rounds make sure of it)
    expect([...outcomes].sort()).toEqual([200, 202]);
  });

  test("R7b a deleted pod's address: released while a new pod of the same name is created and bound", async () => {
    const outcomes = new Set<number>();
    for (let round = 0; round < ROUNDS; round++) {
      const name = `web-${round}`;
      const key = `sts_ns1_web_${name}`;
      // what is left of a never-policy StatefulSet pod that is gone: the key, no node, no UID
      const kept = freeInA();
      await hold(kept, key);
      const [releaseAfter, createAfter] = STAGGER[round % STAGGER.length]!;
      const [released, bound] = await Promise.all([
        staggered(releaseAfter, () =>
          world.rest('POST', '/v1/ip', {
            ips: [{ ip: kept, namespace: 'ns1', appName: 'web', podName: name }],
          }),
        ),
        staggered(createAfter, async () => {
          // created straight on the API server: the race includes floatip's cache catching up
          const pod = await world.core.createNamespacedPod({
            namespace: 'ns1',
            body: {
              metadata: {
                name,
                ownerReferences: [
                  {
                    apiVersion: 'apps/v1',
                    kind: 'StatefulSet',
                    name: 'web',
                    uid: 'uid-web',
                    controller: true,
                  },
                ],
              },
              spec: {
                containers: [
                  {
                    name: 'c',
                    image: 'pause',
                    resources: { requests: { [DEFAULT_RESOURCE]: '1' }, limits: { [DEFAULT_RESOURCE]: '1' } },
                  },
                ],
              },
            },
          });
          return world.bind(pod, 'a1');
        }),
      ]);
      expect(bound).toBe('');
      outcomes.add(released.status);
      if (released.status === 202) {
        expect(released.json).toMatchObject({
          reasons: ['releasable is false, pod status Pending'],
          details: [expect.stringMatching(new RegExp(`^pod ns1_${name} \\(uid .+\\) has not finished`))],
        });
      }
      const [ip] = await world.addressesOf(name);
      expect(world.floatip.allocator.get(ip!)?.key).toBe(key);
      expect(world.floatip.allocator.byKey(key)).toHaveLength(1);
      await world.expectConsistent();
    }
    expect([...outcomes].sort()).toEqual([200, 202]);
  });

  test('R7c two releases of one address: exactly one succeeds', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      await hold('10.0.100.5', 'pool__p1_');
      const request = { ips: [{ ip: '10.0.100.5', poolName: 'p1' }] };
      const answers = await Promise.all([
        post('/v1/ip', request),
        post('/v1/ip', request),
        post('/v1/ip', request),
      ]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 202, 202]);
      expect(world.floatip.allocator.get('10.0.100.5')).toBeUndefined();
    }
    expect(await auditEvents('10.0.100.5')).toHaveLength(ROUNDS);
  });
});

// ---- the hooks: authentication (identity for the audit trail) and metrics

describe('R8 hooks', () => {
  test('R8b a follower (serving false) answers reads and refuses changes with 503, an expected answer logged without an error', async () => {
    const { log, lines } = capturedLog();
    const url = await world.serveRest({
      log,
      validateResponses: true,
      notDecidingBecause: () => 'this replica does not lead; send changes to the leader',
    });
    await hold('10.0.100.7', 'pool__p1_');
    expect((await fetch(`${url}/v1/ip?poolName=p1`)).status).toBe(200);
    const write = (method: string, path: string, body?: unknown) =>
      fetch(`${url}${path}`, {
        method,
        headers: { 'Content-Type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    for (const res of [
      await write('POST', '/v1/ip', { ips: [{ ip: '10.0.100.7', poolName: 'p1' }] }),
      await write('POST', '/v1/pool', { name: 'p2' }),
      await write('DELETE', '/v1/pool/p2'),
    ]) {
      expect([res.status, await res.json()]).toEqual([
        503,
        { code: 503, message: 'service unavailable: this replica does not lead; send changes to the leader' },
      ]);
    }
    expect(world.floatip.allocator.get('10.0.100.7')?.key).toBe('pool__p1_');
    // a follower refusing is how replicas work (an operator's tool reaching the wrong one), not a
    // failure of floatip: no error-level line with a stack trace for each (the churn saw dozens)
    expect(lines.filter((l) => Number(l.level) >= 50)).toEqual([]);
  });

  test('R8a an authentication middleware names the caller in the audit trail; /metrics serves the handler', async () => {
    const { log, lines } = capturedLog();
    const url = await world.serveRest({
      log,
      validateResponses: true,
      authenticate: (req, _res, next) => {
        if (req.headers.authorization !== 'Bearer alice-token')
          throw new ApiError(401, 'a bearer token is required');
        req.identity = { user: 'alice' };
        next();
      },
      metrics: (_req, res) => {
        res.type('text/plain').send('galaxy_ip_counter{type="total"} 19\n');
      },
    });
    await hold('10.0.100.7', 'pool__p1_');
    const release = (headers: Record<string, string>) =>
      fetch(`${url}/v1/ip`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body: JSON.stringify({ ips: [{ ip: '10.0.100.7', poolName: 'p1' }] }),
      });
    const refused = await release({});
    expect([refused.status, await refused.json()]).toEqual([
      401,
      { code: 401, message: 'unauthorized: a bearer token is required' },
    ]);
    // the description and the metrics stay public
    expect((await fetch(`${url}/openapi.json`)).status).toBe(200);
    const metrics = await fetch(`${url}/metrics`);
    expect([metrics.status, await metrics.text()]).toEqual([200, 'galaxy_ip_counter{type="total"} 19\n']);
    expect((await release({ Authorization: 'Bearer alice-token' })).status).toBe(200);
    const audit = lines.find((l) => l.audit === 'release');
    expect(audit).toMatchObject({
      ip: '10.0.100.7',
      key: 'pool__p1_',
      actor: expect.stringMatching(/^alice \(.*127\.0\.0\.1\)$/),
      via: 'rest',
      reason: 'requested through POST /v1/ip (pod status Deleted)',
      msg: 'floating IP released',
    });
    const [event] = await auditEvents('10.0.100.7');
    expect(event?.message).toMatch(/by alice \(/);
  });
});
