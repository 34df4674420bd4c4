// --parked-ip-ttl (floatip's own; galaxy keeps parked addresses forever, docs/galaxy.md#parked-addresses-kept-forever): a `never` address
// parked at the key of an app that no longer exists is released once it has been parked longer
// than the TTL. Pools are shared and sized by their object: theirs stay.
import { AllocationKey, IpamError, ReleasePolicy } from '../ipam/index.js';
import { type LifecycleDeps, releaseDecided } from './lifecycle-deps.js';

export const TTL_REASON = 'parked longer than --parked-ip-ttl; its workload is gone';

export class ParkedTtl {
  constructor(
    private readonly deps: Pick<LifecycleDeps, 'store' | 'workloads' | 'events' | 'log' | 'observer'>,
    /** 0 turns the expiry off. */
    private readonly ttlMs: number,
    /** Milliseconds since the epoch, as the allocations' updateTime. */
    private readonly clock: () => number,
  ) {}

  /** Releases what has expired (a resync pass's last step). */
  async expire(): Promise<void> {
    if (this.ttlMs <= 0) return;
    const { store, workloads, log } = this.deps;
    const cutoff = this.clock() - this.ttlMs;
    for (const allocation of [...store.allocator.all()]) {
      if (allocation.reserved || allocation.policy !== ReleasePolicy.Never || allocation.updateTime > cutoff)
        continue;
      if (allocation.nodeName || allocation.podUid) continue;
      const key = AllocationKey.parse(allocation.key);
      if (key.pool || !key.appName) continue;
      const facts = await workloads.factsFor(key, ReleasePolicy.PodDelete);
      if (facts.exists) continue;
      const owner = { key: allocation.key, podUid: '' };
      try {
        await releaseDecided(this.deps, allocation, owner, 'ttl', TTL_REASON, store.versionOf(allocation.ip));
      } catch (err) {
        // an IpamError: it changed hands meanwhile, nothing to expire
        if (!(err instanceof IpamError))
          log.warn({ ip: allocation.ip, err: (err as Error).message }, 'TTL release failed');
      }
    }
  }
}
