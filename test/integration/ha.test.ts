// Two floatip replicas on one API server: both are ready and answer the scheduler; exactly one leads
// (decides bind and preempt, writes) and the other forwards those to it; when the leader goes
// (handing the Lease on, or dying) binds sent to the other are delayed, not lost; a leader that
// loses its lease stops writing at once.
import { CoordinationV1Api, type CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { ReleasePolicy } from '../../src/ipam/index.js';
import { NotLeaderError } from '../../src/kube/leader-election.js';
import type { Floatip } from '../../src/server.js';
import { eventually } from './helpers.js';
import { type HaCluster, LEASE, startHaCluster } from './replicas.js';

let cluster: HaCluster;
let server: EmbeddedApiServer;
let core: CoreV1Api;
let replicas: Floatip[] = [];

beforeEach(async () => {
  cluster = await startHaCluster();
  ({ server, core } = cluster);
  replicas = await Promise.all(['r1', 'r2'].map((identity) => cluster.replica(identity)));
});

afterEach(async () => {
  await Promise.all(replicas.map((r) => r.close()));
  await server.close();
});

const pod = (name: string) => cluster.pod(name, replicas);

async function bind(
  replica: Floatip,
  name: string,
  uid: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; error: string }> {
  const res = await fetch(`${replica.extenderUrl}/v1/bind`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ PodName: name, PodNamespace: 'ns1', PodUID: uid, Node: 'a1' }),
  });
  return { status: res.status, error: ((await res.json()) as { Error: string }).Error };
}

/** The pod's node and its IP annotation, as the API server has them. */
async function placed(name: string): Promise<{ node: string | undefined; ip: string | undefined }> {
  const pod = await core.readNamespacedPod({ namespace: 'ns1', name });
  const args = pod.metadata?.annotations?.['k8s.v1.cni.galaxy.io/args'];
  const ip = args
    ? (JSON.parse(args) as { common: { ipinfos: { ip: string }[] } }).common.ipinfos[0]!.ip
    : undefined;
  return { node: pod.spec?.nodeName, ip };
}

const ready = async (r: Floatip) => (await fetch(`${r.extenderUrl}/readyz`)).status;

async function leaderAndFollower(): Promise<[Floatip, Floatip]> {
  await eventually('a leader', async () => replicas.filter((r) => r.isLeader()).length === 1, 5000);
  const leader = replicas.find((r) => r.isLeader())!;
  return [leader, replicas.find((r) => r !== leader)!];
}

test('E8-1 both replicas are ready; a bind sent to the follower is decided by the leader', async () => {
  const [leader, follower] = await leaderAndFollower();
  expect(await ready(leader)).toBe(200);
  expect(await ready(follower)).toBe(200);
  // the leader's address is on the Lease, where the follower reads it
  const lease = await server
    .kubeConfig()
    .makeApiClient(CoordinationV1Api)
    .readNamespacedLease({ namespace: 'kube-system', name: 'galaxy-ipam' });
  expect(lease.metadata?.annotations?.['floatip.io/leader-address']).toBe(leader.extenderUrl);
  const p = await pod('p1');
  expect(await bind(follower, 'p1', p.metadata!.uid!)).toEqual({ status: 200, error: '' });
  expect(await placed('p1')).toEqual({ node: 'a1', ip: '10.0.100.10/24' });
  // decided and written by the leader: its memory has it at once, the follower's follows the watch
  expect(leader.allocator.get('10.0.100.10')?.key).toBe('NULL_ns1_NULL_p1');
  await eventually(
    'the follower to learn the allocation',
    async () => follower.allocator.get('10.0.100.10')?.key === 'NULL_ns1_NULL_p1',
  );
  expect(await leader.metrics.registry.getSingleMetricAsString('floatip_leader')).toMatch(
    /floatip_leader 1$/m,
  );
  expect(await follower.metrics.registry.getSingleMetricAsString('floatip_leader')).toMatch(
    /floatip_leader 0$/m,
  );
});

test('E8-1b a forwarded bind that reaches a replica that does not lead is refused, retriable, and not forwarded again', async () => {
  const [, follower] = await leaderAndFollower();
  const p = await pod('p1');
  const res = await fetch(`${follower.extenderUrl}/v1/bind`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'floatip-forwarded-by': 'r9' },
    body: JSON.stringify({ PodName: 'p1', PodNamespace: 'ns1', PodUID: p.metadata!.uid!, Node: 'a1' }),
  });
  expect(res.status).toBe(503);
  expect(res.headers.get('floatip-not-leader')).toBe(follower.elector!.identity);
  expect(await res.json()).toEqual({
    Error: `not the leader: ${follower.elector!.identity} does not hold the Lease (bind forwarded by r9); retry`,
  });
  expect(await placed('p1')).toEqual({ node: undefined, ip: undefined });
});

test('E8-1d a REST change sent to the follower is a 503 that names the leader; the follower still answers reads', async () => {
  const [leader, follower] = await leaderAndFollower();
  const res = await fetch(`${follower.apiUrl}/v1/pool`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'p', size: 2 }),
  });
  expect(res.status).toBe(503);
  expect(await res.json()).toEqual({
    code: 503,
    message: `service unavailable: this replica does not lead; send changes to the leader (${leader.elector!.identity})`,
  });
  expect((await fetch(`${follower.apiUrl}/v1/ip`)).status).toBe(200);
  expect((await fetch(`${leader.apiUrl}/v1/pool/p`)).status).toBe(404);
});

test('E8-1c a forwarded bind with its budget spent is refused by the leader before anything is written', async () => {
  const [leader] = await leaderAndFollower();
  const p = await pod('p1');
  const answer = await bind(leader, 'p1', p.metadata!.uid!, {
    'floatip-forwarded-by': 'r9',
    'floatip-budget-ms': '100',
  });
  expect(answer.status).toBe(200);
  expect(answer.error).toMatch(
    /^bind of ns1\/p1 to a1 not started: its time ran out \(\d+ ms left of at most 4000 ms\)/,
  );
  expect(await placed('p1')).toEqual({ node: undefined, ip: undefined });
  expect(leader.allocator.size).toBe(0);
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
  // still answers the scheduler (filter from its caches); decides and writes nothing
  expect(await ready(leader)).toBe(200);
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

/** Binds pods p<from>..p<to-1> one after another through `via`, each with how long it took. */
async function bindSeries(
  via: Floatip,
  names: string[],
): Promise<{ name: string; error: string; ms: number }[]> {
  const out: { name: string; error: string; ms: number }[] = [];
  for (const name of names) {
    const uid = replicas.map((r) => r.cluster.pods.get('ns1', name)).find(Boolean)!.metadata!.uid!;
    const start = Date.now();
    const { error } = await bind(via, name, uid);
    out.push({ name, error, ms: Date.now() - start });
  }
  return out;
}

test('E8-4 the leader shuts down while binds go through the follower: every pod bound with its IP, delayed at most briefly', async () => {
  const [leader, follower] = await leaderAndFollower();
  const names = Array.from({ length: 6 }, (_, i) => `p${i}`);
  for (const name of names) await pod(name);
  const binding = bindSeries(follower, names);
  await new Promise((r) => setTimeout(r, 20));
  await leader.close(); // SIGTERM: finishes its binds, hands the Lease on
  replicas = [follower];
  // released, not expired: the follower leads well before a lease duration
  await eventually('the follower to lead', async () => follower.isLeader(), LEASE.leaseDurationMs / 2);
  const results = await binding;
  expect(results.map((r) => r.error)).toEqual(names.map(() => ''));
  expect(Math.max(...results.map((r) => r.ms))).toBeLessThan(LEASE.leaseDurationMs);
  const ips = await Promise.all(names.map(async (name) => (await placed(name)).ip));
  expect(new Set(ips).size).toBe(names.length);
  expect(ips.every((ip) => ip?.startsWith('10.0.100.'))).toBe(true);
});

test('E8-5 the leader dies while binds go through the follower: they wait for the takeover, within a lease duration', async () => {
  const [leader, follower] = await leaderAndFollower();
  for (const name of ['p1', 'p2']) await pod(name);
  await leader.elector!.stop({ release: false }); // a crash: the lease stays until it expires
  await leader.close();
  replicas = [follower];
  const [result] = await bindSeries(follower, ['p1']);
  expect(result!.error).toBe('');
  expect(result!.ms).toBeLessThan(LEASE.leaseDurationMs + 1500);
  expect(await placed('p1')).toEqual({ node: 'a1', ip: '10.0.100.10/24' });
});

test('E8-6 no leader within the forwarding deadline: a clear per-pod error, and nothing bound', async () => {
  await Promise.all(replicas.map((r) => r.close()));
  server.faults.failNext({ verb: 'update', resource: 'leases', name: 'galaxy-ipam' }, 500, { times: 10_000 });
  server.faults.failNext({ verb: 'create', resource: 'leases', name: 'galaxy-ipam' }, 500, { times: 10_000 });
  replicas = [await cluster.replica('lonely', { forwardDeadlineMs: 500 })];
  const p = await pod('p1');
  expect(await bind(replicas[0]!, 'p1', p.metadata!.uid!)).toEqual({
    status: 503,
    error: 'no leader decided this bind within 500 ms (no leader is known); the scheduler retries the pod',
  });
  expect(await placed('p1')).toEqual({ node: undefined, ip: undefined });
  server.faults.clear();
});

test('E8-7 a bind that reaches the leader while it shuts down is relayed to the next leader', async () => {
  await Promise.all(replicas.map((r) => r.close()));
  replicas = await Promise.all(['s1', 's2'].map((id) => cluster.replica(id, { shutdownDelayMs: 300 })));
  const [leader, follower] = await leaderAndFollower();
  const p = await pod('p1');
  const closing = leader.close(); // not ready at once; hands the Lease on after 300 ms
  await new Promise((r) => setTimeout(r, 50));
  expect(await ready(leader)).toBe(503);
  const start = Date.now();
  expect(await bind(leader, 'p1', p.metadata!.uid!)).toEqual({ status: 200, error: '' });
  expect(Date.now() - start).toBeLessThan(LEASE.leaseDurationMs);
  await closing;
  replicas = [follower];
  expect(follower.isLeader()).toBe(true);
  expect(await placed('p1')).toEqual({ node: 'a1', ip: '10.0.100.10/24' });
  expect(follower.allocator.get('10.0.100.10')?.key).toBe('NULL_ns1_NULL_p1');
});

test('E8-8 a pod the follower refuses for want of an address is sent back by the leader once one is freed', async () => {
  const [leader, follower] = await leaderAndFollower();
  // the subnet's 11 addresses all taken
  for (let i = 1; i <= 11; i++) {
    const p = await pod(`full-${i}`);
    expect(await bind(leader, `full-${i}`, p.metadata!.uid!)).toEqual({ status: 200, error: '' });
  }
  const waiting = await pod('waiting');
  const res = await fetch(`${follower.extenderUrl}/v1/filter`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ Pod: waiting, NodeNames: ['a1'] }),
  });
  const answer = (await res.json()) as { NodeNames: string[] | null; FailedNodes: Record<string, string> };
  expect([res.status, answer.NodeNames ?? []]).toEqual([200, []]);
  expect(Object.keys(answer.FailedNodes)).toEqual(['a1']);
  // remembered where the touches come from: the leader, whose lifecycle frees the address
  expect(leader.requeue.waiting).toBe(1);
  await core.deleteNamespacedPod({ namespace: 'ns1', name: 'full-1', gracePeriodSeconds: 0 });
  await eventually(
    'the waiting pod to be sent back to the scheduler',
    async () =>
      (await core.readNamespacedPod({ namespace: 'ns1', name: 'waiting' })).metadata?.annotations?.[
        'floatip.io/requeued-at'
      ] !== undefined,
    5000,
  );
});

test('E8-9 an object deleted behind both replicas’ backs while its pod is bound but not running: neither frees the address, and after a takeover the next pod gets another', async () => {
  // A follower that freed it would, once it leads, give the bound pod's address to the next pod:
  // the pod is bound with it in its annotation and will run with it. Both replicas keep it for the
  // live pod its object named, and the leader writes the object again.
  const [leader, follower] = await leaderAndFollower();
  const p1 = await pod('p1');
  expect((await bind(leader, 'p1', p1.metadata!.uid!)).error).toBe('');
  const ip = (await placed('p1')).ip!.split('/')[0]!;
  await eventually(
    'the follower to learn the allocation',
    async () => follower.allocator.get(ip) !== undefined,
  );
  expect((await core.readNamespacedPod({ namespace: 'ns1', name: 'p1' })).status?.phase).not.toBe('Running');
  const custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
  const object = { group: 'galaxy.k8s.io', version: 'v1alpha1', plural: 'floatingips', name: ip };
  const { metadata } = (await custom.getClusterCustomObject(object)) as { metadata: { uid: string } };
  await custom.deleteClusterCustomObject(object);
  await eventually('the leader to write the object again', async () => {
    const again = (await custom.getClusterCustomObject(object).catch(() => undefined)) as
      { metadata: { uid: string }; spec: { key: string } } | undefined;
    return (
      again !== undefined && again.metadata.uid !== metadata.uid && again.spec.key === 'NULL_ns1_NULL_p1'
    );
  });
  for (const r of [leader, follower]) expect(r.allocator.get(ip)?.key).toBe('NULL_ns1_NULL_p1');

  await leader.elector!.stop({ release: false }); // a crash: the lease stays until it expires
  await leader.close();
  replicas = [follower];
  await eventually('the follower to lead', async () => follower.isLeader(), 3000);
  expect(follower.allocator.get(ip)?.key).toBe('NULL_ns1_NULL_p1');
  const p2 = await pod('p2');
  expect(await bind(follower, 'p2', p2.metadata!.uid!)).toEqual({ status: 200, error: '' });
  expect((await placed('p2')).ip?.split('/')[0]).not.toBe(ip);
});

test('E8-10 an object deleted while no replica leads: both keep the address for the live bound pod, and the next leader writes it again and binds the next pod elsewhere', async () => {
  // A follower writes nothing and its pod cache may lag, so it asks the API server whether the pod
  // the object named lives. Freeing it would let the next leader give the bound pod's address (it
  // will run with the one in its annotation) to the next pod.
  const [leader] = await leaderAndFollower();
  const p1 = await pod('p1');
  expect((await bind(leader, 'p1', p1.metadata!.uid!)).error).toBe('');
  const ip = (await placed('p1')).ip!.split('/')[0]!;
  await eventually('both replicas to know the allocation', async () =>
    replicas.every((r) => r.allocator.get(ip)),
  );
  server.faults.failNext({ verb: 'update', resource: 'leases', name: 'galaxy-ipam' }, 500, {
    times: 100_000,
  });
  await eventually('no replica to lead', async () => replicas.every((r) => !r.isLeader()), 3000);
  const custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
  const object = { group: 'galaxy.k8s.io', version: 'v1alpha1', plural: 'floatingips', name: ip };
  await custom.deleteClusterCustomObject(object);
  await eventually(
    'the object to be gone',
    async () => (await custom.getClusterCustomObject(object).catch(() => undefined)) === undefined,
  );
  await new Promise((r) => setTimeout(r, 300)); // the watch events and the API server's answer
  for (const r of replicas) expect(r.allocator.get(ip)?.key).toBe('NULL_ns1_NULL_p1');
  expect((await core.readNamespacedPod({ namespace: 'ns1', name: 'p1' })).status?.phase).not.toBe('Running');

  server.faults.clear();
  const [next] = await leaderAndFollower();
  await eventually(
    'the next leader to write the object again',
    async () => {
      const again = (await custom.getClusterCustomObject(object).catch(() => undefined)) as
        { spec: { key: string } } | undefined;
      return again?.spec.key === 'NULL_ns1_NULL_p1';
    },
    3000,
  );
  const p2 = await pod('p2');
  expect(await bind(next, 'p2', p2.metadata!.uid!)).toEqual({ status: 200, error: '' });
  expect((await placed('p2')).ip?.split('/')[0]).not.toBe(ip);
});

test('E8-11 a bind the leader undoes (its binding refused) leaves the follower no address for the pending pod, and the next leader writes none', async () => {
  // The follower sees the object created and deleted for a pod that is not on a node: the undo of a
  // failed bind, not an object deleted behind a pod's back (E8-9). Kept, the address would stay
  // with a pod that never got it, be written again by the next leader, and parked for its app
  // once the pod went.
  const [leader, follower] = await leaderAndFollower();
  const p1 = await pod('p1');
  // held long enough for the follower to learn the address before the undo
  server.faults.inject({
    verb: 'create',
    resource: 'pods/binding',
    name: 'p1',
    delayMs: 1000,
    status: 409,
    message: 'Operation cannot be fulfilled on pods/binding "p1": refused by the test',
  });
  const bound = bind(leader, 'p1', p1.metadata!.uid!);
  await eventually(
    'the follower to learn the address',
    async () => follower.allocator.get('10.0.100.10') !== undefined,
  );
  expect((await bound).error).toMatch(/refused by the test/);
  expect(leader.allocator.get('10.0.100.10')).toBeUndefined();
  await eventually(
    'the follower to hold nothing for pending p1',
    async () => follower.allocator.byKey('NULL_ns1_NULL_p1').length === 0,
    3000,
  );

  await leader.elector!.stop({ release: false });
  await leader.close();
  replicas = [follower];
  await eventually('the follower to lead', async () => follower.isLeader(), 3000);
  await new Promise((r) => setTimeout(r, 500)); // its catch-up, and any write it would make
  const custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
  const { items } = (await custom.listClusterCustomObject({
    group: 'galaxy.k8s.io',
    version: 'v1alpha1',
    plural: 'floatingips',
  })) as { items: unknown[] };
  expect(items).toEqual([]);
});
