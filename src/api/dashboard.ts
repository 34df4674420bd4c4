// GET /v1/dashboard: what the dashboard page shows beyond /v1/subnets and /v1/ip. Per subnet and
// pool, where the addresses are (used, parked, reserved, free) and when the free ones run out at
// the recent rate (usage-history.ts); every holder with its key, node, policy and age; the parked
// ones with the TTL left; the leak candidates; the latest Events. Pod facts come from the cache, as
// the list's do: the page polls, and must not turn each poll into API server calls.
import type { V1Pod } from '@kubernetes/client-node';
import type { Request, Response } from 'express';
import {
  type Allocation,
  AllocationKey,
  type Allocator,
  ReleasePolicy,
  ofMainFamily,
  releasePolicyName,
} from '../ipam/index.js';
import { isFinished } from '../pods/pod-facts.js';
import type { Pool, StoredPool } from '../store/pool-store.js';
import type { DashboardJson, HolderJson, PoolUsageJson, SubnetUsageJson } from './dashboard-wire.js';
import { sendEnvelope } from './envelope.js';
import { type IPOrder, compareOrders, ipOrder, sortedSliceSliced } from './ip-order.js';
import type { RecentEvents } from './recent-events.js';
import { judge } from './releasability.js';
import { timeSlicer } from './time-slice.js';
import type { UsageHistory } from './usage-history.js';

export const DASHBOARD_LIMIT = 500;

export interface UsageDeps {
  readonly allocator: Allocator;
  readonly pools: { list(): StoredPool[] };
  /** Filled by each request, and by a timer where the server runs one (startUsageSampling). */
  readonly usage: UsageHistory;
  readonly clock: () => number;
}

export interface DashboardDeps extends UsageDeps {
  readonly pods: { cached(namespace: string, name: string): V1Pod | undefined };
  readonly events?: Pick<RecentEvents, 'latest'>;
  /** --parked-ip-ttl; 0 is off. */
  readonly parkedTtlMs: number;
}

interface Counts {
  used: number;
  parked: number;
  reserved: number;
}

const subnetSeries = (entry: number) => `entry ${entry}`;
const poolSeries = (name: string) => `pool ${name}`;

/** Where an allocation is: a pod's, parked for none, or set aside. */
function stateOf(a: Allocation, key: AllocationKey): HolderJson['state'] {
  if (a.reserved) return 'reserved';
  // a pod key with no node and no UID is kept on its key by its policy (a StatefulSet's pod is gone)
  return !key.pod || (!a.nodeName && !a.podUid) ? 'parked' : 'used';
}

/** Why the pod an allocation names no longer uses it, as the cache sees it (leaks.ts decides for real). */
function leakOf(a: Allocation, key: AllocationKey, pod: V1Pod | undefined): string | undefined {
  if (!pod) return 'pod not found';
  const uid = pod.metadata?.uid ?? '';
  if (a.podUid && a.podUid !== uid) return `pod ${key.namespace}/${key.podName} is now uid ${uid}`;
  if (isFinished(pod)) return `pod finished (${pod.status?.phase ?? ''})`;
  return undefined;
}

/** Milliseconds until --parked-ip-ttl releases a parked address, if it applies (parked-ttl.ts's rule). */
function ttlLeft(a: Allocation, key: AllocationKey, ttlMs: number, now: number): number | undefined {
  if (ttlMs <= 0 || a.policy !== ReleasePolicy.Never || key.pool || !key.appName || key.pod) return undefined;
  return Math.max(0, a.updateTime + ttlMs - now);
}

/** The free counts of every subnet and pool (the history's samples). */
function freeCounts(
  allocator: Allocator,
  pools: readonly Pool[],
  held: ReadonlyMap<string, number>,
): Map<string, bigint> {
  const free = new Map<string, bigint>();
  for (const s of allocator.stats()) free.set(subnetSeries(s.entry), s.free);
  for (const p of pools) free.set(poolSeries(p.name), BigInt(Math.max(0, p.size - (held.get(p.name) ?? 0))));
  return free;
}

/** A pool's holdings in pods' worth: of the address family it holds most of (pool-preallocation.ts's count). */
function poolCounts(allocator: Allocator, pool: string): Counts {
  const counts = zero();
  for (const a of ofMainFamily(allocator.byPool(pool), (x) => x.family))
    counts[stateOf(a, AllocationKey.parse(a.key))]++;
  return counts;
}

const zero = (): Counts => ({ used: 0, parked: 0, reserved: 0 });
const total = (c: Counts) => c.used + c.parked + c.reserved;

/** Records one sample of the free counts now (a timer's tick; each request records one too). */
export function sampleUsage(deps: UsageDeps): void {
  const pools = deps.pools.list();
  const held = new Map(pools.map((p) => [p.name, total(poolCounts(deps.allocator, p.name))]));
  deps.usage.record(deps.clock(), freeCounts(deps.allocator, pools, held));
}

/** Samples every `everyMs`, so that the rate is known before anyone opens the page; returns the stop. */
export function startUsageSampling(deps: UsageDeps, everyMs: number): () => void {
  sampleUsage(deps);
  const timer = setInterval(() => sampleUsage(deps), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** A matching allocation, judged; made into JSON only if it is among the first `limit` of a list. */
interface Row {
  readonly a: Allocation;
  readonly key: AllocationKey;
  readonly state: HolderJson['state'];
  readonly pod: V1Pod | undefined;
  readonly leak: string | undefined;
  readonly order: IPOrder;
}

const byAddress = (x: Row, y: Row) => compareOrders(x.order, y.order);

function holderJson(row: Row, ttlMs: number, now: number): HolderJson {
  const { a, key, state, leak } = row;
  const ttl = state === 'parked' ? ttlLeft(a, key, ttlMs, now) : undefined;
  return {
    ip: a.ip,
    key: a.key,
    namespace: key.namespace,
    pod: key.podName,
    app: key.appName,
    appType: key.appType,
    pool: key.pool,
    node: a.nodeName,
    policy: releasePolicyName(a.policy) || 'delete',
    since: a.updateTime,
    state,
    releasable: judge(a, row.pod).releasable,
    ...(ttl !== undefined ? { ttlLeftMs: ttl } : {}),
    ...(leak ? { leak } : {}),
  };
}

export async function dashboard(deps: DashboardDeps, query: string, limit: number): Promise<DashboardJson> {
  const { allocator, clock } = deps;
  const now = clock();
  const pause = timeSlicer();
  const needle = query.trim().toLowerCase();
  const bySubnet = new Map<number, Counts>();
  const holders: Row[] = [];
  const parked: Row[] = [];
  const leaks: Row[] = [];
  // a snapshot: allocations may change while this pauses
  for (const [i, a] of [...allocator.all()].entries()) {
    if (i % 1024 === 0) await pause();
    const key = AllocationKey.parse(a.key);
    const state = stateOf(a, key);
    const entry = allocator.networkOf(a.ip)?.entry;
    if (entry !== undefined) {
      const counts = bySubnet.get(entry) ?? zero();
      counts[state]++;
      bySubnet.set(entry, counts);
    }
    if (needle && !`${a.ip} ${a.key} ${a.nodeName}`.toLowerCase().includes(needle)) continue;
    const pod = key.pod ? deps.pods.cached(key.pod.namespace, key.pod.name) : undefined;
    const leak = state === 'used' ? leakOf(a, key, pod) : undefined;
    const row = { a, key, state, pod, leak, order: ipOrder(a.ip) };
    holders.push(row);
    if (state === 'parked') parked.push(row);
    if (leak) leaks.push(row);
  }
  // only the first `limit` of each list, in address order, are looked at closely
  const first = async (rows: Row[]) =>
    (await sortedSliceSliced(rows, byAddress, 0, limit, pause)).map((r) =>
      holderJson(r, deps.parkedTtlMs, now),
    );

  const pools = deps.pools.list().sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const poolUsage = pools.map((p) => ({ pool: p, counts: poolCounts(allocator, p.name) }));
  const held = new Map(poolUsage.map(({ pool, counts }) => [pool.name, total(counts)]));
  deps.usage.record(now, freeCounts(allocator, pools, held));

  const subnets: SubnetUsageJson[] = allocator.stats().map((s) => ({
    entry: s.entry,
    subnet: s.subnet,
    family: s.family,
    total: s.total.toString(),
    excluded: s.excluded,
    ...(bySubnet.get(s.entry) ?? zero()),
    free: s.free.toString(),
    exhaustion: deps.usage.exhaustion(subnetSeries(s.entry)),
  }));
  const poolsJson: PoolUsageJson[] = poolUsage.map(({ pool, counts }) => ({
    name: pool.name,
    size: pool.size,
    ...poolProblem(pool),
    ...counts,
    free: String(Math.max(0, pool.size - total(counts))),
    exhaustion: deps.usage.exhaustion(poolSeries(pool.name)),
  }));
  return {
    now,
    subnets,
    pools: poolsJson,
    holders: await first(holders),
    parked: await first(parked),
    leaks: await first(leaks),
    matched: { holders: holders.length, parked: parked.length, leaks: leaks.length },
    parkedTtlMs: deps.parkedTtlMs,
    events: deps.events?.latest() ?? [],
  };
}

export function dashboardRoute(deps: DashboardDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const q = typeof req.query.q === 'string' ? req.query.q : '';
    const limit = typeof req.query.limit === 'number' ? req.query.limit : DASHBOARD_LIMIT;
    sendEnvelope(res, 200, '', { content: await dashboard(deps, q, limit) });
  };
}

/**
 * What makes a Pool admit no pod though the dashboard would show it as merely full: a size kubectl
 * could store and floatip reads as 0 (`1.5`) or below 0, as galaxy read it (docs/galaxy.md#pools-and-their-size).
 * Without it the page showed `size 0` for a Pool kubectl shows with size 1.5.
 */
function poolProblem(pool: StoredPool): { problem?: string } {
  if (pool.unreadable)
    return {
      problem: `its stored ${pool.unreadable}: read as 0, so it admits no pod until the Pool object is fixed`,
    };
  if (pool.size < 0) return { problem: `its size ${pool.size} is below 0, so it admits no pod` };
  return {};
}
