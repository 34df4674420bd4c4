// A Pool's size counts pods, and a pod in a dual-stack node subnet holds an address of each family:
// what a pool holds, in pods' worth, is its addresses of the family it holds most of. Pre-allocation,
// the webhook's size warning, the dashboard and `kubectl fip usage` all count this way.
import type { Family } from './address.js';

/** The items of the address family most of them have (IPv4 on a tie): one per pod's worth. */
export function ofMainFamily<T>(items: readonly T[], familyOf: (item: T) => Family): T[] {
  const v6 = items.filter((item) => familyOf(item) === 6);
  return v6.length > items.length - v6.length ? v6 : items.filter((item) => familyOf(item) === 4);
}
