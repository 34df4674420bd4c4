// The end of a rollout (docs/galaxy.md#rolling-updates): surge pods may have taken new addresses while old pods'
// addresses were parked, so the app may hold more than it had. When the rollout ends, parked
// surplus beyond what the app held before it (immutable: beyond replicas) is released, oldest
// parked first. Addresses of pods are never touched.
import type { V1Deployment } from '@kubernetes/client-node';
import { type Allocation, AllocationKey, type Family, ReleasePolicy } from '../ipam/index.js';
import { type LifecycleDeps, releaseDecided } from './lifecycle-deps.js';
import { rolloutOf } from './workloads.js';

export class RolloutTrim {
  /** Addresses (per family) an app held when its rollout began, so its end trims only what the rollout added. */
  private readonly beforeRollout = new Map<string, Record<Family, number>>();

  constructor(
    private readonly deps: Pick<LifecycleDeps, 'store' | 'locks' | 'events' | 'log' | 'observer'>,
  ) {}

  private get allocator() {
    return this.deps.store.allocator;
  }

  /** A Deployment changed: a rollout may have begun or ended. Never rejects; a failed trim is logged. */
  async onDeployment(deployment: V1Deployment, old: V1Deployment | undefined): Promise<void> {
    if (!old) return;
    const { locks, log, observer } = this.deps;
    const was = rolloutOf(old).rolling;
    const now = rolloutOf(deployment);
    const namespace = deployment.metadata?.namespace ?? 'default';
    const name = deployment.metadata?.name ?? '';
    const prefix = AllocationKey.fromParts('dp_', namespace, name, '', '').text;
    // replicas or the rollout's surge allowance may have grown
    observer?.appChanged?.(prefix);
    if (!was && now.rolling) {
      const held = this.allocator.byPrefix(prefix);
      this.beforeRollout.set(prefix, {
        4: held.filter((a) => a.family === 4).length,
        6: held.filter((a) => a.family === 6).length,
      });
    }
    if (was && !now.rolling) {
      const before = this.beforeRollout.get(prefix);
      this.beforeRollout.delete(prefix);
      try {
        await locks.app(prefix, () => this.trim(prefix, now.replicas, before));
        observer?.appChanged?.(prefix);
      } catch (err) {
        log.warn({ app: prefix, err: (err as Error).message }, 'rollout trim failed');
      }
    }
  }

  private async trim(
    prefix: string,
    replicas: number,
    before: Record<Family, number> | undefined,
  ): Promise<void> {
    const parked = this.allocator.byKey(prefix).filter((a) => !a.reserved);
    if (parked.length === 0) return;
    const immutable = parked.some((a) => a.policy === ReleasePolicy.Immutable);
    // a never app that was not seen starting its rollout keeps everything (galaxy's never)
    if (!immutable && before === undefined) return;
    for (const family of [4, 6] as const) {
      const ofFamily = (a: Allocation) => a.family === family;
      const total = this.allocator.byPrefix(prefix).filter(ofFamily).length;
      const target = immutable ? replicas : Math.max(replicas, before![family]);
      const surplus = parked
        .filter(ofFamily)
        .sort((a, b) => a.updateTime - b.updateTime)
        .slice(0, Math.max(0, total - target));
      const reason = `rollout ended: ${total} addresses for ${target}`;
      for (const allocation of surplus) {
        const owner = { key: prefix, podUid: '' };
        const decidedAt = this.deps.store.versionOf(allocation.ip);
        await releaseDecided(this.deps, allocation, owner, 'rollout', reason, decidedAt);
      }
    }
  }
}
