// Every address the list shows when no filter is given (galaxy: every configured IP, free ones
// included), without materialising it: a /64 of IPv6 has 2^64 of them. The configured ranges (and
// the orphans, allocations outside them) are disjoint segments of the number line in ip-order.ts;
// a page is found by walking segment sizes, O(segments + excluded + page), whatever the count.
import type { Allocation, PoolConfig } from '../ipam/index.js';
import { ipAt, ipOrder, orderOf } from './ip-order.js';

interface Segment {
  readonly first: bigint;
  readonly last: bigint;
}

export class AddressSpace {
  private readonly segments: Segment[];
  /** How many addresses there are. */
  readonly size: bigint;

  constructor(config: PoolConfig, orphans: Iterable<Allocation>) {
    const segments: Segment[] = [];
    for (const entry of config.entries) {
      for (const range of entry.ranges) {
        segments.push({
          first: BigInt(orderOf(range.family, range.first)),
          last: BigInt(orderOf(range.family, range.last)),
        });
      }
    }
    for (const orphan of orphans) {
      const at = BigInt(ipOrder(orphan.ip));
      segments.push({ first: at, last: at });
    }
    segments.sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
    this.segments = segments;
    this.size = segments.reduce((n, s) => n + s.last - s.first + 1n, 0n);
  }

  /**
   * Up to `count` addresses in ascending order, starting at rank `start` of the sequence that
   * leaves out `excluded` (ascending points of the space, each in it).
   */
  slice(start: bigint, count: number, excluded: readonly bigint[] = []): string[] {
    const out: string[] = [];
    let skip = start;
    let x = 0;
    for (const segment of this.segments) {
      if (out.length >= count) break;
      while (x < excluded.length && excluded[x]! < segment.first) x++;
      let end = x;
      while (end < excluded.length && excluded[end]! <= segment.last) end++;
      const available = segment.last - segment.first + 1n - BigInt(end - x);
      if (skip >= available) {
        skip -= available;
        x = end;
        continue;
      }
      // the skip-th address not left out: each excluded point at or below it pushes it one further
      let at = segment.first + skip;
      skip = 0n;
      while (x < end && excluded[x]! <= at) {
        at++;
        x++;
      }
      while (out.length < count && at <= segment.last) {
        if (x < end && excluded[x] === at) x++;
        else out.push(ipAt(at));
        at++;
      }
      x = end;
    }
    return out;
  }
}
