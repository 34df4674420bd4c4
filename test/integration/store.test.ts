// The FloatingIP store against the embedded API server, over real HTTP through client-node:
// objects follow decisions, conflicts and failures leave memory right, a restart rebuilds the same
// state, and objects written by others (kubectl, galaxy) take effect.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { type EmbeddedApiServer, FLOATINGIP_CRD, startApiServer } from '../../src/apiserver/index.js';
import {
  type AllocationRecord,
  Allocator,
  type Attrs,
  NotAllocatedError,
  OwnerConflictError,
  ReleasePolicy,
  parsePoolConfig,
} from '../../src/ipam/index.js';
import { ensureCrds } from '../../src/kube/crds.js';
import { CustomResourceClient, KubeApiError } from '../../src/kube/custom-resources.js';
import { NotLeaderError } from '../../src/kube/leadership.js';
import { silentLogger } from '../../src/log.js';
import {
  FLOATING_IP_PLURAL,
  GROUP,
  VERSION,
  fromFloatingIPObject,
} from '../../src/store/floating-ip-object.js';
import { FloatingIPStore, type ObjectProblem } from '../../src/store/floating-ip-store.js';
import { eventually, kubectl, useSchemalessCrd, waitFor } from './helpers.js';

const NODES = '10.0.1.0/24';
const CONFIG = parsePoolConfig([
  {
    nodeSubnets: [NODES],
    ips: ['10.0.100.10~10.0.100.20'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
    vlan: 3,
  },
  {
    nodeSubnets: [NODES],
    ips: ['fd00:100::10~fd00:100::20'],
    subnet: 'fd00:100::/64',
    gateway: 'fd00:100::1',
  },
]);
const FIP = { group: GROUP, version: VERSION, plural: FLOATING_IP_PLURAL };
const attrs = (nodeName = 'node-1', podUid = 'uid-1', policy = ReleasePolicy.Immutable): Attrs => ({
  policy,
  nodeName,
  podUid,
});
const v4 = { families: [4 as const] };

let server: EmbeddedApiServer;
let custom: CustomObjectsApi;
const stores: FloatingIPStore[] = [];

beforeEach(async () => {
  server = await startApiServer({ port: 0, seed: 'none', log: () => undefined });
  await ensureCrds(server.kubeConfig());
  custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
});

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.stop()));
  await server.close();
});

async function newStore(
  problems: ObjectProblem[] = [],
  freed: string[] = [],
  guard?: () => void,
): Promise<FloatingIPStore> {
  const kubeConfig = server.kubeConfig();
  const store = new FloatingIPStore(
    new CustomResourceClient(kubeConfig, FIP),
    kubeConfig,
    new Allocator(CONFIG),
    silentLogger(),
    { objectProblem: (p) => problems.push(p), freed: (ip) => freed.push(ip) },
    guard,
  );
  stores.push(store);
  await store.start();
  return store;
}

const getObject = (name: string) =>
  custom.getClusterCustomObject({ ...FIP, name }) as Promise<{
    metadata: { labels?: Record<string, string>; resourceVersion: string };
    spec: { key: string; attribute: string; policy: number; updateTime: string };
  }>;

async function objectNames(): Promise<string[]> {
  const list = (await custom.listClusterCustomObject(FIP)) as { items: { metadata: { name: string } }[] };
  return list.items.map((o) => o.metadata.name).sort();
}

/** The fields of an allocation, as a comparable line. */
const line = (a: AllocationRecord) =>
  `${a.ip} ${a.key} ${a.policy} ${a.nodeName} ${a.podUid} ${a.updateTime} ${a.reserved}`;

/**
 * Memory and the API server agree: the same addresses, keys, policies, nodes, UIDs, times; an object
 * floatip cannot read, named as its address, as the record that holds its address aside.
 */
async function expectInStep(store: FloatingIPStore): Promise<void> {
  const list = (await custom.listClusterCustomObject(FIP)) as { items: unknown[] };
  const objects = list.items.flatMap((o) => {
    const decoded = fromFloatingIPObject(o);
    const record = decoded.ok ? decoded.record : decoded.aside;
    return record ? [line(record)] : [];
  });
  const memory = [...store.allocator.all()].map(line);
  expect(memory.sort()).toEqual(objects.sort());
}

test('allocate records an object per address, with galaxy’s fields; dual stack names IPv6 safely', async () => {
  const store = await newStore();
  const got = await store.allocate({ key: 'sts_ns1_web_web-0', nodeSubnet: NODES, attrs: attrs() });
  expect(got.map((a) => a.ip)).toEqual(['10.0.100.10', 'fd00:100::10']);
  const object = await getObject('10.0.100.10');
  expect(object.spec).toEqual({
    key: 'sts_ns1_web_web-0',
    attribute: '{"NodeName":"node-1","Uid":"uid-1"}',
    policy: 1,
    updateTime: new Date(got[0]!.updateTime).toISOString(),
  });
  expect((await getObject('fd00-100--10')).spec.key).toBe('sts_ns1_web_web-0');
  await expectInStep(store);
});

test('rekey and update change the object and floatip’s labels, keep the others; release deletes it', async () => {
  const store = await newStore();
  const [a] = await store.allocate({ key: 'dp_ns1_app_app-1', nodeSubnet: NODES, attrs: attrs(), ...v4 });
  expect((await getObject(a!.ip)).metadata.labels).toEqual({
    'floatip.io/node': 'node-1',
    'floatip.io/pod': 'app-1',
  });
  await custom.patchClusterCustomObject(
    { ...FIP, name: a!.ip, body: { metadata: { labels: { team: 'blue' } } } },
    (await import('@kubernetes/client-node')).setHeaderOptions(
      'Content-Type',
      'application/merge-patch+json',
    ),
  );
  await waitFor('the label change to reach the store', () => true);
  const parked = await store.rekey(
    a!.ip,
    { key: 'dp_ns1_app_app-1' },
    'dp_ns1_app_',
    attrs('', '', ReleasePolicy.Never),
  );
  expect(parked.key).toBe('dp_ns1_app_');
  let object = await getObject(a!.ip);
  expect(object.spec).toMatchObject({ key: 'dp_ns1_app_', attribute: '{"NodeName":"","Uid":""}', policy: 2 });
  expect(object.metadata.labels).toEqual({ team: 'blue' });
  await store.update(a!.ip, { key: 'dp_ns1_app_' }, attrs('node-2', 'uid-2', ReleasePolicy.Never));
  object = await getObject(a!.ip);
  expect(object.spec.attribute).toBe('{"NodeName":"node-2","Uid":"uid-2"}');
  // a parked key names no pod
  expect(object.metadata.labels).toEqual({ team: 'blue', 'floatip.io/node': 'node-2' });
  await store.rekey(a!.ip, { key: 'dp_ns1_app_' }, 'dp_ns1_app_app-2', attrs('node-3', 'uid-3'));
  expect((await getObject(a!.ip)).metadata.labels).toEqual({
    team: 'blue',
    'floatip.io/node': 'node-3',
    'floatip.io/pod': 'app-2',
  });
  await store.release(a!.ip, { key: 'dp_ns1_app_app-2' });
  expect(await objectNames()).toEqual([]);
  expect(store.allocator.get(a!.ip)).toBeUndefined();
});

test('a 409 on update re-reads, plans again and ends correct', async () => {
  const store = await newStore();
  const [a] = await store.allocate({ key: 'k1', nodeSubnet: NODES, attrs: attrs(), ...v4 });
  server.faults.failNext({ verb: 'patch', resource: FLOATING_IP_PLURAL, name: a!.ip }, 409);
  const updated = await store.update(a!.ip, { key: 'k1' }, attrs('node-9', 'uid-9'));
  expect(updated.nodeName).toBe('node-9');
  expect((await getObject(a!.ip)).spec.attribute).toBe('{"NodeName":"node-9","Uid":"uid-9"}');
  await expectInStep(store);
});

test('an update racing someone else’s change refuses: the address changed hands', async () => {
  const store = await newStore();
  const [a] = await store.allocate({ key: 'k1', nodeSubnet: NODES, attrs: attrs(), ...v4 });
  // someone else re-keys the object behind the store's back, and the store has not seen it yet
  server.faults.delayNext({ verb: 'watch', resource: FLOATING_IP_PLURAL }, 1000);
  server.faults.dropWatches();
  await new Promise((r) => setTimeout(r, 50));
  const object = await getObject(a!.ip);
  await custom.replaceClusterCustomObject({
    ...FIP,
    name: a!.ip,
    body: { ...object, spec: { ...object.spec, key: 'someone-else' } },
  });
  await expect(store.update(a!.ip, { key: 'k1' }, attrs('node-9', 'uid-9'))).rejects.toThrow(
    OwnerConflictError,
  );
  expect(store.allocator.get(a!.ip)?.key).toBe('someone-else');
  expect((await getObject(a!.ip)).spec.key).toBe('someone-else');
});

test('a 409 on delete re-reads and tries again; nothing is lost or duplicated', async () => {
  const store = await newStore();
  const [a, b] = [
    ...(await store.allocate({ key: 'k1', nodeSubnet: NODES, attrs: attrs(), ...v4 })),
    ...(await store.allocate({ key: 'k2', nodeSubnet: NODES, attrs: attrs(), ...v4 })),
  ];
  server.faults.failNext({ verb: 'delete', resource: FLOATING_IP_PLURAL, name: a!.ip }, 409);
  await store.release(a!.ip, { key: 'k1' });
  expect(await objectNames()).toEqual([b!.ip]);
  await expectInStep(store);
});

test('a change and a release turned away with 429 (the API server busy, Retry-After: 1) are sent again after the wait, as galaxy’s client-go sends them', async () => {
  const store = await newStore();
  const [a] = await store.allocate({ key: 'k1', nodeSubnet: NODES, attrs: attrs(), ...v4 });
  server.faults.failNext({ verb: 'patch', resource: FLOATING_IP_PLURAL, name: a!.ip }, 429);
  let started = Date.now();
  expect((await store.update(a!.ip, { key: 'k1' }, attrs('node-9', 'uid-9'))).nodeName).toBe('node-9');
  expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  expect((await getObject(a!.ip)).spec.attribute).toBe('{"NodeName":"node-9","Uid":"uid-9"}');
  server.faults.failNext({ verb: 'delete', resource: FLOATING_IP_PLURAL, name: a!.ip }, 429);
  started = Date.now();
  await store.release(a!.ip, { key: 'k1' });
  expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  expect(await objectNames()).toEqual([]);
  await expectInStep(store);
});

test('a replica that stops leading while a 429’s wait runs sends nothing more: the address stays held', async () => {
  let leading = true;
  const store = await newStore([], [], () => {
    if (!leading) throw new NotLeaderError('kube-system/galaxy-ipam', 'me', 'them', 'the Lease was lost');
  });
  const [a] = await store.allocate({ key: 'k1', nodeSubnet: NODES, attrs: attrs(), ...v4 });
  server.faults.failNext({ verb: 'delete', resource: FLOATING_IP_PLURAL, name: a!.ip }, 429);
  const released = store.release(a!.ip, { key: 'k1' }).catch((e: unknown) => e);
  await new Promise((r) => setTimeout(r, 300));
  leading = false;
  expect(await released).toBeInstanceOf(NotLeaderError);
  expect(await objectNames()).toEqual([a!.ip]);
  expect(store.allocator.get(a!.ip)?.key).toBe('k1');
});

test('a 500 on create leaves memory unchanged and the caller gets the error', async () => {
  const store = await newStore();
  server.faults.failNext({ verb: 'create', resource: FLOATING_IP_PLURAL }, 500);
  await expect(store.allocate({ key: 'k1', nodeSubnet: NODES, attrs: attrs(), ...v4 })).rejects.toThrow(
    KubeApiError,
  );
  expect(store.allocator.size).toBe(0);
  expect(await objectNames()).toEqual([]);
  // and the next allocation gets the same lowest address
  expect((await store.allocate({ key: 'k1', nodeSubnet: NODES, attrs: attrs(), ...v4 }))[0]!.ip).toBe(
    '10.0.100.10',
  );
});

test('dual stack is all or nothing: a failed IPv6 create deletes the IPv4 object again', async () => {
  const store = await newStore();
  server.faults.failNext({ verb: 'create', resource: FLOATING_IP_PLURAL, name: 'fd00-100--10' }, 500);
  await expect(store.allocate({ key: 'k1', nodeSubnet: NODES, attrs: attrs() })).rejects.toThrow(
    KubeApiError,
  );
  expect(store.allocator.size).toBe(0);
  expect(await objectNames()).toEqual([]);
});

test('an address taken behind the store’s back is learnt, and allocate moves on to the next one', async () => {
  const store = await newStore();
  // an object the store cannot have seen yet: its watch is cut and the next one held up
  server.faults.delayNext({ verb: 'watch', resource: FLOATING_IP_PLURAL }, 1000);
  server.faults.dropWatches();
  await new Promise((r) => setTimeout(r, 50));
  await custom.createClusterCustomObject({
    ...FIP,
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'FloatingIP',
      metadata: { name: '10.0.100.10' },
      spec: { key: 'other', attribute: '', policy: 0, updateTime: '2024-01-01T00:00:00Z' },
    },
  });
  const [got] = await store.allocate({ key: 'k1', nodeSubnet: NODES, attrs: attrs(), ...v4 });
  expect(got!.ip).toBe('10.0.100.11');
  expect(store.allocator.get('10.0.100.10')?.key).toBe('other');
  await expectInStep(store);
});

test('an object deleted by someone else while the store writes it: the address is free, and said to be', async () => {
  const freed: string[] = [];
  const store = await newStore([], freed);
  const [a] = await store.allocate({ key: 'k1', nodeSubnet: NODES, attrs: attrs(), families: [4] });
  // the store's patch waits; meanwhile someone deletes the object (kubectl delete fip)
  server.faults.delayNext({ verb: 'patch', resource: FLOATING_IP_PLURAL, name: a!.ip }, 300);
  const update = store.update(a!.ip, { key: 'k1' }, attrs('node-2', 'uid-2'));
  await new Promise((r) => setTimeout(r, 100));
  await custom.deleteClusterCustomObject({ ...FIP, name: a!.ip });
  await expect(update).rejects.toThrow();
  await new Promise((r) => setTimeout(r, 300));
  expect(store.allocator.get(a!.ip)).toBeUndefined();
  // pods waiting for a free address of its subnet are sent back on this
  expect(freed).toEqual([a!.ip]);
});

test('a release that finds the object deleted by someone else keeps the address for a live pod running with it', async () => {
  // memory may be stale (a new leader whose watches were silent): what it thought held the address
  // is done with it, but the pod cache says another pod runs with it, as the deleted object did
  const kubeConfig = server.kubeConfig();
  const freed: string[] = [];
  const runningWith = new Map<string, { key: string; attrs: Attrs }>();
  const store = new FloatingIPStore(
    new CustomResourceClient(kubeConfig, FIP),
    kubeConfig,
    new Allocator(CONFIG),
    silentLogger(),
    { freed: (ip) => freed.push(ip), stillHeld: (a) => runningWith.get(a.ip) },
  );
  stores.push(store);
  await store.start();
  const [a] = await store.allocate({ key: 'k1', nodeSubnet: NODES, attrs: attrs(), ...v4 });
  runningWith.set(a!.ip, { key: 'k2', attrs: attrs('node-2', 'uid-2') });
  // the release's delete waits; meanwhile someone deletes the object (kubectl delete fip)
  server.faults.delayNext({ verb: 'delete', resource: FLOATING_IP_PLURAL, name: a!.ip }, 300);
  const release = store.release(a!.ip, { key: 'k1' });
  await new Promise((r) => setTimeout(r, 100));
  await custom.deleteClusterCustomObject({ ...FIP, name: a!.ip });
  await release;
  expect(store.allocator.get(a!.ip)).toMatchObject({ key: 'k2', podUid: 'uid-2', nodeName: 'node-2' });
  await eventually(
    'its object written again for k2',
    async () => (await getObject(a!.ip).catch(() => undefined))?.spec.key === 'k2',
  );
  expect(freed).toEqual([]);
  // and with no pod running with it, such a release frees the address
  const [b] = await store.allocate({ key: 'k3', nodeSubnet: NODES, attrs: attrs(), ...v4 });
  server.faults.delayNext({ verb: 'delete', resource: FLOATING_IP_PLURAL, name: b!.ip }, 300);
  const second = store.release(b!.ip, { key: 'k3' });
  await new Promise((r) => setTimeout(r, 100));
  await custom.deleteClusterCustomObject({ ...FIP, name: b!.ip });
  await second;
  expect(store.allocator.get(b!.ip)).toBeUndefined();
  expect(freed).toEqual([b!.ip]);
});

test('release of an address that changed hands or is gone is refused', async () => {
  const store = await newStore();
  const [a] = await store.allocate({ key: 'k1', nodeSubnet: NODES, attrs: attrs(), ...v4 });
  await expect(store.release(a!.ip, { key: 'k2' })).rejects.toThrow(OwnerConflictError);
  await expect(store.release('10.0.100.15', { key: 'k1' })).rejects.toThrow(NotAllocatedError);
  expect(await objectNames()).toEqual([a!.ip]);
});

test('a restart rebuilds identical state from the objects', async () => {
  const first = await newStore();
  await first.allocate({ key: 'sts_ns1_web_web-0', nodeSubnet: NODES, attrs: attrs() });
  const [p] = await first.allocate({ key: 'dp_ns1_app_app-1', nodeSubnet: NODES, attrs: attrs(), ...v4 });
  await first.rekey(p!.ip, { key: 'dp_ns1_app_app-1' }, 'dp_ns1_app_', attrs('', '', ReleasePolicy.Never));
  await first.stop();
  const second = await newStore();
  const state = (s: FloatingIPStore) => [...s.allocator.all()].map(line).sort();
  expect(state(second)).toEqual(state(first));
  expect(second.allocator.stats()).toEqual(first.allocator.stats());
});

test('galaxy-written objects load unchanged; malformed ones and ones outside the config are kept and reported', async () => {
  const galaxy = (name: string, spec: Record<string, unknown>, labels?: Record<string, string>) =>
    custom.createClusterCustomObject({
      ...FIP,
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'FloatingIP',
        metadata: { name, ...(labels ? { labels } : {}) },
        spec,
      },
    });
  await galaxy('10.0.100.12', {
    key: 'sts_ns1_pod1_pod1-0',
    attribute: '{"NodeName":"node3","Uid":"6f1c"}',
    policy: 1,
    updateTime: '2024-01-30T07:30:59Z',
  });
  await galaxy(
    '10.0.100.13',
    { key: 'pool__reserved-for-node_', policy: 2, attribute: '', updateTime: '2020-01-01T00:00:00Z' },
    { reserved: 'x' },
  );
  await galaxy('10.0.100.14', {
    key: 'dp_ns1_app_',
    attribute: '',
    policy: 2,
    updateTime: '2020-01-01T00:00:00Z',
  });
  await galaxy('10.9.9.9', {
    key: 'sts_ns1_old_old-0',
    attribute: '',
    policy: 2,
    updateTime: '2020-01-01T00:00:00Z',
  });
  await galaxy('web-0', { key: 'x', attribute: '', policy: 0, updateTime: '2020-01-01T00:00:00Z' });
  const problems: ObjectProblem[] = [];
  const store = await newStore(problems);
  expect(store.allocator.get('10.0.100.12')).toMatchObject({
    key: 'sts_ns1_pod1_pod1-0',
    nodeName: 'node3',
    podUid: '6f1c',
    policy: 1,
  });
  expect(store.allocator.get('10.0.100.13')).toMatchObject({
    reserved: true,
    key: 'pool__reserved-for-node_',
  });
  expect(store.allocator.get('10.9.9.9')).toMatchObject({ key: 'sts_ns1_old_old-0' });
  expect(store.allocator.orphaned().map((a) => a.ip)).toEqual(['10.9.9.9']);
  expect(problems.map((p) => p.name).sort()).toEqual(['10.9.9.9', 'web-0']);
  // nothing was deleted
  expect(await objectNames()).toEqual(['10.0.100.12', '10.0.100.13', '10.0.100.14', '10.9.9.9', 'web-0']);
});

test('an object floatip cannot read holds its address aside, at start and by the watch, until fixed or deleted', async () => {
  // a policy past 2 can be stored only where galaxy's schema-less CRD is installed
  await useSchemalessCrd(server, FLOATINGIP_CRD);
  const create = (name: string, spec: Record<string, unknown>) =>
    custom.createClusterCustomObject({
      ...FIP,
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'FloatingIP', metadata: { name }, spec },
    });
  const unknownPolicy = (key: string, policy: number) => ({
    key,
    attribute: '{"NodeName":"","Uid":""}',
    policy,
    updateTime: '2026-12-07T00:00:00Z',
  });
  await create('10.0.100.10', unknownPolicy('pool__zz_', 3));
  const problems: ObjectProblem[] = [];
  const freed: string[] = [];
  const store = await newStore(problems, freed);
  // listed at start: reported, and its address taken by the key it names, nobody's to use
  expect(problems).toEqual([{ name: '10.0.100.10', reason: 'spec.policy 3 is not 0, 1 or 2' }]);
  expect(store.allocator.get('10.0.100.10')).toMatchObject({ key: 'pool__zz_', reserved: true });
  const [a] = await store.allocate({ key: 'pool__p_', nodeSubnet: NODES, attrs: attrs('', ''), ...v4 });
  expect(a!.ip).toBe('10.0.100.11');
  // created while floatip runs: the watch sets it aside too
  await create('10.0.100.12', unknownPolicy('dp_ns1_app_app-1', 7));
  await waitFor('the second to be set aside', () => store.allocator.get('10.0.100.12')?.reserved === true);
  const [b] = await store.allocate({ key: 'pool__p_', nodeSubnet: NODES, attrs: attrs('', ''), ...v4 });
  expect(b!.ip).toBe('10.0.100.13');
  await expectInStep(store);
  // fixed, it is read as any object; deleted, its address is free again
  await custom.patchClusterCustomObject({
    ...FIP,
    name: '10.0.100.10',
    body: [{ op: 'replace', path: '/spec/policy', value: 2 }],
  });
  await waitFor('the fixed object to be read', () => store.allocator.get('10.0.100.10')?.reserved === false);
  expect(store.allocator.get('10.0.100.10')).toMatchObject({ key: 'pool__zz_', policy: 2 });
  await custom.deleteClusterCustomObject({ ...FIP, name: '10.0.100.12' });
  await waitFor('the deletion to free it', () => freed.includes('10.0.100.12'));
  expect(store.allocator.get('10.0.100.12')).toBeUndefined();
  await expectInStep(store);
});

test('an object under another spelling of an address neither takes it over nor frees it by its deletion', async () => {
  const create = (name: string, key: string) =>
    custom.createClusterCustomObject({
      ...FIP,
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'FloatingIP',
        metadata: { name },
        spec: { key, attribute: '', policy: 2, updateTime: '2020-01-01T00:00:00Z' },
      },
    });
  const problems: ObjectProblem[] = [];
  const freed: string[] = [];
  const store = await newStore(problems, freed);
  await create('fd00-100--14', 'NULL_ns1_NULL_alias1');
  await create('10.0.100.14', 'NULL_ns1_NULL_alias2');
  await waitFor('both to reach memory', () => store.allocator.size === 2);
  await create('fd00-100-0-0-0-0-0-14', 'NULL_evil_NULL_intruder');
  await create('0--ffff-a00-640e', 'NULL_evil_NULL_intruder');
  await waitFor('both aliases to be reported', () => problems.length === 2);
  expect(problems).toEqual([
    {
      name: 'fd00-100-0-0-0-0-0-14',
      reason: 'the name must be the address in canonical form: fd00-100--14',
    },
    { name: '0--ffff-a00-640e', reason: 'the name must be the address in canonical form: 10.0.100.14' },
  ]);
  await custom.deleteClusterCustomObject({ ...FIP, name: 'fd00-100-0-0-0-0-0-14' });
  await custom.deleteClusterCustomObject({ ...FIP, name: '0--ffff-a00-640e' });
  // the watch is in order: once a later object is in memory, the deletions have been seen
  await create('10.0.100.15', 'NULL_ns1_NULL_later');
  await waitFor('the later object to reach memory', () => store.allocator.get('10.0.100.15') !== undefined);
  expect(store.allocator.get('fd00:100::14')).toMatchObject({ key: 'NULL_ns1_NULL_alias1' });
  expect(store.allocator.get('10.0.100.14')).toMatchObject({ key: 'NULL_ns1_NULL_alias2' });
  expect(freed).toEqual([]);
  await expectInStep(store);
});

test('a reservation created with kubectl is honoured without a restart, and deleting it frees the address', async () => {
  const store = await newStore();
  const reservation = {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'FloatingIP',
    metadata: { name: '10.0.100.10', labels: { reserved: 'this-is-not-for-pods' } },
    spec: { key: 'pool__reserved-for-node_', policy: 2, attribute: '', updateTime: '2020-01-01T00:00:00Z' },
  };
  await kubectl(server, ['create'], JSON.stringify(reservation));
  await waitFor(
    'the reservation to reach memory',
    () => store.allocator.get('10.0.100.10')?.reserved === true,
  );
  const [a] = await store.allocate({ key: 'k1', nodeSubnet: NODES, attrs: attrs(), ...v4 });
  expect(a!.ip).toBe('10.0.100.11');
  await kubectl(server, ['delete', 'fip', '10.0.100.10']);
  await waitFor('the deletion to reach memory', () => store.allocator.get('10.0.100.10') === undefined);
  const [b] = await store.allocate({ key: 'k2', nodeSubnet: NODES, attrs: attrs(), ...v4 });
  expect(b!.ip).toBe('10.0.100.10');
});

test('a lost watch and an expired history lose nothing: changes made meanwhile arrive', async () => {
  const store = await newStore();
  const [a] = await store.allocate({ key: 'k1', nodeSubnet: NODES, attrs: attrs(), ...v4 });
  server.faults.dropWatches();
  await custom.deleteClusterCustomObject({ ...FIP, name: a!.ip });
  await waitFor('the deletion to reach memory', () => store.allocator.get(a!.ip) === undefined);
  // history gone: the store must list again, and see an object created meanwhile
  server.faults.failNext({ verb: 'watch', resource: FLOATING_IP_PLURAL }, 500, { times: 1 });
  server.faults.dropWatches();
  server.faults.expireHistory();
  await custom.createClusterCustomObject({
    ...FIP,
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'FloatingIP',
      metadata: { name: '10.0.100.15' },
      spec: { key: 'k9', attribute: '', policy: 0, updateTime: '2024-01-01T00:00:00Z' },
    },
  });
  await waitFor(
    'the creation to reach memory',
    () => store.allocator.get('10.0.100.15')?.key === 'k9',
    10000,
  );
  await expectInStep(store);
});

test('100 parallel allocations: distinct addresses, objects and memory one to one', async () => {
  const big = parsePoolConfig([
    {
      nodeSubnets: [NODES],
      ips: ['10.0.100.2~10.0.100.250'],
      subnet: '10.0.100.0/24',
      gateway: '10.0.100.1',
    },
  ]);
  const kubeConfig = server.kubeConfig();
  const store = new FloatingIPStore(
    new CustomResourceClient(kubeConfig, FIP),
    kubeConfig,
    new Allocator(big),
    silentLogger(),
  );
  stores.push(store);
  await store.start();
  // a few creates fail on the way: those allocations fail whole, the others are unaffected
  server.faults.failNext({ verb: 'create', resource: FLOATING_IP_PLURAL }, 500, { times: 5 });
  const results = await Promise.allSettled(
    Array.from({ length: 100 }, (_, i) =>
      store.allocate({ key: `NULL_ns_NULL_pod-${i}`, nodeSubnet: NODES, attrs: attrs() }),
    ),
  );
  const ok = results
    .filter((r) => r.status === 'fulfilled')
    .flatMap((r) => (r as PromiseFulfilledResult<{ ip: string }[]>).value);
  expect(results.filter((r) => r.status === 'rejected')).toHaveLength(5);
  expect(new Set(ok.map((a) => a.ip)).size).toBe(95);
  await expectInStep(store);
});
