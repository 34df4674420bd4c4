// Two floatip replicas on one API server: exactly one leads (answers the scheduler, writes, is
// ready); when it dies the other takes over within a lease duration with the same state; a leader
// that loses its lease stops writing at once.
import { CoreV1Api } from '@kubernetes/client-node';
import { type EmbeddedApiServer, startApiServer } from '../../src/apiserver/index.js';
import { GALAXY_DEFAULTS } from '../../src/config/galaxy-config.js';
import { ReleasePolicy } from '../../src/ipam/index.js';
import { NotLeaderError } from '../../src/kube/leader-election.js';
import { DEFAULT_RESOURCE } from '../../src/pods/pod-facts.js';
import { silentLogger } from '../../src/log.js';
import { type Floatip, startFloatip } from '../../src/server.js';
import { eventually } from './helpers.js';

const LEASE = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 100 };
let server: EmbeddedApiServer;
let core: CoreV1Api;
let replicas: Floatip[] = [];

beforeEach(async () => {
  server = await startApiServer({ port: 0, seed: 'none', log: () => undefined });
  core = server.kubeConfig().makeApiClient(CoreV1Api);
  for (const name of ['kube-system', 'ns1']) await core.createNamespace({ body: { metadata: { name } } });
  await core.createNamespacedConfigMap({
    namespace: 'kube-system',
    body: {
      metadata: { name: 'floatingip-config' },
      data: {
        floatingips: JSON.stringify([
          {
            nodeSubnets: ['10.0.1.0/24'],
            ips: ['10.0.100.10~10.0.100.20'],
            subnet: '10.0.100.0/24',
            gateway: '10.0.100.1',
          },
        ]),
      },
    },
  });
  await core.createNode({
    body: { metadata: { name: 'a1' }, status: { addresses: [{ type: 'InternalIP', address: '10.0.1.11' }] } },
  });
  replicas = await Promise.all(['r1', 'r2'].map((identity) => replica(identity)));
});

afterEach(async () => {
  await Promise.all(replicas.map((r) => r.close()));
  await server.close();
});

function replica(identity: string): Promise<Floatip> {
  return startFloatip({
    kubeConfig: server.kubeConfig(),
    galaxy: GALAXY_DEFAULTS,
    resource: DEFAULT_RESOURCE,
    poolNamespace: 'kube-system',
    bind: '127.0.0.1',
    port: 0,
    log: silentLogger(),
    resyncIntervalMs: 0,
    leaderElection: { namespace: 'kube-system', name: 'galaxy-ipam', identity, ...LEASE },
  });
}

async function pod(name: string) {
  const created = await core.createNamespacedPod({
    namespace: 'ns1',
    body: {
      metadata: { name },
      spec: {
        containers: [{ name: 'c', image: 'pause', resources: { requests: { [DEFAULT_RESOURCE]: '1' } } }],
      },
    },
  });
  await eventually('every replica to see the pod', async () =>
    replicas.every((r) => r.cluster.pods.get('ns1', name)),
  );
  return created;
}

async function bind(replica: Floatip, name: string, uid: string): Promise<{ status: number; error: string }> {
  const res = await fetch(`${replica.extenderUrl}/v1/bind`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ PodName: name, PodNamespace: 'ns1', PodUID: uid, Node: 'a1' }),
  });
  return { status: res.status, error: ((await res.json()) as { Error: string }).Error };
}

const ready = async (r: Floatip) => (await fetch(`${r.extenderUrl}/readyz`)).status;

async function leaderAndFollower(): Promise<[Floatip, Floatip]> {
  await eventually('a leader', async () => replicas.filter((r) => r.isLeader()).length === 1, 5000);
  const leader = replicas.find((r) => r.isLeader())!;
  return [leader, replicas.find((r) => r !== leader)!];
}

test('E8-1 exactly one replica leads and is ready; the follower answers the scheduler 503', async () => {
  const [leader, follower] = await leaderAndFollower();
  expect(await ready(leader)).toBe(200);
  expect(await ready(follower)).toBe(503);
  const p = await pod('p1');
  expect(await bind(follower, 'p1', p.metadata!.uid!)).toEqual({
    status: 503,
    error: 'not serving: this replica is a follower',
  });
  expect(await bind(leader, 'p1', p.metadata!.uid!)).toEqual({ status: 200, error: '' });
  // the follower's memory follows the leader's writes
  await eventually(
    'the follower to learn the allocation',
    async () => follower.allocator.get('10.0.100.10')?.key === 'NULL_ns1_NULL_p1',
  );
  expect(leader.metrics.registry.getSingleMetric('floatip_leader')).toBeDefined();
  expect(await leader.metrics.registry.getSingleMetricAsString('floatip_leader')).toMatch(
    /floatip_leader 1$/m,
  );
  expect(await follower.metrics.registry.getSingleMetricAsString('floatip_leader')).toMatch(
    /floatip_leader 0$/m,
  );
});

test('E8-2 the leader dies without releasing the lease: the other takes over within a lease duration, same state', async () => {
  const [leader, follower] = await leaderAndFollower();
  const p1 = await pod('p1');
  expect((await bind(leader, 'p1', p1.metadata!.uid!)).error).toBe('');
  await eventually('the follower to learn the allocation', async () => follower.allocator.size === 1);
  const died = Date.now();
  await leader.elector!.stop({ release: false }); // a crash: the lease stays until it expires
  await leader.close();
  replicas = [follower];
  await eventually('the follower to lead', async () => follower.isLeader(), 3000);
  expect(Date.now() - died).toBeLessThan(LEASE.leaseDurationMs + 1000);
  const p2 = await pod('p2');
  expect(await bind(follower, 'p2', p2.metadata!.uid!)).toEqual({ status: 200, error: '' });
  expect(follower.allocator.byKey('NULL_ns1_NULL_p2').map((a) => a.ip)).toEqual(['10.0.100.11']);
});

test('E8-3 a leader that cannot renew stops writing at once', async () => {
  const [leader] = await leaderAndFollower();
  server.faults.failNext({ verb: 'update', resource: 'leases', name: 'galaxy-ipam' }, 500, { times: 1000 });
  await eventually('the leader to step down', async () => !leader.isLeader(), 3000);
  expect(await ready(leader)).toBe(503);
  await expect(
    leader.store.allocate({
      key: 'NULL_ns1_NULL_late',
      nodeSubnet: '10.0.1.0/24',
      attrs: { policy: ReleasePolicy.PodDelete, nodeName: '', podUid: '' },
    }),
  ).rejects.toThrow(NotLeaderError);
  expect(leader.allocator.size).toBe(0);
  server.faults.clear();
});

test('E8-4 shutting down: new binds are refused, the lease is released at once', async () => {
  const [leader, follower] = await leaderAndFollower();
  const closing = leader.close();
  replicas = [follower];
  await closing;
  // released, not expired: the follower leads well before a lease duration
  await eventually('the follower to lead', async () => follower.isLeader(), LEASE.leaseDurationMs / 2);
});
