// A replica that takes the Lease decides only on what the API server holds since then. Its watches
// can have been silent for their timeout and grace (a blackholed path: no event, no FIN, no RST)
// without it knowing, and a view that old once gave a running pod's address to a second pod (the
// churn on v1.37.2): the new leader had seen neither the first pod's FloatingIP created nor an
// operator deleting it, and nothing but the pod's annotation was left to say the address was used.
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_RESOURCE } from '../../src/pods/pod-facts.js';
import type { Floatip } from '../../src/server.js';
import { type FaultProxy, startFaultProxy } from '../e2e/fault-proxy.js';
import { eventually } from './helpers.js';
import { type HaCluster, startHaCluster } from './replicas.js';

let cluster: HaCluster;
let proxy: FaultProxy;
let replicas: Floatip[] = [];

beforeEach(async () => {
  cluster = await startHaCluster();
  proxy = await startFaultProxy({ host: '127.0.0.1', port: cluster.server.port });
});

afterEach(async () => {
  await Promise.all(replicas.map((r) => r.close()));
  replicas = [];
  await proxy.close();
  await cluster.server.close();
});

/** The embedded server's kubeconfig, through the fault proxy. */
function throughProxy(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'proxied', server: `http://127.0.0.1:${proxy.port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'proxied', cluster: 'proxied', user: 'u' }],
    currentContext: 'proxied',
  });
  return kc;
}

async function bind(replica: Floatip, name: string): Promise<string> {
  const pod = await cluster.core.readNamespacedPod({ namespace: 'ns1', name });
  const res = await fetch(`${replica.extenderUrl}/v1/bind`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ PodName: name, PodNamespace: 'ns1', PodUID: pod.metadata!.uid!, Node: 'a1' }),
  });
  return ((await res.json()) as { Error: string }).Error;
}

/** The address in the pod's annotation, as the API server has it. */
async function addressOf(name: string): Promise<string | undefined> {
  const pod = await cluster.core.readNamespacedPod({ namespace: 'ns1', name });
  const args = pod.metadata?.annotations?.['k8s.v1.cni.galaxy.io/args'];
  return args
    ? (JSON.parse(args) as { common: { ipinfos: { ip: string }[] } }).common.ipinfos[0]!.ip
    : undefined;
}

/** Pod ns1/name created and, once bound, running (the kubelet's status), without waiting for any replica. */
async function createPod(name: string): Promise<void> {
  await cluster.core.createNamespacedPod({
    namespace: 'ns1',
    body: {
      metadata: { name },
      spec: {
        containers: [{ name: 'c', image: 'pause', resources: { requests: { [DEFAULT_RESOURCE]: '1' } } }],
      },
    },
  });
}

const FLOATING_IPS = { group: 'galaxy.k8s.io', version: 'v1alpha1', plural: 'floatingips' };
const customObjects = () => cluster.server.kubeConfig().makeApiClient(CustomObjectsApi);

/** An operator's `kubectl delete floatingip <ip>`. */
async function deleteObject(ip: string): Promise<void> {
  await customObjects().deleteClusterCustomObject({ ...FLOATING_IPS, name: ip });
}

/** The key the address's FloatingIP object names, as the API server has it. */
async function objectKeyOf(ip: string): Promise<string> {
  const object = (await customObjects().getClusterCustomObject({ ...FLOATING_IPS, name: ip })) as {
    spec: { key: string };
  };
  return object.spec.key;
}

async function running(name: string): Promise<void> {
  const pod = await cluster.core.readNamespacedPod({ namespace: 'ns1', name });
  await cluster.core.replaceNamespacedPodStatus({
    namespace: 'ns1',
    name,
    body: { ...pod, status: { phase: 'Running' } },
  });
}

/**
 * r1 leading and r2 following through the proxy, both with p1 bound to 10.0.100.10; then every
 * connection r2 has open goes silent for good, its watches among them.
 */
async function leaderAndDeafFollower(): Promise<[Floatip, Floatip]> {
  const r1 = await cluster.replica('r1');
  replicas.push(r1);
  await eventually('r1 to lead', async () => r1.isLeader(), 5000);
  const r2 = await cluster.replica('r2', { kubeConfig: throughProxy() });
  replicas.push(r2);
  await cluster.pod('p1', [r1, r2]);
  expect(await bind(r1, 'p1')).toBe('');
  await eventually(
    'r2 to learn p1’s address',
    async () => r2.allocator.get('10.0.100.10')?.key === 'NULL_ns1_NULL_p1',
  );
  expect(await proxy.blackhole(100)).toBeGreaterThan(0);
  return [r1, r2];
}

/** The leader dies without handing the Lease on. */
async function dieWithLease(leader: Floatip): Promise<void> {
  await leader.elector!.stop({ release: false });
  await leader.close();
  replicas = replicas.filter((r) => r !== leader);
}

test('HA-CU-1 a leader whose watches were silent lists again before it decides: a running pod keeps its address, even with its object deleted by hand', async () => {
  const [r1, r2] = await leaderAndDeafFollower();
  await createPod('p2');
  expect(await bind(r1, 'p2')).toBe('');
  expect(await addressOf('p2')).toBe('10.0.100.11/24');
  await running('p2');
  // r2 saw none of it
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(r2.allocator.get('10.0.100.11')).toBeUndefined();

  // r1 dies with the Lease; meanwhile an operator deletes p2's FloatingIP by hand
  await dieWithLease(r1);
  await deleteObject('10.0.100.11');

  await eventually('r2 to take the Lease', async () => r2.isLeader(), 10_000);
  await createPod('p3');
  expect(await bind(r2, 'p3')).toBe('');
  // p3 gets an address of its own, not the one p2 runs with
  expect(await addressOf('p3')).toBe('10.0.100.12/24');
  // and r2 holds p2's address for p2 again, its object written back
  expect(r2.allocator.get('10.0.100.11')?.key).toBe('NULL_ns1_NULL_p2');
  expect(await objectKeyOf('10.0.100.11')).toBe('NULL_ns1_NULL_p2');
}, 30_000);

test('HA-CU-3 a new leader whose stale pods still show an address’s old holder gives a deleted object back to the pod that runs with it, not to the gone one (the soak)', async () => {
  const [r1, r2] = await leaderAndDeafFollower();
  // p1 goes, and its address goes to p2, which runs with it
  await cluster.core.deleteNamespacedPod({ namespace: 'ns1', name: 'p1', gracePeriodSeconds: 0 });
  await eventually('r1 to release p1’s address', async () => r1.allocator.get('10.0.100.10') === undefined);
  await createPod('p2');
  expect(await bind(r1, 'p2')).toBe('');
  expect(await addressOf('p2')).toBe('10.0.100.10/24');
  await running('p2');
  // r2 still has p1 holding it, and p1 in its pod cache
  expect(r2.allocator.get('10.0.100.10')?.key).toBe('NULL_ns1_NULL_p1');

  // r1 dies with the Lease; an operator deletes p2's FloatingIP by hand
  await dieWithLease(r1);
  await deleteObject('10.0.100.10');
  // r2 reads the FloatingIPs again before its pods: the object's deletion comes while its pod
  // cache still vouches for p1
  cluster.server.faults.delayNext({ verb: 'list', resource: 'pods' }, 1500);

  await eventually('r2 to take the Lease', async () => r2.isLeader(), 10_000);
  await createPod('p3');
  expect(await bind(r2, 'p3')).toBe('');
  // p1's release, now that r2 knows it is gone, has had its time
  await new Promise((resolve) => setTimeout(resolve, 500));
  await createPod('p4');
  expect(await bind(r2, 'p4')).toBe('');
  // neither new pod gets the address p2 runs with: r2 holds it for p2, its object written for p2
  expect([await addressOf('p3'), await addressOf('p4')]).toEqual(['10.0.100.11/24', '10.0.100.12/24']);
  expect(r2.allocator.get('10.0.100.10')?.key).toBe('NULL_ns1_NULL_p2');
  expect(await objectKeyOf('10.0.100.10')).toBe('NULL_ns1_NULL_p2');
}, 30_000);

test('HA-CU-2 while the new leader reads the cluster again, binds sent to it wait for it and REST changes are refused with why', async () => {
  const r1 = await cluster.replica('r1');
  replicas.push(r1);
  await eventually('r1 to lead', async () => r1.isLeader(), 5000);
  const r2 = await cluster.replica('r2');
  replicas.push(r2);
  await cluster.pod('p1', [r1, r2]);
  // r2's list of the FloatingIPs when it takes the Lease is slow
  cluster.server.faults.delayNext({ verb: 'list', group: 'galaxy.k8s.io', resource: 'floatingips' }, 1500);
  await r1.close(); // the Lease handed on
  replicas = [r2];
  await eventually('r2 to take the Lease', async () => r2.isLeader(), 5000);
  await eventually(
    'r2 to list the FloatingIPs again',
    async () => cluster.server.faults.pending().length === 0,
    1000,
  );

  const change = await fetch(`${r2.apiUrl}/v1/pool`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'pl', size: 1 }),
  });
  expect([change.status, await change.json()]).toEqual([
    503,
    {
      code: 503,
      message:
        'service unavailable: this replica has just taken the Lease and decides once it has read the cluster again; retry',
    },
  ]);
  const asked = Date.now();
  expect(await bind(r2, 'p1')).toBe('');
  // decided once the list was in, not on what r2 knew before
  expect(Date.now() - asked).toBeGreaterThan(500);
  expect(await addressOf('p1')).toBe('10.0.100.10/24');
}, 30_000);
