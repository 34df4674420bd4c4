// Addresses in numeric order: IPv4 before IPv6, each by value (galaxy compared the text, so
// 10.0.0.10 came before 10.0.0.9, docs/galaxy.md#list-filters-and-sort). One totally ordered number line for both families: an
// IPv4 address is its value (a plain number, fast to compare), an IPv6 address is 2^32 + its value
// (a bigint). JavaScript compares a number with a bigint exactly, so `<` orders the mixture.
import { type Family, formatAddress, parseAddress } from '../ipam/index.js';

export type IPOrder = number | bigint;

const V6_BASE = 1n << 32n;

export const orderOf = (family: Family, value: bigint): IPOrder =>
  family === 4 ? Number(value) : V6_BASE + value;

export function ipOrder(ip: string): IPOrder {
  const a = parseAddress(ip);
  return orderOf(a.family, a.value);
}

/** The canonical text of the address at a point of the number line. */
export function ipAt(order: bigint): string {
  return order < V6_BASE ? formatAddress(4, order) : formatAddress(6, order - V6_BASE);
}

export const compareOrders = (a: IPOrder, b: IPOrder): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Elements [start, end) of `items` as if sorted by `compare`, without sorting all of them when the
 * page is near the front: a bounded max-heap keeps the `end` smallest, O(n log end).
 */
export function sortedSlice<T>(
  items: readonly T[],
  compare: (a: T, b: T) => number,
  start: number,
  end: number,
): T[] {
  end = Math.min(end, items.length);
  if (start >= end) return [];
  if (items.length <= 1024 || end > items.length / 8) return [...items].sort(compare).slice(start, end);
  const heap: T[] = [];
  const above = (i: number, j: number) => compare(heap[i]!, heap[j]!) > 0;
  const swap = (i: number, j: number) => {
    const t = heap[i]!;
    heap[i] = heap[j]!;
    heap[j] = t;
  };
  for (const item of items) {
    if (heap.length < end) {
      heap.push(item);
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1;
        if (!above(i, parent)) break;
        swap(i, parent);
        i = parent;
      }
    } else if (compare(item, heap[0]!) < 0) {
      heap[0] = item;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let top = i;
        if (l < heap.length && above(l, top)) top = l;
        if (r < heap.length && above(r, top)) top = r;
        if (top === i) break;
        swap(i, top);
        i = top;
      }
    }
  }
  return heap.sort(compare).slice(start);
}

/** How many items are sorted (or ranked) between two pauses: about a millisecond of work. */
export const RUN = 4096;

/**
 * sortedSlice for lists the event loop must not wait on (the extender shares it): runs of RUN items
 * are cut to their first `end` in order between pauses, then merged, pausing as it goes, up to
 * `end`. The same answer as sortedSlice for a total order.
 */
export async function sortedSliceSliced<T>(
  items: readonly T[],
  compare: (a: T, b: T) => number,
  start: number,
  end: number,
  pause: () => Promise<void>,
): Promise<T[]> {
  end = Math.min(end, items.length);
  if (start >= end) return [];
  if (items.length <= RUN) return sortedSlice(items, compare, start, end);
  const runs: T[][] = [];
  for (let i = 0; i < items.length; i += RUN) {
    runs.push(sortedSlice(items.slice(i, i + RUN), compare, 0, end));
    await pause();
  }
  // a heap of the runs' next items, smallest on top
  const heads = runs.map((run, r) => ({ r, i: 0, item: run[0]! }));
  const below = (a: number, b: number) => compare(heads[a]!.item, heads[b]!.item) < 0;
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      let top = i;
      if (l < heads.length && below(l, top)) top = l;
      if (l + 1 < heads.length && below(l + 1, top)) top = l + 1;
      if (top === i) return;
      [heads[i], heads[top]] = [heads[top]!, heads[i]!];
      i = top;
    }
  };
  for (let i = (heads.length >> 1) - 1; i >= 0; i--) down(i);
  const out: T[] = [];
  while (out.length < end && heads.length > 0) {
    const head = heads[0]!;
    out.push(head.item);
    const run = runs[head.r]!;
    if (++head.i < run.length) {
      head.item = run[head.i]!;
    } else {
      // the run is used up: its place goes to the last head
      heads[0] = heads[heads.length - 1]!;
      heads.pop();
    }
    if (heads.length > 0) down(0);
    if (out.length % RUN === 0) await pause();
  }
  return out.slice(start);
}
