// Which IPs GET /v1/ip selects (docs/galaxy.md#listing-ips), galaxy's key-prefix rules where they work and exact
// matching where galaxy's did not (docs/galaxy.md#list-filters-and-sort):
// - `keyword`: allocated IPs whose key contains it (galaxy's fuzzy mode; other filters ignored);
// - nothing: every configured address, free ones included (galaxy), and the orphans;
// - `poolName` without `appName`: the pool's IPs, `pool__<name>_...` (galaxy);
// - `namespace` + `appName`: the app's keys by its exact prefix including the trailing `_`
//   (`appType` defaulting to statefulset, as galaxy); with `podName` exactly that pod's key
//   (galaxy's prefix also matched `x-10` for `x-1`);
// - anything else (galaxy's prefix matched nothing, e.g. `namespace` alone, or everything, e.g.
//   `podName` alone): the keys whose parsed parts equal the given ones, any app type unless
//   `appType` is given, any pool unless `poolName` is given.
import { type Allocation, AllocationKey, type Allocator, typePrefixOfAppType } from '../ipam/index.js';

export interface IPFilters {
  readonly keyword: string;
  readonly poolName: string;
  readonly appName: string;
  readonly podName: string;
  readonly namespace: string;
  readonly appType: string;
}

export type Selection =
  /** Every configured address and every allocation (the unfiltered list). */
  | { readonly kind: 'everything' }
  | { readonly kind: 'allocations'; readonly allocations: readonly Allocation[] };

export function selectIPs(allocator: Allocator, f: IPFilters): Selection {
  if (f.keyword) return { kind: 'allocations', allocations: allocator.byKeyword(f.keyword) };
  if (!f.poolName && !f.namespace && !f.appName && !f.podName && !f.appType) return { kind: 'everything' };
  if (f.poolName && !f.appName) {
    // byPool, not the prefix pool__<name>_: that also starts every key of pool <name>_<more>
    return { kind: 'allocations', allocations: allocator.byPool(f.poolName) };
  }
  if (f.namespace && f.appName) {
    const key = AllocationKey.fromParts(
      typePrefixOfAppType(f.appType),
      f.namespace,
      f.appName,
      f.podName,
      f.poolName,
    ).text;
    return { kind: 'allocations', allocations: f.podName ? allocator.byKey(key) : allocator.byPrefix(key) };
  }
  return { kind: 'allocations', allocations: matchParts(allocator, f) };
}

/** Allocations whose key has exactly the given parts; one pass, each distinct key parsed once. */
function matchParts(allocator: Allocator, f: IPFilters): Allocation[] {
  const type = f.appType ? typePrefixOfAppType(f.appType) : undefined;
  const verdicts = new Map<string, boolean>();
  const matches = (text: string): boolean => {
    let verdict = verdicts.get(text);
    if (verdict === undefined) {
      const key = AllocationKey.parse(text);
      verdict =
        (!f.poolName || key.pool === f.poolName) &&
        (!f.namespace || key.namespace === f.namespace) &&
        (!f.appName || key.appName === f.appName) &&
        (!f.podName || key.podName === f.podName) &&
        (type === undefined || key.typePrefix === type);
      verdicts.set(text, verdict);
    }
    return verdict;
  };
  const out: Allocation[] = [];
  for (const a of allocator.all()) if (matches(a.key)) out.push(a);
  return out;
}
