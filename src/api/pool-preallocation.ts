// POST /v1/pool with preAllocateIP (docs/galaxy.md#creating-a-pool-and-pre-allocating): park addresses at the pool's key `pool__<name>_`
// (policy never, no node, no pod) until the pool holds `size` pods' worth, under the pool's app
// lock (the one bind takes to hand parked pool addresses out), so the count it decides on holds.
// galaxy starts in a random node subnet; floatip goes through them in name order, each until it
// runs dry. One pod's worth is one address per family the node subnet serves (dual stack: two).
import {
  type Allocator,
  NoFreeIPError,
  POOL_KEY_PREFIX,
  ReleasePolicy,
  ofMainFamily,
} from '../ipam/index.js';
import type { DecisionLocks } from '../store/decision-locks.js';
import type { Logger } from '../log.js';
import type { FloatingIPStore } from '../store/floating-ip-store.js';

export interface PreallocationDeps {
  readonly allocator: Allocator;
  readonly store: Pick<FloatingIPStore, 'allocate'>;
  readonly locks: DecisionLocks;
  readonly log: Logger;
}

export interface Preallocation {
  /** The pool's size in pods' worth of addresses afterwards (galaxy: its count of IPs). */
  readonly realPoolSize: number;
  /** Whether it reached the size asked for. */
  readonly enough: boolean;
}

export const poolKey = (name: string): string => `${POOL_KEY_PREFIX}${name}_`;

/**
 * The most pods' worth one request may pre-allocate: each is a FloatingIP object written in turn,
 * and an IPv6 /64 never runs dry, so without a bound one request could write for hours. A larger
 * pool grows in steps of this size.
 */
export const PREALLOCATION_LIMIT = 10_000;

/** Pods' worth of addresses a pool holds, parked or in use: its count in the family it has most of. */
export function poolHoldings(allocator: Allocator, name: string): number {
  return ofMainFamily(allocator.byPool(name), (a) => a.family).length;
}

export function preallocatePool(
  deps: PreallocationDeps,
  name: string,
  size: number,
  actor: string,
): Promise<Preallocation> {
  const { allocator, store, log } = deps;
  const key = poolKey(name);
  return deps.locks.app(key, async () => {
    let have = poolHoldings(allocator, name);
    const subnets = [...allocator.nodeSubnetsFor()].sort();
    // galaxy's order: no free address anywhere is "No enough IPs" even for a pool already full
    if (subnets.length === 0) return { realPoolSize: have, enough: false };
    if (size <= have) return { realPoolSize: have, enough: true };
    const attrs = { policy: ReleasePolicy.Never, nodeName: '', podUid: '' };
    for (const nodeSubnet of subnets) {
      while (have < size) {
        try {
          const made = await store.allocate({
            key,
            nodeSubnet,
            attrs,
            families: allocator.familiesServing(nodeSubnet),
          });
          have++;
          log.info(
            { pool: name, key, ip: made.map((a) => a.ip), nodeSubnet, actor },
            'pool address pre-allocated',
          );
        } catch (err) {
          if (err instanceof NoFreeIPError) break;
          throw err;
        }
      }
      if (have >= size) break;
    }
    return { realPoolSize: have, enough: have >= size };
  });
}
