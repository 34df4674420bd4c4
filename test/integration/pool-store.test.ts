// Pool objects read from their namespace and written through the store, over HTTP.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { type EmbeddedApiServer, POOL_CRD, startApiServer } from '../../src/apiserver/index.js';
import { ensureCrds } from '../../src/kube/crds.js';
import { silentLogger } from '../../src/log.js';
import { PoolStore } from '../../src/store/pool-store.js';
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
