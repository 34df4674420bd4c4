// `kubectl fip usage`: per configured subnet entry and per Pool, how many addresses are used,
// parked, reserved and free, and when the free ones run out at the recent allocation rate.
// The rate is what the objects can tell: the addresses of a row whose FloatingIP object was created
// within the window and is still there. A released address's object is gone, so the rate counts
// allocations still held, not releases; an address re-keyed (unparked) keeps its old object and
// does not count again. The time to exhaustion is free / rate.
import { POOL_KEY_PREFIX, ofMainFamily } from '../ipam/index.js';
import { type Holder, holders } from './holders.js';
import type { Snapshot } from './snapshot.js';

export interface UsageRow {
  /** `entry <n>` for a configured entry, `pool <name>` for a Pool. */
  readonly kind: 'subnet' | 'pool';
  readonly name: string;
  /** The entry's node subnets, or "" for a pool. */
  readonly nodeSubnets: string;
  readonly total: bigint;
  readonly used: number;
  readonly parked: number;
  readonly reserved: number;
  readonly free: bigint;
  /** Allocations within the window that are still held. */
  readonly recent: number;
  /** Milliseconds until no address is free at that rate; undefined when the rate is 0. */
  readonly exhaustedInMs: number | undefined;
}

interface Counts {
  used: number;
  parked: number;
  reserved: number;
  recent: number;
}

export function usage(snapshot: Snapshot, windowMs: number): UsageRow[] {
  const list = holders(snapshot);
  const since = snapshot.now - windowMs;
  const count = (of: readonly Holder[]): Counts => {
    const c: Counts = { used: 0, parked: 0, reserved: 0, recent: 0 };
    for (const h of of) {
      if (h.state === 'reserved') c.reserved++;
      else if (h.state === 'parked' || h.state === 'kept') c.parked++;
      else c.used++;
      if ((snapshot.createdAt.get(h.allocation.ip) ?? 0) >= since) c.recent++;
    }
    return c;
  };
  const eta = (free: bigint, recent: number) =>
    recent === 0 ? undefined : Number(free) * (windowMs / recent);
  const rows: UsageRow[] = [];
  const entries = snapshot.allocator.configuration.entries;
  for (const s of snapshot.allocator.stats()) {
    const c = count(list.filter((h) => snapshot.allocator.networkOf(h.allocation.ip)?.entry === s.entry));
    rows.push({
      kind: 'subnet',
      name: s.subnet,
      nodeSubnets: (entries.find((e) => e.index === s.entry)?.nodeSubnets ?? []).join(','),
      total: s.total,
      ...c,
      free: s.free,
      exhaustedInMs: eta(s.free, c.recent),
    });
  }
  for (const pool of [...snapshot.pools].sort((a, b) => a.name.localeCompare(b.name))) {
    // in pods' worth, as the size counts (a dual-stack pod holds two addresses)
    const c = count(
      ofMainFamily(
        list.filter((h) => h.allocation.key.startsWith(`${POOL_KEY_PREFIX}${pool.name}_`)),
        (h) => h.allocation.family,
      ),
    );
    const held = c.used + c.parked + c.reserved;
    const free = BigInt(Math.max(0, pool.size - held));
    rows.push({
      kind: 'pool',
      name: pool.name,
      nodeSubnets: '',
      total: BigInt(pool.size),
      ...c,
      free,
      exhaustedInMs: eta(free, c.recent),
    });
  }
  return rows;
}

/** A duration for people: `40s`, `12m`, `3.5h`, `9d`; `never` for none. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined) return 'never';
  if (ms < 120_000) return `${Math.round(ms / 1000)}s`;
  if (ms < 3 * 3_600_000) return `${Math.round(ms / 60_000)}m`;
  if (ms < 72 * 3_600_000) return `${(ms / 3_600_000).toFixed(1)}h`;
  return `${Math.round(ms / 86_400_000)}d`;
}
