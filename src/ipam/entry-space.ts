// The address space of one configuration entry: its ranges laid end to end as ordinals 0..total-1,
// and which of them are taken. Nothing here ever materialises a range.
//
// Some addresses of the ranges are never handed out, whatever the ranges say: the pod subnet's
// network address, its IPv4 broadcast address, the gateway, and the IPv6 subnet-router anycast
// address (the network address again). Each is marked taken in the set from the start, so the
// search for a free address never sees it; an allocation of one (adopted, or written by galaxy) is
// still recorded and counted, and releasing it leaves it taken.
import { familyBits, formatAddress, formatIPv4Number } from './address.js';
import type { PoolEntry } from './config.js';
import { DenseOrdinalSet, SparseOrdinalSet } from './ordinal-set.js';

/** Spaces up to this many addresses (an IPv4 /12) use a bitmap (128 KiB at most); larger ones a sorted set. */
export const DENSE_LIMIT = 1 << 20;

/** A position in an entry's space: a number in a dense space, a bigint in a sparse one. */
export type Ordinal = number | bigint;

interface Segment {
  readonly first: bigint;
  readonly last: bigint;
  /** Ordinal of `first`. */
  readonly start: bigint;
  /** `first` and `start` as numbers where they fit exactly (always in dense IPv4 spaces). */
  readonly firstNumber: number;
  readonly startNumber: number;
}

export class EntrySpace {
  readonly total: bigint;
  /** Node subnets this entry serves, for membership tests. */
  readonly nodeSubnets: ReadonlySet<string>;
  /** Reserved allocations in this space. */
  reserved = 0;
  /** Ordinals never handed out (network, broadcast, gateway), ascending. */
  readonly excluded: readonly Ordinal[];
  /** Why each of `excluded` is, in the same order. */
  readonly excludedWhy: readonly ExclusionReason[];
  /** How many of the excluded ordinals an allocation holds. */
  private excludedHeld = 0;
  private readonly segments: readonly Segment[];
  private readonly dense: DenseOrdinalSet | undefined;
  private readonly sparse: SparseOrdinalSet | undefined;
  private readonly fastIPv4: boolean;

  constructor(
    readonly entry: PoolEntry,
    /** Position in gateway order: the order in which entries give addresses. */
    readonly rank: number,
  ) {
    let start = 0n;
    this.segments = entry.ranges.map((r) => {
      const segment = {
        first: r.first,
        last: r.last,
        start,
        firstNumber: Number(r.first),
        startNumber: Number(start),
      };
      start += r.last - r.first + 1n;
      return segment;
    });
    this.total = start;
    this.nodeSubnets = new Set(entry.nodeSubnets);
    if (start <= BigInt(DENSE_LIMIT)) this.dense = new DenseOrdinalSet(Number(start));
    else this.sparse = new SparseOrdinalSet(start);
    this.fastIPv4 = entry.family === 4 && this.dense !== undefined;
    const excluded = unusable(entry)
      .map(({ value, why }) => ({ ordinal: this.ordinalOf(value), why }))
      .filter((x): x is { ordinal: Ordinal; why: ExclusionReason } => x.ordinal !== undefined)
      .sort((a, b) => (a.ordinal < b.ordinal ? -1 : a.ordinal > b.ordinal ? 1 : 0))
      // the gateway may be the network address too (a /31): one reason per address is enough
      .filter((x, i, all) => i === 0 || all[i - 1]!.ordinal !== x.ordinal);
    this.excluded = excluded.map((x) => x.ordinal);
    this.excludedWhy = excluded.map((x) => x.why);
    for (const o of this.excluded) this.mark(o);
  }

  get family(): 4 | 6 {
    return this.entry.family;
  }

  /** Addresses held by allocations. */
  get allocated(): number {
    return this.marked - this.excluded.length + this.excludedHeld;
  }

  /** Addresses that can be handed out now. */
  get free(): bigint {
    return this.total - BigInt(this.marked);
  }

  private get marked(): number {
    return this.dense ? this.dense.count : this.sparse!.count;
  }

  isExcluded(ordinal: Ordinal): boolean {
    for (const o of this.excluded) if (o === ordinal) return true;
    return false;
  }

  /** The ordinal of an address, or undefined when the address is in none of this entry's ranges. */
  ordinalOf(value: bigint): Ordinal | undefined {
    const segment = this.segmentOfValue(value);
    if (!segment) return undefined;
    const ordinal = segment.start + (value - segment.first);
    return this.dense ? Number(ordinal) : ordinal;
  }

  valueOf(ordinal: Ordinal): bigint {
    const o = BigInt(ordinal);
    const segment = this.segmentOfOrdinal(o);
    return segment.first + (o - segment.start);
  }

  /** The canonical text of the address at an ordinal. */
  ipOf(ordinal: Ordinal): string {
    if (this.fastIPv4) {
      const o = ordinal as number;
      const segments = this.segments;
      let i = segments.length - 1;
      while (segments[i]!.startNumber > o) i--;
      const s = segments[i]!;
      return formatIPv4Number(s.firstNumber + (o - s.startNumber));
    }
    return formatAddress(this.entry.family, this.valueOf(ordinal));
  }

  /** Marks an ordinal held by an allocation (`reserved`: one an operator set aside). */
  take(ordinal: Ordinal, reserved: boolean): void {
    if (reserved) this.reserved++;
    if (this.excluded.length > 0 && this.isExcluded(ordinal)) this.excludedHeld++;
    else this.mark(ordinal);
  }

  /** Undoes take(ordinal, reserved). */
  give(ordinal: Ordinal, reserved: boolean): void {
    if (reserved) this.reserved--;
    if (this.excluded.length > 0 && this.isExcluded(ordinal)) this.excludedHeld--;
    else if (this.dense) this.dense.delete(ordinal as number);
    else this.sparse!.delete(ordinal as bigint);
  }

  private mark(ordinal: Ordinal): void {
    if (this.dense) this.dense.add(ordinal as number);
    else this.sparse!.add(ordinal as bigint);
  }

  /** The lowest free ordinal, or undefined when the space is full. */
  lowestFree(): Ordinal | undefined {
    if (this.dense) {
      const o = this.dense.firstFree(0);
      return o < 0 ? undefined : o;
    }
    const o = this.sparse!.firstFree(0n);
    return o < 0n ? undefined : o;
  }

  /** Up to `limit` free ordinals whose addresses lie in [first, last], lowest first. */
  freeBetween(first: bigint, last: bigint, limit: number): Ordinal[] {
    const found: Ordinal[] = [];
    for (const s of this.segments) {
      if (s.last < first || s.first > last || found.length >= limit) continue;
      const from = s.start + ((first > s.first ? first : s.first) - s.first);
      const to = s.start + ((last < s.last ? last : s.last) - s.first);
      if (this.dense) {
        const end = Number(to);
        for (let o = this.dense.firstFree(Number(from)); o >= 0 && o <= end && found.length < limit;) {
          found.push(o);
          o = this.dense.firstFree(o + 1);
        }
      } else {
        for (let o = this.sparse!.firstFree(from); o >= 0n && o <= to && found.length < limit;) {
          found.push(o);
          o = this.sparse!.firstFree(o + 1n);
        }
      }
    }
    return found;
  }

  private segmentOfValue(value: bigint): Segment | undefined {
    const segments = this.segments;
    let lo = 0;
    let hi = segments.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const s = segments[mid]!;
      if (value < s.first) hi = mid - 1;
      else if (value > s.last) lo = mid + 1;
      else return s;
    }
    return undefined;
  }

  private segmentOfOrdinal(ordinal: bigint): Segment {
    const segments = this.segments;
    let lo = 0;
    let hi = segments.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (segments[mid]!.start <= ordinal) lo = mid;
      else hi = mid - 1;
    }
    return segments[lo]!;
  }
}

export type ExclusionReason =
  'gateway' | 'network address' | 'broadcast address' | 'subnet-router anycast address';

/**
 * The addresses of an entry's pod subnet that no pod may get: the gateway, the network address
 * (for IPv6 the subnet-router anycast address, RFC 4291 2.6.1) and the IPv4 broadcast address,
 * except on point-to-point prefixes (IPv4 /31 and /32, RFC 3021; IPv6 /127 and /128, RFC 6164)
 * where every address is a host's.
 */
function unusable(entry: PoolEntry): { value: bigint; why: ExclusionReason }[] {
  const { family, network, prefix } = entry.subnet;
  const hostBits = familyBits(family) - prefix;
  const out: { value: bigint; why: ExclusionReason }[] = [{ value: entry.gateway, why: 'gateway' }];
  if (hostBits >= 2) {
    if (family === 4) {
      out.push({ value: network, why: 'network address' });
      out.push({ value: network + (1n << BigInt(hostBits)) - 1n, why: 'broadcast address' });
    } else {
      out.push({ value: network, why: 'subnet-router anycast address' });
    }
  }
  return out;
}
