// The cluster the property tests hit: floatip on the embedded API server (the integration tests'
// World), with nodes in every situation, pods that want an address (bound and not), a pod that
// does not, a Pool with parked addresses and one without, a reserved address and an orphan. And
// what "state" means for "a refused request changes nothing": FloatingIP objects, Pools and pods as
// the API server has them, and the allocator's memory; Events may be written.
import type { V1Pod } from '@kubernetes/client-node';
import { ipOfObjectName } from '../../src/store/floating-ip-object.js';
import { eventually } from '../integration/helpers.js';
import { type PodSpec, World } from '../integration/world.js';

export const CONFIG = [
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.10~10.0.100.40'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
    vlan: 2,
  },
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['fd00:100::10~fd00:100::ff'],
    subnet: 'fd00:100::/64',
    gateway: 'fd00:100::1',
  },
  {
    nodeSubnets: ['10.0.2.0/24'],
    ips: ['10.0.101.10~10.0.101.12'],
    subnet: '10.0.101.0/24',
    gateway: '10.0.101.1',
  },
  // a /64 of addresses: totals past 2^53
  {
    nodeSubnets: ['10.0.3.0/24'],
    ips: ['fd00:102::2~fd00:102::ffff:ffff:ffff:fffe'],
    subnet: 'fd00:102::/64',
    gateway: 'fd00:102::1',
  },
];

export const NODES: Record<string, string[]> = {
  a1: ['10.0.1.11'],
  a2: ['10.0.1.12', 'fd00:1::12'],
  b1: ['10.0.2.11'],
  c1: ['10.0.3.11'],
  nowhere: ['192.168.9.9'],
  noip: [],
};

export const POOLS = [
  { name: 'p1', size: 2, preAllocateIP: true },
  { name: 'p2', size: 3, preAllocateIP: false },
];

const sts = (name: string, app: string): PodSpec => ({ name, owner: { kind: 'StatefulSet', name: app } });

/** In ns1: StatefulSet pods, bare ones, pods of Pool p1, one that wants no address, one kept by policy never. */
export const PODS: readonly PodSpec[] = [
  ...[0, 1, 2, 3, 4, 5].map((i) => sts(`web-${i}`, 'web')),
  ...[0, 1, 2].map((i) => ({ name: `bare-${i}` })),
  ...[0, 1, 2].map((i) => ({ name: `pooled-${i}`, pool: 'p1' })),
  { name: 'plain', wants: false },
  { ...sts('keep-0', 'keep'), policy: 'never' },
];

/** Pods waiting for the scheduler (binds of them can succeed), and the names of the bound ones. */
export const WAITING = ['web-2', 'web-3', 'web-4', 'web-5', 'bare-1', 'bare-2', 'pooled-1', 'pooled-2'];
export const BOUND = { 'web-0': 'a1', 'web-1': 'b1', 'bare-0': 'a2', 'pooled-0': 'a1' } as const;
export const RESERVED_IP = '10.0.100.39';
export const ORPHAN_IP = '10.9.9.9';

export interface Seeded {
  readonly world: World;
  /** Every pod created, as the API server returned it (bound ones before binding). */
  readonly pods: V1Pod[];
  /** Names a request may use: real pods, nodes, pools, apps and namespaces, and unknown ones. */
  readonly names: string[];
}

export async function seededWorld(): Promise<Seeded> {
  const world = await World.start({ config: CONFIG });
  try {
    return await seed(world);
  } catch (err) {
    await world.stop();
    throw err;
  }
}

async function seed(world: World): Promise<Seeded> {
  for (const [name, ips] of Object.entries(NODES)) await world.node(name, ...ips);
  for (const pool of POOLS) await world.floatip.pools.put(pool);
  const pods: V1Pod[] = [];
  for (const spec of PODS) pods.push(await world.pod(spec));
  for (const [name, node] of Object.entries({ ...BOUND, 'keep-0': 'b1' })) {
    const error = await world.bind(
      pods.find((p) => p.metadata?.name === name)!,
      node,
    );
    if (error) throw new Error(`seeding: bind ${name} to ${node}: ${error}`);
  }
  await world.phase('web-0', 'Running');
  // a StatefulSet pod gone with policy never: its address stays parked on its key
  await world.deletePod('keep-0');
  // an operator's reservation, and an allocation outside the configuration (an orphan)
  await floatingIP(world, RESERVED_IP, 'sts_ns1_ops_ops-0', { reserved: 'true' });
  await floatingIP(world, ORPHAN_IP, 'sts_ns1_gone_gone-0');
  await settle(world);
  const names = [
    ...pods.map((p) => p.metadata!.name!),
    ...Object.keys(NODES),
    ...POOLS.map((p) => p.name),
    ...['web', 'keep', 'ops', 'gone', 'ns1', 'default', 'kube-system'],
    ...['unknown-pod', 'no-such-node', 'WEB-0', 'web-0 ', 'ns1/web-0', 'web_0'],
  ];
  return { world, pods, names };
}

/** A FloatingIP object written by someone else (kubectl), with policy never. */
async function floatingIP(world: World, ip: string, key: string, labels?: Record<string, string>) {
  await world.custom.createClusterCustomObject({
    group: 'galaxy.k8s.io',
    version: 'v1alpha1',
    plural: 'floatingips',
    body: {
      apiVersion: 'galaxy.k8s.io/v1alpha1',
      kind: 'FloatingIP',
      metadata: { name: ip, ...(labels ? { labels } : {}) },
      spec: { key, policy: 2, attribute: '', updateTime: '2020-01-01T00:00:00Z' },
    },
  });
  await eventually(`${ip} to reach floatip`, async () => world.floatip.allocator.get(ip)?.key === key);
}

/**
 * Waits until nothing is being written: Events flushed, the release queue idle, and the revision
 * the same across a pause (a watch event may still be on its way to floatip). When nothing was
 * written since `since`, one turn of the event loop is pause enough.
 */
export async function settle(world: World, since = -1): Promise<void> {
  let revision = since;
  let pauseMs = 0;
  for (;;) {
    await world.floatip.events.flush();
    await world.floatip.lifecycle.queue.idle();
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    if (world.server.revision() === revision) return;
    revision = world.server.revision();
    pauseMs = 20;
  }
}

type Section = Record<string, unknown>;

export interface Snapshot {
  readonly revision: number;
  /** By address, as the allocator's view. */
  readonly floatingIPs: Section;
  readonly pools: Section;
  readonly pods: Section;
  readonly allocator: Section;
}

interface Listed {
  items: {
    metadata: { name: string; namespace?: string; uid?: string; labels?: unknown; annotations?: unknown };
    spec?: Record<string, unknown>;
    status?: { phase?: string };
    size?: unknown;
    preAllocateIP?: unknown;
  }[];
}

async function list(world: World, path: string): Promise<Listed> {
  const res = await fetch(world.server.url + path);
  if (res.status !== 200) throw new Error(`the embedded API server answered ${res.status} to GET ${path}`);
  return (await res.json()) as Listed;
}

/** What the cluster and floatip hold now, without versions and timestamps (a write undone is no change). */
export async function snapshot(world: World): Promise<Snapshot> {
  const revision = world.server.revision();
  const [fips, pools, pods] = await Promise.all([
    list(world, '/apis/galaxy.k8s.io/v1alpha1/floatingips'),
    list(world, '/apis/galaxy.k8s.io/v1alpha1/namespaces/kube-system/pools'),
    list(world, '/api/v1/pods'),
  ]);
  const by = <T>(
    items: Listed['items'],
    name: (i: Listed['items'][number]) => string,
    value: (i: Listed['items'][number]) => T,
  ) => Object.fromEntries(items.map((i) => [name(i), value(i)]));
  return {
    revision,
    floatingIPs: by(
      fips.items,
      (i) => ipOfObjectName(i.metadata.name),
      (i) => ({
        key: i.spec?.key,
        policy: i.spec?.policy,
        attribute: i.spec?.attribute,
        labels: i.metadata.labels ?? {},
      }),
    ),
    pools: by(
      pools.items,
      (i) => i.metadata.name,
      (i) => ({ size: i.size, preAllocateIP: i.preAllocateIP }),
    ),
    pods: by(
      pods.items,
      (i) => `${i.metadata.namespace}/${i.metadata.name}`,
      (i) => ({
        uid: i.metadata.uid,
        nodeName: i.spec?.nodeName ?? '',
        phase: i.status?.phase ?? '',
        labels: i.metadata.labels ?? {},
        annotations: i.metadata.annotations ?? {},
      }),
    ),
    allocator: allocatorView(world),
  };
}

export function allocatorView(world: World): Section {
  return Object.fromEntries(
    [...world.floatip.allocator.all()].map((a) => [
      a.ip,
      { key: a.key, policy: a.policy, nodeName: a.nodeName, podUid: a.podUid, reserved: a.reserved ?? false },
    ]),
  );
}

/** What changed from `before` to `after`, one line each; empty when nothing did. */
export function differences(before: Snapshot, after: Snapshot): string[] {
  const out: string[] = [];
  for (const section of ['floatingIPs', 'pools', 'pods', 'allocator'] as const) {
    const a = before[section];
    const b = after[section];
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const was = JSON.stringify(a[key]);
      const now = JSON.stringify(b[key]);
      if (was === now) continue;
      out.push(
        was === undefined
          ? `${section} ${key} added: ${now}`
          : now === undefined
            ? `${section} ${key} removed (was ${was})`
            : `${section} ${key}: ${was} -> ${now}`,
      );
    }
  }
  return out;
}

/**
 * The state as last seen, kept up to date cheaply: the API server's revision tells whether anything
 * was written at all, and only then are the objects listed again.
 */
export class StateTracker {
  private constructor(
    private readonly world: World,
    private last: Snapshot,
  ) {}

  static async start(world: World): Promise<StateTracker> {
    await settle(world);
    return new StateTracker(world, await snapshot(world));
  }

  get current(): Snapshot {
    return this.last;
  }

  /** The state now, with what changed since it was last seen (which becomes now). */
  async observe(): Promise<{ before: Snapshot; after: Snapshot; changes: string[] }> {
    const before = this.last;
    await settle(this.world, before.revision);
    const after =
      this.world.server.revision() === before.revision
        ? { ...before, allocator: allocatorView(this.world) }
        : await snapshot(this.world);
    this.last = after;
    return { before, after, changes: differences(before, after) };
  }
}
