// galaxy-ipam's own unit-test scenarios of its IPAM and storage (tkestack/galaxy:
// pkg/ipam/floatingip/{ipam_crd,ipam,store_crd,floatingip}_test.go), played as black boxes against
// floatip over the wire. galaxy's tests call its IPAM directly (AllocateInSubnet, ReleaseIPs,
// ByKeyword...); here each call is what reaches it from outside: a pod bound by kube-scheduler on a
// node of the node subnet the test names, a FloatingIP object written by galaxy or an operator, a
// REST request. The outcome is read back from the API server (FloatingIP objects), the pods'
// annotations, filter's answer and the REST API. Each test is named after the galaxy test it plays;
// a table case by its row. Where floatip answers otherwise on purpose, the README section saying so
// is cited beside the assertion.
import type { V1Pod } from '@kubernetes/client-node';
import { CNI_ARGS_ANNOTATION } from '../../src/cni/args.js';
import { DEFAULT_RESOURCE } from '../../src/pods/pod-facts.js';
import { RANGE_POOLS, ROUTABLE_POOLS } from '../galaxy/test-config.js';
import { eventually } from './helpers.js';
import { World } from './world.js';

// galaxy's test configuration (pkg/ipam/utils TestConfig as its ipam_crd_test.go uses it: 7 pools,
// 39 addresses): four routableSubnet entries, then three nodeSubnets entries, two of which serve
// node subnet 10.49.28.0/26 from two pod subnets
const CONFIG = [
  ...ROUTABLE_POOLS,
  {
    nodeSubnets: ['10.0.1.0/24', '10.0.2.0/24'],
    ips: ['10.0.70.2~10.0.70.20'],
    subnet: '10.0.70.0/24',
    gateway: '10.0.70.1',
  },
  ...RANGE_POOLS,
];

// one node in each of galaxy's node subnets (node1IPNet ... node6IPNet2; node7IPNet is node6IPNet1),
// with the node IPs its TestNodeSubnet table uses
const NODES: Record<string, string> = {
  node1: '10.49.27.0',
  node2: '10.173.13.1',
  node3: '10.180.1.2',
  node4: '10.180.1.3',
  node5a: '10.0.1.0',
  node5b: '10.0.2.4',
  node6a: '10.49.28.63',
  node6b: '10.49.29.3',
};

let world: World;
let started: number;

beforeEach(async () => {
  started = Date.now();
  world = await World.start({ config: CONFIG });
  for (const [name, ip] of Object.entries(NODES)) await world.node(name, ip);
});

afterEach(() => world.checkAndStop({ settle: true }));

// ---- helpers

type Spec = { key: string; policy: number; attribute: string };
type FipObject = {
  metadata: { name: string; labels?: Record<string, string> };
  spec: Spec & Record<string, unknown>;
};

async function objects(): Promise<FipObject[]> {
  const list = (await world.custom.listClusterCustomObject({
    group: 'galaxy.k8s.io',
    version: 'v1alpha1',
    plural: 'floatingips',
  })) as { items: FipObject[] };
  return list.items;
}

/** ip → key of every FloatingIP object in the API server. */
async function objectKeys(): Promise<Record<string, string>> {
  return Object.fromEntries((await objects()).map((o) => [o.metadata.name, o.spec.key]));
}

/** A FloatingIP object written while floatip runs (by galaxy, by an operator), once floatip holds it. */
async function written(ip: string, spec: Partial<Spec> & { key: string }, labels?: Record<string, string>) {
  await world.createFloatingIP(ip, { policy: 2, attribute: '', ...spec }, labels);
  await eventually(`${ip} to reach floatip`, async () => world.floatip.allocator.get(ip)?.key === spec.key);
}

/** Binds a pod (bare unless `owner`) to `node`; returns bind's error ('' when bound). */
async function bindTo(
  node: string,
  spec: Parameters<World['pod']>[0],
): Promise<{ pod: V1Pod; error: string }> {
  const pod = await world.pod(spec);
  return { pod, error: await world.bind(pod, node) };
}

/** Binds a bare pod to `node` and returns its one address. */
async function boundAddress(node: string, name: string): Promise<string> {
  const { error } = await bindTo(node, { name });
  expect(error).toBe('');
  const ips = await world.addressesOf(name);
  expect(ips).toHaveLength(1);
  return ips[0]!;
}

type Item = Record<string, unknown>;

async function listIPs(query: string): Promise<{ total: number; items: Item[] }> {
  const { status, json } = await world.rest('GET', `/v1/ip?${query}`);
  expect(status).toBe(200);
  const page = json as { totalElements: number; content?: Item[] };
  return { total: page.totalElements, items: page.content ?? [] };
}

async function one(ip: string): Promise<Item> {
  const { status, json } = await world.rest('GET', `/v1/ip/${ip}`);
  expect(status).toBe(200);
  return (json as { content: Item }).content;
}

type SubnetEntry = { subnet: string; total: string; free: string; allocated: number; orphaned: number };

async function subnets(): Promise<SubnetEntry[]> {
  const { status, json } = await world.rest('GET', '/v1/subnets');
  expect(status).toBe(200);
  return (json as { content: { entries: SubnetEntry[] } }).content.entries;
}

const ipOf = (o: Item) => o.ip as string;

// ---- ipam_crd_test.go

test('TestConfigurePool: the 39 configured addresses are listed free, free since the configuration was applied', async () => {
  const { total, items } = await listIPs('size=100');
  expect(total).toBe(39);
  expect(items).toHaveLength(39);
  // none allocated: no pod, no pool, no policy on any item
  expect(items.filter((i) => i.podName || i.poolName || i.policy)).toEqual([]);
  // IP ascending, as numbers (README "Compatibility with galaxy-ipam (REST)": galaxy sorts them as
  // text, 10.173.13.10 before 10.173.13.2)
  expect(items.slice(0, 3).map(ipOf)).toEqual(['10.0.70.2', '10.0.70.3', '10.0.70.4']);
  expect(items.slice(28).map(ipOf)).toEqual([
    '10.49.27.218',
    '10.173.13.2',
    '10.173.13.10',
    '10.173.13.11',
    '10.173.13.12',
    '10.173.13.13',
    '10.173.13.15',
    '10.180.154.2',
    '10.180.154.3',
    '10.180.154.7',
    '10.180.154.8',
  ]);
  const free205 = items.find((i) => i.ip === '10.49.27.205');
  expect(free205).toBeDefined();
  // galaxy: an unallocated address's updateTime is the moment ConfigurePool ran
  expect(Date.parse(free205!.updateTime as string)).toBeGreaterThanOrEqual(started - 1000);
  const entries = await subnets();
  expect(entries).toHaveLength(7);
  expect(entries.reduce((n, e) => n + Number(e.total), 0)).toBe(39);
  expect(entries.reduce((n, e) => n + Number(e.free), 0)).toBe(39);
  expect(entries.reduce((n, e) => n + e.allocated, 0)).toBe(0);
});

test('TestConfigurePoolWithAllocatedIP: a reserved object galaxy left is loaded at start for its key, and not handed out', async () => {
  await world.restartFloatip(async () => {
    // as galaxy's test writes it: reserved label, the legacy ipType label, policy 0, no attribute
    await world.createFloatingIP(
      '10.49.27.205',
      { key: 'pod2', policy: 0, attribute: '' },
      { reserved: '', ipType: 'internalIP' },
    );
  });
  expect(await one('10.49.27.205')).toMatchObject({ ip: '10.49.27.205', key: 'pod2', reserved: true });
  // galaxy's ByKeyword reads raw keys: one that names no pod (`pod2`) is listed all the same, with no
  // parts, no status, not releasable (omitted), its update time the object's (docs/galaxy.md#the-floatingip-item, docs/galaxy.md#listing-ips)
  expect((await listIPs('keyword=pod2')).items).toEqual([
    { ip: '10.49.27.205', policy: 0, updateTime: '2020-01-01T00:00:00Z' },
  ]);
  expect(await boundAddress('node1', 'p1')).toBe('10.49.27.216');
  // the object is not rewritten: galaxy's own labels and spec stay
  const obj = (await objects()).find((o) => o.metadata.name === '10.49.27.205')!;
  expect(obj.metadata.labels).toEqual({ reserved: '', ipType: 'internalIP' });
  expect(obj.spec).toMatchObject({ key: 'pod2', policy: 0, attribute: '' });
});

test('TestConfigurePoolWithAllocatedIP: odd objects galaxy left are loaded at start: an old plain attribute, none, one outside every range', async () => {
  await world.restartFloatip(async () => {
    // an older galaxy's attribute (a plain string, ipam_crd_test.go's "212"): not JSON, so no node
    // nor pod UID (docs/galaxy.md#floatingip-objects: an attribute it cannot parse is logged and left empty)
    await world.createFloatingIP('10.49.27.205', { key: 'sts_ns1_pod_pod-1', policy: 2, attribute: '212' });
    await world.createFloatingIP('10.49.27.216', { key: 'sts_ns1_pod_pod-2', policy: 1, attribute: '' });
    // outside every range: galaxy's ConfigurePool deletes the object; floatip keeps it as an orphan
    // (README "Compatibility with galaxy-ipam": removing IPs from the config ... kept as orphans)
    await world.createFloatingIP('172.16.1.145', { key: 'sts_ns1_pod_pod-3', policy: 2 });
  });
  expect(await one('10.49.27.205')).toMatchObject({
    key: 'sts_ns1_pod_pod-1',
    policy: 2,
    nodeName: '',
    podUid: '',
  });
  expect(await one('10.49.27.216')).toMatchObject({
    key: 'sts_ns1_pod_pod-2',
    policy: 1,
    nodeName: '',
    podUid: '',
  });
  expect(await one('172.16.1.145')).toMatchObject({ key: 'sts_ns1_pod_pod-3', configured: false });
  expect(await objectKeys()).toEqual({
    '10.49.27.205': 'sts_ns1_pod_pod-1',
    '10.49.27.216': 'sts_ns1_pod_pod-2',
    '172.16.1.145': 'sts_ns1_pod_pod-3',
  });
  // the attribute is left as galaxy wrote it until the address is written again
  const obj = (await objects()).find((o) => o.metadata.name === '10.49.27.205')!;
  expect(obj.spec.attribute).toBe('212');
  expect(await boundAddress('node1', 'p1')).toBe('10.49.27.217');
});

test('TestConfigurePool (a ConfigMap change): a held address removed from the ranges stays held, and is used again once configured', async () => {
  expect(await boundAddress('node1', 'p1')).toBe('10.49.27.205');
  const configure = async (ips: string[]) => {
    await world.core.replaceNamespacedConfigMap({
      name: 'floatingip-config',
      namespace: 'kube-system',
      body: {
        metadata: { name: 'floatingip-config', namespace: 'kube-system' },
        data: { floatingips: JSON.stringify([{ ...CONFIG[0], ips }, ...CONFIG.slice(1)]) },
      },
    });
  };
  const reconfigured = Date.now();
  await configure(['10.49.27.216~10.49.27.218']);
  await eventually('the new ranges to apply', async () => (await one('10.49.27.205')).configured === false);
  // galaxy's ConfigurePool deletes the object of an address no range holds, even in use; floatip
  // keeps it as an orphan (README "Compatibility with galaxy-ipam")
  expect(await objectKeys()).toEqual({ '10.49.27.205': expect.stringMatching(/_p1$/) });
  const entry = (await subnets()).find((e) => e.subnet === '10.49.27.0/24')!;
  expect(entry).toMatchObject({ total: '3', free: '3', allocated: 0, orphaned: 1 });
  const { total, items } = await listIPs('size=100');
  expect(total).toBe(39);
  // galaxy stamps every free address with the time a configuration is applied
  const free = items.find((i) => i.ip === '10.49.27.216')!;
  expect(Date.parse(free.updateTime as string)).toBeGreaterThanOrEqual(reconfigured);
  await configure(['10.49.27.205', '10.49.27.216~10.49.27.218']);
  await eventually('the old ranges to apply', async () => (await one('10.49.27.205')).configured === true);
  expect((await subnets()).find((e) => e.subnet === '10.49.27.0/24')).toMatchObject({
    total: '4',
    free: '3',
    allocated: 1,
    orphaned: 0,
  });
  expect(await boundAddress('node1', 'p2')).toBe('10.49.27.216');
});

test('TestAllocateSpecificIP: the object written for a never-policy pod: key, attribute {NodeName, Uid}, policy 2, no labels', async () => {
  await world.statefulSet('pod1', 1);
  const { pod, error } = await bindTo('node1', {
    name: 'pod1-0',
    owner: { kind: 'StatefulSet', name: 'pod1' },
    policy: 'never',
  });
  expect(error).toBe('');
  const [obj, ...more] = await objects();
  expect(more).toEqual([]);
  // galaxy's stored test expects labels {ipType: internalIP} and spec.subnet: an older galaxy; the
  // one floatip follows writes no labels, and its CRD prunes fields it does not list, spec.subnet
  // among them (docs/galaxy.md#floatingip-objects). floatip adds two labels for people
  // (docs/galaxy.md#annotations-labels-and-resource-names)
  expect(obj!.metadata.name).toBe('10.49.27.205');
  expect(obj!.metadata.labels).toEqual({ 'floatip.io/node': 'node1', 'floatip.io/pod': 'pod1-0' });
  expect(obj!.spec.subnet).toBeUndefined();
  expect({ key: obj!.spec.key, policy: obj!.spec.policy, attribute: obj!.spec.attribute }).toEqual({
    key: 'sts_ns1_pod1_pod1-0',
    policy: 2,
    attribute: JSON.stringify({ NodeName: 'node1', Uid: pod.metadata!.uid }),
  });
});

test('TestAllocateSpecificIP (ipam_test.go): an address held by one pod is not taken by another whose annotation names it', async () => {
  expect(await boundAddress('node1', 'pod1')).toBe('10.49.27.205');
  // pod2 runs on node1 with an annotation naming pod1's address (written past the scheduler): galaxy's
  // AllocateSpecificIP refuses (ErrNotUpdated), and pod1 keeps it
  await world.core.createNamespacedPod({
    namespace: 'ns1',
    body: {
      metadata: {
        name: 'pod2',
        annotations: {
          [CNI_ARGS_ANNOTATION]: JSON.stringify({
            common: { ipinfos: [{ ip: '10.49.27.205/24', vlan: 2, gateway: '10.49.27.1' }] },
          }),
        },
      },
      spec: {
        nodeName: 'node1',
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
  await world.phase('pod2', 'Running');
  await world.floatip.lifecycle.resync();
  await world.floatip.lifecycle.resync();
  await world.settle();
  expect(await objectKeys()).toEqual({ '10.49.27.205': 'NULL_ns1_NULL_pod1' });
  expect(await one('10.49.27.205')).toMatchObject({ key: 'NULL_ns1_NULL_pod1', nodeName: 'node1' });
  // the consistency check reads annotations: pod2's names an address that is not its own
  await world.deletePod('pod2');
});

/** A pod of Deployment dp (1 replica, never) bound on node1, then deleted: its address parked at the app. */
async function parkedAtApp(): Promise<string> {
  await world.deployment('dp', 1);
  const { error } = await bindTo('node1', {
    name: 'dp-xxx-yy',
    owner: { kind: 'ReplicaSet', name: 'dp-xxx' },
    policy: 'never',
  });
  expect(error).toBe('');
  const [ip] = await world.addressesOf('dp-xxx-yy');
  await world.deletePod('dp-xxx-yy');
  await world.settle();
  return ip!;
}

test('TestReserveIP: a parked address moves to the app’s key, its policy kept', async () => {
  const ip = await parkedAtApp();
  const obj = (await objects()).find((o) => o.metadata.name === ip)!;
  expect({ key: obj.spec.key, policy: obj.spec.policy }).toEqual({ key: 'dp_ns1_dp_', policy: 2 });
  expect((await listIPs('keyword=dp-xxx-yy')).items).toEqual([]);
  expect((await listIPs('keyword=dp_ns1_dp_')).items.map(ipOf)).toEqual([ip]);
});

test('TestReserveIP: both addresses a gone Deployment pod’s key holds are parked at the app’s key, policy kept, node and pod dropped', async () => {
  // galaxy refuses request_ip_range for a Deployment pod that keeps its addresses, so a key holds
  // two only as written before (an older galaxy, an operator); resync parks them together
  await world.deployment('dp', 1);
  for (const ip of ['10.49.27.205', '10.49.27.216'])
    await written(ip, {
      key: 'dp_ns1_dp_dp-xxx-yy',
      policy: 2,
      attribute: '{"NodeName":"node1","Uid":"xx1"}',
    });
  await world.floatip.lifecycle.resync();
  await world.floatip.lifecycle.resync();
  await world.settle();
  const parked = (await objects()).map((o) => ({
    ip: o.metadata.name,
    key: o.spec.key,
    policy: o.spec.policy,
    attribute: o.spec.attribute,
  }));
  expect(parked.sort((a, b) => a.ip.localeCompare(b.ip))).toEqual(
    ['10.49.27.205', '10.49.27.216'].map((ip) => ({
      ip,
      key: 'dp_ns1_dp_',
      policy: 2,
      attribute: '{"NodeName":"","Uid":""}',
    })),
  );
});

test('TestAllocateInSubnetWithKey: the next pod takes the parked address under its own key; the old key holds nothing', async () => {
  const ip = await parkedAtApp();
  const { pod, error } = await bindTo('node1', {
    name: 'dp-xxx-zz',
    owner: { kind: 'ReplicaSet', name: 'dp-xxx' },
    policy: 'never',
  });
  expect(error).toBe('');
  expect(await world.addressesOf('dp-xxx-zz')).toEqual([ip]);
  expect(await objectKeys()).toEqual({ [ip]: 'dp_ns1_dp_dp-xxx-zz' });
  const obj = (await objects()).find((o) => o.metadata.name === ip)!;
  expect(obj.spec.attribute).toBe(JSON.stringify({ NodeName: 'node1', Uid: pod.metadata!.uid }));
});

/** galaxy's allocateSomeIPs as galaxy's own IPAM would have written them, for pods that no longer exist. */
async function allocateSomeIPs(): Promise<void> {
  await written('10.49.27.205', {
    key: 'sts_ns1_pod_pod-1',
    policy: 2,
    attribute: '{"NodeName":"212","Uid":"xx1"}',
  });
  await written('10.49.27.216', {
    key: 'sts_ns1_pod_pod-2',
    policy: 1,
    attribute: '{"NodeName":"333","Uid":"xx2"}',
  });
}

const release = (ip: string, podName: string) => ({
  ip,
  namespace: 'ns1',
  appName: 'pod',
  appType: 'statefulset',
  podName,
});

test('TestRelease: releasing an address in another key’s name changes nothing; in its own key’s name frees it', async () => {
  await allocateSomeIPs();
  const mismatch = await world.rest('POST', '/v1/ip', { ips: [release('10.49.27.216', 'pod-1')] });
  expect(mismatch.status).toBe(202);
  expect(mismatch.json).toMatchObject({ unreleased: ['10.49.27.216'] });
  expect((mismatch.json as { reasons: string[] }).reasons[0]).toContain(
    'ip allocated to another pod sts_ns1_pod_pod-2',
  );
  expect(await objectKeys()).toEqual({
    '10.49.27.205': 'sts_ns1_pod_pod-1',
    '10.49.27.216': 'sts_ns1_pod_pod-2',
  });
  const match = await world.rest('POST', '/v1/ip', { ips: [release('10.49.27.216', 'pod-2')] });
  expect(match).toMatchObject({ status: 200, json: { code: 200, message: '' } });
  expect(await objectKeys()).toEqual({ '10.49.27.205': 'sts_ns1_pod_pod-1' });
  expect(await one('10.49.27.216')).toMatchObject({ key: '' });
  // what is left is galaxy's object as it was (pod1CRD)
  const [left] = await objects();
  expect(left!.spec).toMatchObject({
    key: 'sts_ns1_pod_pod-1',
    policy: 2,
    attribute: '{"NodeName":"212","Uid":"xx1"}',
  });
});

test('TestReleaseIPs: of a matching key, another key, a free address and an unknown one, only the match is released', async () => {
  await allocateSomeIPs();
  const r = await world.rest('POST', '/v1/ip', {
    ips: [
      release('10.49.27.205', 'pod-1'), // key match: released
      release('10.49.27.216', 'pod-3'), // held by pod-2: stays
      release('10.49.27.217', 'pod-4'), // free
      release('10.0.0.1', 'pod-5'), // not configured
    ],
  });
  // galaxy's IPAM reports the free and the unknown address unreleased too (with no key, and the
  // caller's), but its REST API calls them released (docs/galaxy.md#releasing-ips); floatip lists them as unreleased,
  // with why: README "Compatibility with galaxy-ipam (REST)" (unknown or already free)
  expect(r.status).toBe(202);
  expect(r.json).toMatchObject({
    unreleased: ['10.49.27.216', '10.49.27.217', '10.0.0.1'],
    reasons: [
      expect.stringContaining('ip allocated to another pod sts_ns1_pod_pod-2'),
      expect.stringContaining('10.49.27.217 is not allocated (already released)'),
      expect.stringContaining('10.0.0.1 is not in any configured range'),
    ],
  });
  // pod2CRD: the one object left is pod-2's, unchanged
  const [left, ...more] = await objects();
  expect(more).toEqual([]);
  expect(left!.metadata.name).toBe('10.49.27.216');
  expect(left!.spec).toMatchObject({
    key: 'sts_ns1_pod_pod-2',
    policy: 1,
    attribute: '{"NodeName":"333","Uid":"xx2"}',
  });
});

test('TestByKeyword: a keyword lists the allocated addresses whose key contains it, with their fresh update time', async () => {
  expect((await listIPs('keyword=od')).items).toEqual([]);
  const since = Date.now();
  const ip1 = await boundAddress('node1', 'pod1');
  const ip2 = await boundAddress('node1', 'pod2');
  expect((await listIPs('keyword=od')).items.map(ipOf).sort()).toEqual([ip1, ip2].sort());
  const { items } = await listIPs('keyword=pod2');
  expect(items).toHaveLength(1);
  expect(items[0]).toMatchObject({ ip: ip2, podName: 'pod2', namespace: 'ns1' });
  expect(Date.parse(items[0]!.updateTime as string)).toBeGreaterThanOrEqual(since - 1000);
  // nodeName and podUid recorded (checkByPrefix: not empty)
  expect(await one(ip2)).toMatchObject({ nodeName: 'node1', podUid: expect.stringMatching(/.+/) });
});

test('TestByPrefix: an app’s addresses are listed by its key prefix; a fragment of a name selects nothing', async () => {
  await allocateSomeIPs();
  await written('10.49.27.217', { key: 'sts_ns1_pod2_pod2-0', policy: 2 });
  const app = (name: string) => listIPs(`namespace=ns1&appName=${name}&appType=statefulset`);
  expect((await app('od')).items).toEqual([]);
  expect((await app('pod')).items.map(ipOf).sort()).toEqual(['10.49.27.205', '10.49.27.216']);
  expect((await app('pod2')).items.map(ipOf)).toEqual(['10.49.27.217']);
});

describe('TestAllocateInSubnet: a pod gets an address of the pod subnet serving its node’s subnet', () => {
  // galaxy's CRD test asks only for the subnet; its DB test (ipam_test.go) for the lowest address:
  // 10.173.13.2 (before 10.173.13.10: addresses are ordered as numbers) and 10.180.154.7
  // (README "How addresses are decided": the lowest free address, where galaxy's CRD IPAM picks at random)
  test.each([
    ['node2', '10.173.13.2'],
    ['node3', '10.180.154.2'],
    ['node4', '10.180.154.7'],
    ['node5a', '10.0.70.2'],
    ['node6b', '10.0.80.2'],
  ])('%s gets %s', async (node, expected) => {
    expect(await boundAddress(node, 'pod1')).toBe(expected);
  });

  test('node5IPNet1 and node5IPNet2 share one pod subnet', async () => {
    expect(await boundAddress('node5a', 'pod1')).toBe('10.0.70.2');
    expect(await boundAddress('node5b', 'pod2')).toBe('10.0.70.3');
  });

  test('a node in 10.173.14.0/24, which no entry serves, gets nothing', async () => {
    await world.node('nodex', '10.173.14.5');
    const { pod, error } = await bindTo('nodex', { name: 'pod1-1' });
    expect(error).toMatch(/^FloatingIPPlugin:NoFIPConfigNode/);
    expect((await world.filter(pod, ['nodex'])).failed).toEqual({
      nodex: 'FloatingIPPlugin:NoFIPConfigNode',
    });
    expect(await objectKeys()).toEqual({});
  });
});

test('TestNodeSubnet: which nodes have a node subnet, as filter reports them', async () => {
  await world.node('n-10.180.1.4', '10.180.1.4');
  await world.node('n-10.49.28.64', '10.49.28.64');
  await world.node('n-none');
  const pod = await world.pod({ name: 'p' });
  const r = await world.filter(pod, [...Object.keys(NODES), 'n-10.180.1.4', 'n-10.49.28.64', 'n-none']);
  expect([...r.passed].sort()).toEqual(Object.keys(NODES).sort());
  expect(r.failed).toEqual({
    'n-10.180.1.4': 'FloatingIPPlugin:NoFIPConfigNode',
    'n-10.49.28.64': 'FloatingIPPlugin:NoFIPConfigNode',
    'n-none': 'FloatingIPPlugin:UnknowNode',
  });
});

test('TestAllocateInMultipleSubnet: pods of node subnet 10.49.28.0/26 drain both pod subnets serving it', async () => {
  const got: string[] = [];
  for (let i = 0; i < 6; i++) got.push(await boundAddress('node6a', `pod${i}`));
  expect(got).toEqual(['10.0.80.2', '10.0.80.3', '10.0.80.4', '10.0.81.2', '10.0.81.3', '10.0.81.4']);
  const { error } = await bindTo('node6a', { name: 'pod6' });
  expect(error).toMatch(/^no enough available ips left/);
});

describe('TestAllocateInSubnetsAndIPRange: one address per request_ip_range group, all or nothing', () => {
  test.each([
    ['case 0: no ranges', 'node1', undefined, ['10.49.27.205']],
    ['case 1: one group 216~218', 'node1', [['10.49.27.216~10.49.27.218']], ['10.49.27.216']],
    // galaxy's row asks for 217 and 218 from two equal groups; README "Compatibility with
    // galaxy-ipam" (overlapping groups: distinct addresses via a matching) agrees here
    [
      'case 2: two equal groups 217~218',
      'node1',
      [['10.49.27.217~10.49.27.218'], ['10.49.27.217~10.49.27.218']],
      ['10.49.27.217', '10.49.27.218'],
    ],
    ['case 3: one group of two addresses', 'node1', [['10.49.27.205', '10.49.27.218']], ['10.49.27.205']],
    [
      'case 4: two single groups',
      'node1',
      [['10.49.27.205'], ['10.49.27.218']],
      ['10.49.27.205', '10.49.27.218'],
    ],
    [
      'case 5: three single groups',
      'node1',
      [['10.49.27.216'], ['10.49.27.217'], ['10.49.27.218']],
      ['10.49.27.216', '10.49.27.217', '10.49.27.218'],
    ],
    ['case 6: node1IPNet has not 10.50.0.1', 'node1', [['10.49.27.216'], ['10.50.0.1']], []],
    ['case 7: node2IPNet has not 10.49.27.216', 'node2', [['10.49.27.216']], []],
    // not galaxy's row (its choice within a group is random): lower addresses first, as numbers
    // (README "How addresses are decided")
    [
      'IPv4 order: 10.173.13.2 before 10.173.13.10',
      'node2',
      [['10.173.13.10~10.173.13.13', '10.173.13.2']],
      ['10.173.13.2'],
    ],
  ] as [string, string, string[][] | undefined, string[]][])('%s', async (_name, node, ranges, expected) => {
    const { error } = await bindTo(node, { name: 'p1', ...(ranges ? { ranges } : {}) });
    if (expected.length === 0) {
      expect(error).toMatch(/^no enough available ips left/);
      expect(await objectKeys()).toEqual({});
      return;
    }
    expect(error).toBe('');
    expect(await world.addressesOf('p1')).toEqual(expected);
    expect(Object.keys(await objectKeys()).sort()).toEqual([...expected].sort());
  });
});

test('TestAllocateInSubnetsAndIPRange2: a failed group allocates nothing; the groups’ addresses carry the pod’s policy and attributes', async () => {
  const { error } = await bindTo('node1', { name: 'p0', ranges: [['10.49.27.216'], ['10.50.0.1']] });
  expect(error).toMatch(/^no enough available ips left/);
  expect(await one('10.49.27.216')).toMatchObject({ key: '' });
  await world.statefulSet('p1', 1);
  const { pod, error: error1 } = await bindTo('node1', {
    name: 'p1-0',
    owner: { kind: 'StatefulSet', name: 'p1' },
    policy: 'immutable',
    ranges: [['10.49.27.216'], ['10.49.27.218']],
  });
  expect(error1).toBe('');
  for (const ip of ['10.49.27.216', '10.49.27.218']) {
    const obj = (await objects()).find((o) => o.metadata.name === ip)!;
    expect(obj.spec).toMatchObject({
      key: 'sts_ns1_p1_p1-0',
      policy: 1,
      attribute: JSON.stringify({ NodeName: 'node1', Uid: pod.metadata!.uid }),
    });
  }
});

test('TestByKeyAndIPRanges: a re-created pod finds its key’s address per group, in its groups’ order; a new group gets one, a group fewer leaves the rest held', async () => {
  await world.statefulSet('p1', 1);
  const spec = (ranges: string[][]) => ({
    name: 'p1-0',
    owner: { kind: 'StatefulSet', name: 'p1' },
    policy: 'never' as const,
    ranges,
  });
  const gateways = async () =>
    (
      JSON.parse((await world.readPod('p1-0')).metadata!.annotations![CNI_ARGS_ANNOTATION]!) as {
        common: { ipinfos: { gateway: string }[] };
      }
    ).common.ipinfos.map((i) => i.gateway);
  expect((await bindTo('node1', spec([['10.49.27.216'], ['10.49.27.218']]))).error).toBe('');
  expect(await world.addressesOf('p1-0')).toEqual(['10.49.27.216', '10.49.27.218']);
  await world.deletePod('p1-0');
  await world.settle();
  expect(await objectKeys()).toEqual({
    '10.49.27.216': 'sts_ns1_p1_p1-0',
    '10.49.27.218': 'sts_ns1_p1_p1-0',
  });
  // "if there is unallocated ips in ipranges": the first group (205~214) holds none of the key's
  // addresses and gets one; the other two find theirs
  const wider = spec([['10.49.27.205~10.49.27.214'], ['10.49.27.216'], ['10.49.27.218']]);
  expect((await bindTo('node1', wider)).error).toBe('');
  expect(await world.addressesOf('p1-0')).toEqual(['10.49.27.205', '10.49.27.216', '10.49.27.218']);
  expect(await gateways()).toEqual(['10.49.27.1', '10.49.27.1', '10.49.27.1']);
  expect(await objectKeys()).toEqual({
    '10.49.27.205': 'sts_ns1_p1_p1-0',
    '10.49.27.216': 'sts_ns1_p1_p1-0',
    '10.49.27.218': 'sts_ns1_p1_p1-0',
  });
  // "if iprange is small": one group of the three gets the address it names; the others stay with
  // the key, untouched (README "Compatibility with galaxy-ipam": several held addresses)
  await world.deletePod('p1-0');
  await world.settle();
  expect((await bindTo('node1', spec([['10.49.27.218']]))).error).toBe('');
  expect(await world.addressesOf('p1-0')).toEqual(['10.49.27.218']);
  expect(await objectKeys()).toEqual({
    '10.49.27.205': 'sts_ns1_p1_p1-0',
    '10.49.27.216': 'sts_ns1_p1_p1-0',
    '10.49.27.218': 'sts_ns1_p1_p1-0',
  });
});

describe('TestNodeSubnetsByKeyAndIPRanges: the node subnets request_ip_range groups allow, as filter passes them', () => {
  const all = Object.keys(NODES);
  test.each([
    ['no ranges', undefined, all],
    ['216~218', [['10.49.27.216~10.49.27.218']], ['node1']],
    ['216, 218', [['10.49.27.216'], ['10.49.27.218']], ['node1']],
    ['one group over two subnets', [['10.49.27.216', '10.173.13.10~10.173.13.13']], ['node1', 'node2']],
    [
      'two groups meeting in 10.173.13.13',
      [['10.49.27.216', '10.173.13.10~10.173.13.13'], ['10.173.13.13']],
      ['node2'],
    ],
    [
      'one group over three subnets',
      [['10.49.27.216', '10.173.13.10~10.173.13.13', '10.180.154.2']],
      ['node1', 'node2', 'node3'],
    ],
    ['two groups of two subnets', [['10.49.27.216'], ['10.173.13.10~10.173.13.13']], []],
    ['10.0.70.3~10.0.70.20', [['10.0.70.3~10.0.70.20']], ['node5a', 'node5b']],
    ['10.0.70.3, 10.0.80.2', [['10.0.70.3', '10.0.80.2']], ['node5a', 'node5b', 'node6a', 'node6b']],
  ] as [string, string[][] | undefined, string[]][])('%s', async (_name, ranges, expected) => {
    const pod = await world.pod({ name: 'p1', ...(ranges ? { ranges } : {}) });
    const r = await world.filter(pod, all);
    expect([...r.passed].sort()).toEqual([...expected].sort());
  });
});

// ---- ipam_test.go (galaxy's database IPAM; the scenarios that are not its tables' internals)

test('TestRaceCondition: pods bound at once get distinct addresses until the subnet is drained', async () => {
  const pods = await Promise.all(['p0', 'p1', 'p2', 'p3', 'p4'].map((name) => world.pod({ name })));
  const errors = await Promise.all(pods.map((pod) => world.bind(pod, 'node1')));
  expect(errors.filter((e) => e === '')).toHaveLength(4);
  expect(errors.filter((e) => e !== '')).toEqual([expect.stringMatching(/^no enough available ips left/)]);
  expect(Object.keys(await objectKeys()).sort()).toEqual([
    '10.49.27.205',
    '10.49.27.216',
    '10.49.27.217',
    '10.49.27.218',
  ]);
});

test('TestAllocateInSubnetAndQueryRoutableSubnetByKey: a drained node subnet fails filter with NoFIPLeft; the others still pass', async () => {
  for (const name of ['p1', 'p2', 'p3', 'p4']) await boundAddress('node1', name);
  const pod = await world.pod({ name: 'p5' });
  const r = await world.filter(pod, Object.keys(NODES));
  expect(r.failed).toEqual({ node1: 'FloatingIPPlugin:NoFIPLeft' });
  const entry = (await subnets()).find((e) => e.subnet === '10.49.27.0/24');
  expect(entry).toMatchObject({ free: '0', allocated: 4 });
  // p1's key keeps filter to node1 (galaxy: QueryRoutableSubnetByKey("p1") = [10.49.27.0/24])
  const p1 = await world.readPod('p1');
  expect((await world.filter(p1, Object.keys(NODES))).passed).toEqual(['node1']);
});

// ---- store_crd_test.go

test('TestAddFloatingIPEventByUser: an operator’s reserved object holds its address; one outside every range is kept aside', async () => {
  await written('10.49.27.205', { key: 'pod2', policy: 0 }, { reserved: '' });
  // held for its key, in node1's entry (galaxy's waitFor: key, reserve label, node subnets); its
  // updateTime is the object's where galaxy shows when it saw it (docs/galaxy.md "Reserved addresses")
  expect(await one('10.49.27.205')).toMatchObject({
    key: 'pod2',
    reserved: true,
    policy: 0,
    updateTime: '2020-01-01T00:00:00Z',
    network: { entry: 0, subnet: '10.49.27.0/24', gateway: '10.49.27.1', vlan: 2 },
  });
  expect(await boundAddress('node1', 'p1')).toBe('10.49.27.216');
  // galaxy logs `there is no ip 172.16.1.145 in unallocated map` and ignores it until its next
  // configuration, which deletes the object; floatip keeps an allocation outside the configuration
  // as an orphan (README "Invariants" 4, "Compatibility with galaxy-ipam": kept as orphans)
  await world.createFloatingIP('172.16.1.145', { key: 'pool__reserved-for-node_' }, { reserved: '' });
  await eventually(
    'the orphan to reach floatip',
    async () => world.floatip.allocator.get('172.16.1.145') !== undefined,
  );
  expect(await one('172.16.1.145')).toMatchObject({ key: 'pool__reserved-for-node_', configured: false });
  expect(await objectKeys()).toMatchObject({ '172.16.1.145': 'pool__reserved-for-node_' });
});

test('TestAddFloatingIPEventByIPAM: an object without the reserved label also holds its address (floatip follows every object)', async () => {
  // galaxy ignores the add event of an object without the `reserved` label (its own writes); floatip's
  // memory follows every object: README "Compatibility with galaxy-ipam" (a hand-made object's
  // address is no longer offered to pods)
  await written('10.49.27.205', { key: 'pool__reserved-for-pod_' });
  expect(await one('10.49.27.205')).toMatchObject({ key: 'pool__reserved-for-pod_', reserved: false });
  // galaxy's ByPrefix of the pool's key: the pool's addresses
  expect((await listIPs('poolName=reserved-for-pod')).items.map(ipOf)).toEqual(['10.49.27.205']);
  expect(await boundAddress('node1', 'p1')).toBe('10.49.27.216');
});

test('TestDeleteFloatingIPEvent: deleting an operator’s reserved object frees its address', async () => {
  await written('10.49.27.205', { key: 'pool__reserved-for-node_' }, { reserved: '' });
  expect(await one('10.49.27.205')).toMatchObject({ key: 'pool__reserved-for-node_', reserved: true });
  await world.custom.deleteClusterCustomObject({
    group: 'galaxy.k8s.io',
    version: 'v1alpha1',
    plural: 'floatingips',
    name: '10.49.27.205',
  });
  await eventually(
    'the deletion to reach floatip',
    async () => world.floatip.allocator.get('10.49.27.205') === undefined,
  );
  expect(await one('10.49.27.205')).toMatchObject({ key: '', reserved: false });
  expect(await boundAddress('node1', 'p1')).toBe('10.49.27.205');
});

// ---- ipam_test.go: TestEmptyFloatingIPConf, in a world of its own

describe('TestEmptyFloatingIPConf', () => {
  let empty: World;
  afterEach(() => empty.checkAndStop());
  test('an empty list of floating IPs is a configuration: floatip is ready, and every node fails for want of a node subnet', async () => {
    empty = await World.start({ config: [] });
    await empty.node('node1', '10.49.27.3');
    const ready = await fetch(`${empty.floatip.extenderUrl}/readyz`);
    expect(ready.status).toBe(200);
    const pod = await empty.pod({ name: 'p1' });
    expect((await empty.filter(pod, ['node1'])).failed).toEqual({
      node1: 'FloatingIPPlugin:NoFIPConfigNode',
    });
    const { json } = await empty.rest('GET', '/v1/ip');
    expect(json).toMatchObject({ totalElements: 0 });
  });
});
