// The store's writes against a fake API server that keeps objects by name and refuses a second
// create of a name (AlreadyExists), as the real one does. What it proves: after every write, failed
// or not, memory holds what the API server holds, including an address whose object floatip cannot
// read (the README's invariants 1, 3 and 8).
import { KubeConfig } from '@kubernetes/client-node';
import { Allocator, ReleasePolicy, parsePoolConfig } from '../../../src/ipam/index.js';
import { type CustomResourceClient, KubeApiError } from '../../../src/kube/custom-resources.js';
import { silentLogger } from '../../../src/log.js';
import { ipOfCanonicalName } from '../../../src/store/floating-ip-object.js';
import { FloatingIPStore } from '../../../src/store/floating-ip-store.js';

const NODES = '10.0.1.0/24';
const CONFIG = parsePoolConfig([
  { nodeSubnets: [NODES], ips: ['10.0.100.10~10.0.100.20'], subnet: '10.0.100.0/24', gateway: '10.0.100.1' },
  {
    nodeSubnets: [NODES],
    ips: ['fd00:100::10~fd00:100::20'],
    subnet: 'fd00:100::/64',
    gateway: 'fd00:100::1',
  },
]);

interface StoredObject {
  metadata: { name: string; resourceVersion: string; labels?: Record<string, string> };
  spec: unknown;
}

/** The few calls the store makes, on objects kept by name; nothing else is implemented. */
function fakeApi() {
  const objects = new Map<string, StoredObject>();
  let version = 100;
  const api = {
    objects,
    put(name: string, spec: unknown): void {
      objects.set(name, { metadata: { name, resourceVersion: String(++version) }, spec });
    },
    create(body: { metadata: { name: string }; spec: unknown }): Promise<unknown> {
      const name = body.metadata.name;
      if (objects.has(name)) {
        return Promise.reject(
          new KubeApiError(
            409,
            'AlreadyExists',
            `create floatingips.galaxy.k8s.io "${name}": already exists`,
          ),
        );
      }
      api.put(name, body.spec);
      return Promise.resolve(structuredClone(objects.get(name)));
    },
    get(name: string): Promise<unknown> {
      const o = objects.get(name);
      return Promise.resolve(o && structuredClone(o));
    },
    delete(name: string, resourceVersion?: string): Promise<void> {
      const o = objects.get(name);
      if (!o) return Promise.reject(new KubeApiError(404, 'NotFound', `"${name}" not found`));
      if (resourceVersion !== undefined && o.metadata.resourceVersion !== resourceVersion) {
        return Promise.reject(new KubeApiError(409, 'Conflict', `"${name}": precondition failed`));
      }
      objects.delete(name);
      return Promise.resolve();
    },
  };
  return api;
}

function newStore(api: ReturnType<typeof fakeApi>): FloatingIPStore {
  // the watch is never started: every change of memory here is the writes' own
  return new FloatingIPStore(
    api as unknown as CustomResourceClient,
    new KubeConfig(),
    new Allocator(CONFIG),
    silentLogger(),
  );
}

/** An object of galaxy's shape with a release policy floatip does not know (galaxy has 0, 1, 2). */
const unknownPolicy = (key: string, policy: number) => ({
  key,
  attribute: '{"NodeName":"","Uid":""}',
  policy,
  updateTime: '2026-12-07T00:00:00Z',
});

/** Memory and the API server agree: each address held by the same key, nothing more, nothing less. */
function expectInStep(store: FloatingIPStore, api: ReturnType<typeof fakeApi>): void {
  const memory = [...store.allocator.all()].map((a) => `${a.ip} ${a.key}`).sort();
  // every object here is named by its address's one name, readable or not
  const objects = [...api.objects.values()].map((o) => {
    const key = (o.spec as { key?: unknown } | undefined)?.key;
    return `${ipOfCanonicalName(o.metadata.name)} ${typeof key === 'string' ? key : ''}`;
  });
  expect(memory).toEqual(objects.sort());
}

const pool = { policy: ReleasePolicy.Never, nodeName: '', podUid: '' };

test('allocate meeting an object it cannot read takes another address, and memory keeps that one aside', async () => {
  const api = fakeApi();
  api.put('10.0.100.10', unknownPolicy('pool__zz_', 3));
  const store = newStore(api);
  const got = await store.allocate({ key: 'pool__fill2_', nodeSubnet: NODES, attrs: pool });
  expect(got.map((a) => a.ip)).toEqual(['10.0.100.11', 'fd00:100::10']);
  // one pod's worth for the pool, in memory as in the API server
  expect(store.allocator.byKey('pool__fill2_').map((a) => a.ip)).toEqual(['10.0.100.11', 'fd00:100::10']);
  // the address of the object it cannot read is taken, by the key the object names, and nobody's to use
  expect(store.allocator.get('10.0.100.10')).toMatchObject({ key: 'pool__zz_', reserved: true });
  expect(store.unreadable('10.0.100.10')).toBe('spec.policy 3 is not 0, 1 or 2');
  expect(store.unreadable('10.0.100.11')).toBeUndefined();
  expectInStep(store, api);
  // and it is never chosen again
  const next = await store.allocate({ key: 'pool__fill3_', nodeSubnet: NODES, attrs: pool });
  expect(next.map((a) => a.ip)).toEqual(['10.0.100.12', 'fd00:100::11']);
  expectInStep(store, api);
});

test('a bind meeting an unreadable object naming its very pod takes another address, not a late create', async () => {
  const api = fakeApi();
  // the same key and pod UID as the bind's, but a policy floatip cannot read: not the pod's address
  api.put('10.0.100.10', {
    key: 'sts_ns1_web_web-0',
    attribute: '{"NodeName":"node-1","Uid":"uid-1"}',
    policy: 7,
    updateTime: '2026-12-07T00:00:00Z',
  });
  const store = newStore(api);
  const attrs = { policy: ReleasePolicy.Immutable, nodeName: 'node-1', podUid: 'uid-1' };
  const got = await store.allocate({ key: 'sts_ns1_web_web-0', nodeSubnet: NODES, attrs, families: [4] });
  expect(got.map((a) => a.ip)).toEqual(['10.0.100.11']);
  expect(store.allocator.get('10.0.100.10')).toMatchObject({ reserved: true });
  expectInStep(store, api);
});

test('allocateIP of an address whose object it cannot read is refused, and memory learns it is taken', async () => {
  const api = fakeApi();
  api.put('10.0.100.15', { key: 42 });
  const store = newStore(api);
  await expect(store.allocateIP('10.0.100.15', 'pool__p_', pool)).rejects.toThrow(
    '10.0.100.15 already been allocated to FloatingIP 10.0.100.15, which names no key',
  );
  expect(store.allocator.get('10.0.100.15')).toMatchObject({ key: '', reserved: true });
  expectInStep(store, api);
});
