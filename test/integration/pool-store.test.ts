// Pool objects read from their namespace and written through the store, over HTTP.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { type EmbeddedApiServer, POOL_CRD, startApiServer } from '../../src/apiserver/index.js';
import { ensureCrds } from '../../src/kube/crds.js';
import { silentLogger } from '../../src/log.js';
import { PoolContendedError, PoolStore } from '../../src/store/pool-store.js';
import { useSchemalessCrd, waitFor } from './helpers.js';

let server: EmbeddedApiServer;
let pools: PoolStore;

beforeEach(async () => {
  server = await startApiServer({ port: 0, seed: 'none', log: () => undefined });
  await ensureCrds(server.kubeConfig());
  pools = new PoolStore(server.kubeConfig(), 'kube-system', silentLogger());
  await pools.start();
});

afterEach(async () => {
  await pools.stop();
  await server.close();
});

test('pools written by kubectl-like clients are read, odd sizes as galaxy read them; other namespaces are not', async () => {
  // odd sizes can be stored only where galaxy's schema-less CRD is installed (floatip's refuses them)
  await pools.stop();
  await useSchemalessCrd(server, POOL_CRD);
  pools = new PoolStore(server.kubeConfig(), 'kube-system', silentLogger());
  await pools.start();
  const custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
  const pool = (namespace: string, name: string, size: unknown) =>
    custom.createNamespacedCustomObject({
      group: 'galaxy.k8s.io',
      version: 'v1alpha1',
      plural: 'pools',
      namespace,
      body: {
        apiVersion: 'galaxy.k8s.io/v1alpha1',
        kind: 'Pool',
        metadata: { name },
        size,
        preAllocateIP: false,
      },
    });
  await pool('kube-system', 'p1', 4);
  await pool('default', 'p2', 4);
  await pool('kube-system', 'negative', -1);
  await pool('kube-system', 'none', undefined);
  await pool('kube-system', 'fraction', 1.5);
  await waitFor('the pools to arrive', () => pools.list().length === 4);
  expect(pools.get('p1')).toEqual({ name: 'p1', size: 4, preAllocateIP: false });
  expect(pools.get('p2')).toBeUndefined();
  // galaxy's CRDs have no minimum: a negative size is shown, and admits no pod (used >= size)
  expect(pools.get('negative')).toEqual({ name: 'negative', size: -1, preAllocateIP: false });
  expect(pools.get('none')).toEqual({ name: 'none', size: 0, preAllocateIP: false });
  expect(pools.get('fraction')).toEqual({
    name: 'fraction',
    size: 0,
    preAllocateIP: false,
    unreadable: 'size 1.5 is not an integer',
  });
});

test('put creates, then updates; delete removes and says whether there was one', async () => {
  expect(await pools.put({ name: 'p1', size: 2, preAllocateIP: true })).toEqual({
    name: 'p1',
    size: 2,
    preAllocateIP: true,
  });
  await waitFor('p1', () => pools.get('p1')?.size === 2);
  await pools.put({ name: 'p1', size: 0, preAllocateIP: false });
  await waitFor('p1 resized', () => pools.get('p1')?.size === 0);
  expect(await pools.delete('p1')).toBe(true);
  expect(await pools.delete('p1')).toBe(false);
  await waitFor('p1 gone', () => pools.get('p1') === undefined);
});

test('concurrent puts of one new pool all land (none is refused as already existing)', async () => {
  const sizes = Array.from({ length: 10 }, (_, i) => i + 1);
  const results = await Promise.allSettled(
    sizes.map((size) => pools.put({ name: 'race', size, preAllocateIP: false })),
  );
  expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
  const stored = await pools.fetch('race');
  expect(sizes).toContain(stored?.size);
});

test('a name that is not a path segment never reaches the API server: `.` is not the collection', async () => {
  await pools.put({ name: 'p1', size: 1, preAllocateIP: false });
  await pools.put({ name: 'p2', size: 2, preAllocateIP: false });
  for (const name of ['.', '..', 'a/b', '%2e', '']) {
    await expect(pools.delete(name)).rejects.toThrow(
      `delete pools.galaxy.k8s.io: invalid resource name ${JSON.stringify(name)}`,
    );
    await expect(pools.fetch(name)).rejects.toThrow(/invalid resource name/);
    await expect(pools.put({ name, size: 1, preAllocateIP: false })).rejects.toThrow(/invalid resource name/);
  }
  expect(await pools.fetch('p1')).toEqual({ name: 'p1', size: 1, preAllocateIP: false });
  expect(await pools.fetch('p2')).toEqual({ name: 'p2', size: 2, preAllocateIP: false });
});

test('a write that lost to another writer pauses before it tries again, longer each time and at a random point, and not after its last attempt', async () => {
  // writers that lost together and tried again at once lost together again, all five times
  const paused: { ms: number; faultsLeft: number; go: () => void }[] = [];
  const faultsLeft = () => server.faults.pending().reduce((n, f) => n + f.remaining, 0);
  const randoms = [0, 0.5, 0.25, 0.75];
  let leading = true;
  await pools.stop();
  pools = new PoolStore(
    server.kubeConfig(),
    'kube-system',
    silentLogger(),
    () => {
      if (!leading) throw new Error('not the leader');
    },
    {
      random: () => randoms.shift()!,
      sleep: (ms) => new Promise((go) => paused.push({ ms, faultsLeft: faultsLeft(), go })),
    },
  );
  await pools.start();
  const raced = { group: 'galaxy.k8s.io', resource: 'pools', namespace: 'kube-system', name: 'raced' };
  server.faults.failNext({ ...raced, verb: 'create' }, 409, { times: 5 });
  const put = pools.put({ name: 'raced', size: 1, preAllocateIP: false });
  put.catch(() => undefined);
  for (let i = 0; i < 4; i++) {
    await waitFor(`pause ${i + 1}`, () => paused.length === i + 1);
    // nothing is tried while the pause lasts
    await new Promise((r) => setTimeout(r, 50));
    expect(faultsLeft()).toBe(4 - i);
    paused[i]!.go();
  }
  await expect(put).rejects.toThrow(PoolContendedError);
  // the first half of 20, 40, 80, 160 ms, and a point of their upper half
  expect(paused.map(({ ms, faultsLeft }) => [ms, faultsLeft])).toEqual([
    [10, 4],
    [30, 3],
    [50, 2],
    [140, 1],
  ]);
  // a delete pauses too, and one whose replica stopped leading meanwhile tries no more
  await pools.put({ name: 'raced', size: 1, preAllocateIP: false });
  randoms.push(0);
  server.faults.failNext({ ...raced, verb: 'delete' }, 409, { times: 2 });
  const deleted = pools.delete('raced');
  deleted.catch(() => undefined);
  await waitFor('the pause', () => paused.length === 5);
  leading = false;
  paused[4]!.go();
  await expect(deleted).rejects.toThrow('not the leader');
  expect([paused[4]!.ms, faultsLeft()]).toEqual([10, 1]);
  server.faults.clear();
  expect(await pools.fetch('raced')).toEqual({ name: 'raced', size: 1, preAllocateIP: false });
});
