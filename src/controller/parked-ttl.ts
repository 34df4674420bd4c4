// Parked addresses of workloads that are gone (galaxy keeps them forever,
// docs/galaxy.md#parked-addresses-kept-forever). An `immutable` address parked at its Deployment's
// key is kept only while the app wants it: once two resync passes in a row find the Deployment gone
// (one may read a cache a beat behind), it is released. A `never` address parked at the key of an
// app that no longer exists is released once it has been parked longer than --parked-ip-ttl
// (floatip's own; off by default). Pools are shared and sized by their object: theirs stay.
import { type Allocation, AllocationKey, IpamError, ReleasePolicy } from '../ipam/index.js';
import type { ReleaseCause } from '../store/release-audit.js';
import { type LifecycleDeps, releaseDecided } from './lifecycle-deps.js';

export const TTL_REASON = 'parked longer than --parked-ip-ttl; its workload is gone';
export const IMMUTABLE_GONE_REASON =
  'parked for its Deployment, which is gone: immutable keeps it only while its app wants it';

export class ParkedTtl {
  /** Immutable parked addresses whose Deployment the last pass found gone. */
  private goneBefore = new Set<string>();

  constructor(
    private readonly deps: Pick<LifecycleDeps, 'store' | 'workloads' | 'events' | 'log' | 'observer'>,
    /** 0 turns the expiry of `never` addresses off. */
    private readonly ttlMs: number,
    /** Milliseconds since the epoch, as the allocations' updateTime. */
    private readonly clock: () => number,
  ) {}

  /** Why `allocation` is released if its workload is gone, and as what; undefined to keep it. */
  private expiry(
    allocation: Allocation,
    key: AllocationKey,
    cutoff: number,
  ): { cause: Exclude<ReleaseCause, 'rest'>; reason: string } | undefined {
    if (allocation.reserved || allocation.nodeName || allocation.podUid) return undefined;
    if (key.pool || !key.appName) return undefined;
    if (allocation.policy === ReleasePolicy.Immutable && !key.podName && key.isDeployment())
      return { cause: 'leak', reason: IMMUTABLE_GONE_REASON };
    if (allocation.policy === ReleasePolicy.Never && this.ttlMs > 0 && allocation.updateTime <= cutoff)
      return { cause: 'ttl', reason: TTL_REASON };
    return undefined;
  }

  /** Releases what has expired (a resync pass's last step). */
  async expire(): Promise<void> {
    const { store, workloads, log } = this.deps;
    const cutoff = this.clock() - this.ttlMs;
    const goneNow = new Set<string>();
    for (const allocation of [...store.allocator.all()]) {
      const key = AllocationKey.parse(allocation.key);
      const expired = this.expiry(allocation, key, cutoff);
      if (!expired) continue;
      const facts = await workloads.factsFor(key, ReleasePolicy.PodDelete);
      if (facts.exists) continue;
      if (expired.cause === 'leak') {
        goneNow.add(`${allocation.ip} ${allocation.key}`);
        if (!this.goneBefore.has(`${allocation.ip} ${allocation.key}`)) continue;
      }
      const owner = { key: allocation.key, podUid: '' };
      try {
        await releaseDecided(
          this.deps,
          allocation,
          owner,
          expired.cause,
          expired.reason,
          store.versionOf(allocation.ip),
        );
      } catch (err) {
        // an IpamError: it changed hands meanwhile, nothing to expire
        if (!(err instanceof IpamError))
          log.warn({ ip: allocation.ip, err: (err as Error).message }, 'parked address release failed');
      }
    }
    this.goneBefore = goneNow;
  }
}
