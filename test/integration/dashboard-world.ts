// A cluster for the dashboard's tests: one subnet with an address in every state the page shows
// (used by running pods, parked for a gone Deployment pod and for a pool, reserved by an operator).
import type { V1Pod } from '@kubernetes/client-node';
import { eventually } from './helpers.js';
import type { World } from './world.js';

export const DASHBOARD_CONFIG = [
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.2~10.0.100.40'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
  },
];

export const RESERVED_IP = '10.0.100.40';

export interface Seeded {
  /** Addresses of running pods, by pod name. */
  readonly running: Record<string, string>;
  /** The gone Deployment pod's address, parked on `dp_ns1_shop_` (policy never). */
  readonly parked: string;
}

/** Creates and binds a pod on node a1; returns its address. */
export async function runningPod(world: World, spec: Parameters<World['pod']>[0]): Promise<string> {
  const pod: V1Pod = await world.pod(spec);
  const error = await world.bind(pod, 'a1');
  if (error) throw new Error(`bind of ${spec.name} failed: ${error}`);
  const [ip] = await world.addressesOf(spec.name, spec.namespace);
  return ip!;
}

export const shopPod = (suffix: string) => ({
  name: `shop-5d8f7c9b4-${suffix}`,
  owner: { kind: 'ReplicaSet', name: 'shop-5d8f7c9b4' },
  policy: 'never' as const,
});

/** The pool `p1` of 2, pre-allocated through the REST API (with `headers`, under --api-auth). */
export async function seedPool(world: World, headers: Record<string, string> = {}): Promise<void> {
  const answer = await world.rest('POST', '/v1/pool', { name: 'p1', size: 2, preAllocateIP: true }, headers);
  if (answer.status !== 200) throw new Error(`POST /v1/pool: ${answer.status} ${answer.text}`);
}

export async function seed(world: World): Promise<Seeded> {
  await world.node('a1', '10.0.1.11');
  const running: Record<string, string> = {};
  for (const name of ['solo', 'api-0']) running[name] = await runningPod(world, { name });
  await world.deployment('shop', 1);
  const parked = await runningPod(world, shopPod('a'));
  await world.deletePod(shopPod('a').name);
  await world.settle();
  if (world.floatip.allocator.get(parked)?.key !== 'dp_ns1_shop_')
    throw new Error(`${parked} was not parked on dp_ns1_shop_`);
  await seedPool(world);
  await world.createFloatingIP(RESERVED_IP, { key: 'pool__reserved-for-node_' }, { reserved: 'for-node' });
  await eventually(
    `${RESERVED_IP} to reach floatip`,
    async () => world.floatip.allocator.get(RESERVED_IP)?.reserved === true,
  );
  return { running, parked };
}
