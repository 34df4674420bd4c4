// Deployments and StatefulSets are asked of the API server only once a decision needs them (a pod
// or an address under a release policy other than the default): a cluster whose pods all release
// on deletion never has floatip list them or follow their status changes.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Workloads } from '../../src/controller/workloads.js';
import { type Allocation, AllocationKey, ReleasePolicy } from '../../src/ipam/index.js';
import { ClusterCache } from '../../src/kube/cluster.js';
import { silentLogger } from '../../src/log.js';
import type { PoolStore } from '../../src/store/pool-store.js';
import { localKubeConfig } from './stub-api-server.js';

/**
 * An API server whose every list is empty and whose watches open and stay open, sending nothing
 * (until the test stops the caches); records each request's URL.
 */
async function apiServer() {
  const seen: string[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    seen.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url?.includes('watch=true')) {
      open.add(res);
      res.flushHeaders();
      return;
    }
    res.end(
      JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: [] }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    seen,
    kc: localKubeConfig((server.address() as AddressInfo).port),
    close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      server.close();
    },
  };
}

const workloadReads = (seen: readonly string[]) =>
  seen
    .filter((url) => /\/apis\/apps\/v1\/(deployments|statefulsets)/.test(url))
    .map(
      (url) =>
        `${/deployments/.test(url) ? 'deployments' : 'statefulsets'} ${/watch=true/.test(url) ? 'watch' : 'list'}`,
    )
    .sort();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const held = (policy: ReleasePolicy) => ({ policy }) as Allocation;

async function started() {
  const api = await apiServer();
  const cluster = new ClusterCache(api.kc, silentLogger());
  const workloads = new Workloads(api.kc, cluster, {} as PoolStore, silentLogger());
  await cluster.start();
  return {
    api,
    cluster,
    workloads,
    async stop() {
      await cluster.stop();
      api.close();
    },
  };
}

describe('workload caches followed on demand', () => {
  test('started, the cluster cache lists and watches pods and nodes, never Deployments or StatefulSets', async () => {
    const w = await started();
    try {
      await sleep(100); // the watches open after the lists
      const paths = w.api.seen.map((url) => url.split('?')[0]);
      expect(paths).toEqual(expect.arrayContaining(['/api/v1/pods', '/api/v1/nodes']));
      expect(workloadReads(w.api.seen)).toEqual([]);
      // a pod of the default policy, and addresses held under it, need no workload
      expect(w.workloads.readyFor(ReleasePolicy.PodDelete)).toBeUndefined();
      expect(
        w.workloads.followFor([held(ReleasePolicy.PodDelete), held(ReleasePolicy.PodDelete)]),
      ).toBeUndefined();
      await sleep(50);
      expect(workloadReads(w.api.seen)).toEqual([]);
      expect(w.cluster.watchingWorkloads).toBe(false);
    } finally {
      await w.stop();
    }
  });

  test.each([
    ['immutable', ReleasePolicy.Immutable],
    ['never', ReleasePolicy.Never],
  ])(
    'a pod of policy %s waits for one list of each, then they are followed and nobody waits again',
    async (_name, policy) => {
      const w = await started();
      try {
        const waiting = w.workloads.readyFor(policy);
        expect(waiting).toBeInstanceOf(Promise);
        await waiting;
        expect(w.cluster.deployments.synced && w.cluster.statefulSets.synced).toBe(true);
        // the watches open after the lists, a turn or more later on a busy machine
        for (let i = 0; i < 100 && workloadReads(w.api.seen).length < 4; i++) await sleep(20);
        expect(workloadReads(w.api.seen)).toEqual([
          'deployments list',
          'deployments watch',
          'statefulsets list',
          'statefulsets watch',
        ]);
        expect(w.workloads.readyFor(policy)).toBeUndefined();
        expect(w.workloads.followFor([held(policy)])).toBeUndefined();
        await sleep(50);
        expect(workloadReads(w.api.seen)).toHaveLength(4);
      } finally {
        await w.stop();
      }
    },
  );

  test('an address held under another policy (restored, or another replica’s) starts them too', async () => {
    const w = await started();
    try {
      await w.workloads.followFor([held(ReleasePolicy.PodDelete), held(ReleasePolicy.Never)]);
      expect(w.cluster.watchingWorkloads).toBe(true);
      expect(workloadReads(w.api.seen)).toEqual(
        expect.arrayContaining(['deployments list', 'statefulsets list']),
      );
    } finally {
      await w.stop();
    }
  });

  test('a release decision about a workload’s pod reads its caches after their first list', async () => {
    const w = await started();
    try {
      const key = AllocationKey.fromParts('dp_', 'ns1', 'app', 'app-5d8f7c9b4-a', '');
      // the Deployment does not exist: said after the list, not guessed before it
      expect(await w.workloads.factsFor(key, ReleasePolicy.Immutable)).toEqual({
        exists: false,
        replicas: 0,
      });
      expect(workloadReads(w.api.seen)).toEqual(
        expect.arrayContaining(['deployments list', 'statefulsets list']),
      );
    } finally {
      await w.stop();
    }
  });

  test('after stop, a decision that would read workloads never listed fails instead of reading empty caches', async () => {
    const w = await started();
    await w.stop();
    await expect(
      w.workloads.factsFor(
        AllocationKey.fromParts('dp_', 'ns1', 'app', 'app-1', ''),
        ReleasePolicy.Immutable,
      ),
    ).rejects.toThrow('the cluster caches are stopped');
    expect(workloadReads(w.api.seen)).toEqual([]);
  });
});
