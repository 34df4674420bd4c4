// A leader deposed in the middle of a bind (paused past its lease, cut off from the Lease) while
// its bind goes on: the next leader may meanwhile have bound the pod with the objects that bind
// recorded, so what the old one undoes afterwards must not take them away.
import { type CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { CNI_ARGS_ANNOTATION, addressOf, parseCniArgs } from '../../src/cni/args.js';
import { DEFAULT_RESOURCE } from '../../src/pods/pod-facts.js';
import type { Floatip } from '../../src/server.js';
import { eventually } from './helpers.js';
import { type HaCluster, startHaCluster } from './replicas.js';

let cluster: HaCluster;
let server: EmbeddedApiServer;
let core: CoreV1Api;
let replicas: Floatip[] = [];

beforeEach(async () => {
  cluster = await startHaCluster();
  ({ server, core } = cluster);
  // a long bind budget, so that the stalled create below outlasts a takeover by far
  replicas = await Promise.all(
    ['r1', 'r2'].map((identity) => cluster.replica(identity, { bindTimeoutMs: 20_000 })),
  );
});

afterEach(async () => {
  await Promise.all(replicas.map((r) => r.close()));
  await server.close();
});

async function bind(replica: Floatip, name: string, uid: string): Promise<string> {
  const res = await fetch(`${replica.extenderUrl}/v1/bind`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ PodName: name, PodNamespace: 'ns1', PodUID: uid, Node: 'a1' }),
  });
  return ((await res.json()) as { Error: string }).Error;
}

/** A pod asking for one address in each of two ranges: its bind creates two objects. */
async function twoAddressPod(name: string): Promise<string> {
  const pod = await core.createNamespacedPod({
    namespace: 'ns1',
    body: {
      metadata: {
        name,
        annotations: {
          [CNI_ARGS_ANNOTATION]: JSON.stringify({
            request_ip_range: [['10.0.100.10~10.0.100.15'], ['10.0.100.16~10.0.100.20']],
          }),
        },
      },
      spec: {
        containers: [{ name: 'c', image: 'pause', resources: { requests: { [DEFAULT_RESOURCE]: '1' } } }],
      },
    },
  });
  await eventually('every replica to see the pod', async () =>
    replicas.every((r) => r.cluster.pods.get('ns1', name)),
  );
  return pod.metadata!.uid!;
}

const annotated = async (name: string) =>
  parseCniArgs(
    (await core.readNamespacedPod({ namespace: 'ns1', name })).metadata?.annotations?.[CNI_ARGS_ANNOTATION],
  ).ipinfos.map(addressOf);

/** The FloatingIP objects in the API server, as "name key". */
async function objects(): Promise<string[]> {
  const list = (await server
    .kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .listClusterCustomObject({ group: 'galaxy.k8s.io', version: 'v1alpha1', plural: 'floatingips' })) as {
    items: { metadata: { name: string }; spec: { key: string } }[];
  };
  return list.items.map((o) => `${o.metadata.name} ${o.spec.key}`).sort();
}

test('HU-1 a bind whose leader lost the Lease midway leaves the objects the next leader bound the pod with', async () => {
  await eventually('a leader', async () => replicas.some((r) => r.isLeader()), 5000);
  const leader = replicas.find((r) => r.isLeader())!;
  const next = replicas.find((r) => r !== leader)!;
  const uid = await twoAddressPod('p1');
  // the second create stalls, then fails: by then the leader has lost the Lease
  server.faults.inject({
    verb: 'create',
    resource: 'floatingips',
    name: '10.0.100.16',
    delayMs: 6000,
    status: 500,
  });
  const first = bind(leader, 'p1', uid);
  await eventually(
    'the first object to reach the other replica',
    async () => next.allocator.get('10.0.100.10') !== undefined,
  );
  await leader.elector!.stop({ release: false }); // cut off from the Lease; its bind goes on
  await eventually('the other replica to lead', async () => next.isLeader(), 5000);
  // the scheduler's retry reaches the new leader, which reuses the pod's recorded address
  expect(await bind(next, 'p1', uid)).toBe('');
  expect(await annotated('p1')).toEqual(['10.0.100.10', '10.0.100.16']);
  expect(await first).toMatch(/10\.0\.100\.16/);
  await new Promise((r) => setTimeout(r, 500));
  // the old leader's failed bind took nothing away from the pod
  expect(await objects()).toEqual(['10.0.100.10 NULL_ns1_NULL_p1', '10.0.100.16 NULL_ns1_NULL_p1']);
  expect(next.allocator.byKey('NULL_ns1_NULL_p1').map((a) => a.ip)).toEqual(['10.0.100.10', '10.0.100.16']);
  // and nobody else is given the pod's addresses
  const uid2 = await twoAddressPod('p2');
  expect(await bind(next, 'p2', uid2)).toBe('');
  expect(await annotated('p2')).toEqual(['10.0.100.11', '10.0.100.17']);
}, 30_000);
