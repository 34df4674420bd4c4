// One page of GET /v1/ip: the selection (ip-query.ts), sorted (galaxy's sort names, numeric IPs,
// ties to the lower IP), cut to the page (paging.ts). Only the page's items are looked at closely;
// the unfiltered list walks the address space instead of listing it (address-space.ts). Ranking and
// sorting a selection of 100,000 takes a few hundred milliseconds: it pauses every couple of
// milliseconds (time-slice.ts), so that the extender, which shares the event loop, is answered.
import { type Allocation, AllocationKey, type Allocator } from '../ipam/index.js';
import { AddressSpace } from './address-space.js';
import { type IPOrder, RUN, compareOrders, ipOrder, sortedSliceSliced } from './ip-order.js';
import { type IPFilters, selectIPs } from './ip-query.js';
import { type PageWindow, pageWindow } from './paging.js';
import { timeSlicer } from './time-slice.js';

export type SortField = 'ip' | 'namespace' | 'podname' | 'policy';

export interface SortOrder {
  readonly field: SortField;
  readonly descending: boolean;
}

/**
 * galaxy's sort values, case-insensitive but otherwise exact (its switch compares whole strings): `ip`,
 * `namespace`, `podname`, `policy`, each optionally with ` asc` or ` desc` after one space; anything
 * else, other spacing too, is IP ascending. (galaxy let a bare `namespace` fall back to IP order,
 * docs/galaxy.md#list-filters-and-sort.)
 */
export function parseSort(text: string): SortOrder {
  // Go's ToLower makes U+0130 a plain i, where JavaScript's adds a combining dot
  const lower = text.replace(/\u0130/g, 'i').toLowerCase();
  const match = /^(ip|namespace|podname|policy)(?: (asc|desc))?$/.exec(lower);
  if (!match) return { field: 'ip', descending: false };
  return { field: match[1] as SortField, descending: match[2] === 'desc' };
}

export interface ListedIP {
  readonly ip: string;
  /** undefined for a free address. */
  readonly allocation: Allocation | undefined;
}

export interface IPPage {
  readonly window: PageWindow;
  readonly items: readonly ListedIP[];
}

interface Ranked {
  readonly allocation: Allocation;
  readonly order: IPOrder;
  /** The sort field's value (namespace, pod name or policy); unused for IP order. */
  readonly value: string | number;
}

export async function listIPs(
  allocator: Allocator,
  filters: IPFilters,
  page: number,
  size: number,
  sort: SortOrder,
): Promise<IPPage> {
  const pause = timeSlicer();
  const selection = selectIPs(allocator, filters);
  if (selection.kind === 'everything') return everythingPage(allocator, page, size, sort, pause);
  const ranked: Ranked[] = [];
  for (const [i, a] of selection.allocations.entries()) {
    ranked.push(rank(a, sort.field));
    if (i % RUN === 0) await pause();
  }
  const window = pageWindow(BigInt(ranked.length), page, size);
  const slice = await sortedSliceSliced(
    ranked,
    comparator(sort),
    Number(window.start),
    Number(window.end),
    pause,
  );
  return { window, items: slice.map((r) => ({ ip: r.allocation.ip, allocation: r.allocation })) };
}

function valueOf(a: Allocation, field: SortField): string | number {
  if (field === 'policy') return a.policy;
  if (field === 'ip') return 0;
  const key = AllocationKey.parse(a.key);
  return field === 'namespace' ? key.namespace : key.podName;
}

const rank = (a: Allocation, field: SortField): Ranked => ({
  allocation: a,
  order: ipOrder(a.ip),
  value: valueOf(a, field),
});

function comparator(sort: SortOrder): (a: Ranked, b: Ranked) => number {
  const direction = sort.descending ? -1 : 1;
  if (sort.field === 'ip') return (a, b) => direction * compareOrders(a.order, b.order);
  // galaxy compares strings bytewise (Go's <), as does JavaScript's < on these ASCII names
  return (a, b) =>
    (a.value < b.value ? -direction : a.value > b.value ? direction : 0) || compareOrders(a.order, b.order);
}

/**
 * The unfiltered list: every configured address and every allocation. Sorted by IP, a page is a
 * walk of the address space. Sorted by a field, the addresses whose value is empty (free ones,
 * and allocations with no namespace / pod name / policy 0) form one block in IP order, first when
 * ascending and last when descending; the other allocations are sorted among themselves.
 */
async function everythingPage(
  allocator: Allocator,
  page: number,
  size: number,
  sort: SortOrder,
  pause: () => Promise<void>,
): Promise<IPPage> {
  const space = new AddressSpace(allocator.configuration, allocator.orphaned());
  const window = pageWindow(space.size, page, size);
  const count = window.numberOfElements;
  const fromSpace = (start: bigint, n: number, excluded?: bigint[]): ListedIP[] =>
    space.slice(start, n, excluded).map((ip) => ({ ip, allocation: allocator.get(ip) }));
  if (sort.field === 'ip') {
    if (!sort.descending) return { window, items: fromSpace(window.start, count) };
    return { window, items: fromSpace(space.size - window.end, count).reverse() };
  }
  const valued: Ranked[] = [];
  // a snapshot: allocations may change while this pauses
  for (const [i, a] of [...allocator.all()].entries()) {
    const value = valueOf(a, sort.field);
    if (value !== '' && value !== 0) valued.push({ allocation: a, order: ipOrder(a.ip), value });
    if (i % RUN === 0) await pause();
  }
  const blank = space.size - BigInt(valued.length);
  // where each block's ranks begin
  const blankAt = sort.descending ? BigInt(valued.length) : 0n;
  const valuedAt = sort.descending ? 0n : blank;
  const items: ListedIP[] = [];
  const pieces = [
    { at: valuedAt, length: BigInt(valued.length), valued: true },
    { at: blankAt, length: blank, valued: false },
  ].sort((a, b) => compareOrders(a.at, b.at));
  for (const piece of pieces) {
    const from = window.start > piece.at ? window.start : piece.at;
    const to = window.end < piece.at + piece.length ? window.end : piece.at + piece.length;
    if (from >= to) continue;
    if (piece.valued) {
      const slice = await sortedSliceSliced(
        valued,
        comparator(sort),
        Number(from - piece.at),
        Number(to - piece.at),
        pause,
      );
      items.push(...slice.map((r) => ({ ip: r.allocation.ip, allocation: r.allocation })));
    } else {
      const excluded = valued.map((r) => BigInt(r.order)).sort((a, b) => compareOrders(a, b));
      items.push(...fromSpace(from - piece.at, Number(to - from), excluded));
    }
  }
  return { window, items };
}
