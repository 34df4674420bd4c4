// What the lifecycle's pieces (pod-gone, adoption, leaks, parked-ttl, rollout-trim) work with,
// and the one way they release an address: through releaseAudited, as the REST API does, so that
// every release leaves its Event and audit line whatever its cause.
import type { Allocation, Owner, ReleaseAction } from '../ipam/index.js';
import type { EventRecorder } from '../kube/events.js';
import type { PodLookup } from '../kube/pod-lookup.js';
import type { Logger } from '../log.js';
import type { DecisionLocks } from '../store/decision-locks.js';
import type { FloatingIPStore } from '../store/floating-ip-store.js';
import { type ReleaseCause, releaseAudited } from '../store/release-audit.js';
import type { Workloads } from './workloads.js';

/** The store's conditional writes the lifecycle makes, and the allocator it decides on. */
export type LifecycleStore = Pick<
  FloatingIPStore,
  'allocator' | 'versionOf' | 'release' | 'rekey' | 'update' | 'allocateIP'
>;

/** What the lifecycle did, for metrics and requeues. */
export interface LifecycleObserver {
  /** An address released, parked or kept, and why. */
  released?(allocation: Allocation, action: ReleaseAction, cause: ReleaseCause): void;
  leakFound?(allocation: Allocation, reason: string): void;
  /** A resync pass ended: every allocation checked (success), or not (failure). */
  resynced?(outcome: 'success' | 'failure'): void;
  /** A release job tried again. */
  retried?(): void;
  /**
   * An incarnation of the pod namespace/name has been dealt with (its deletion processed, or its
   * addresses settled after a newer one was found): a newer one refused by the UID rule may go on.
   */
  settled?(namespace: string, name: string): void;
  /**
   * An address under this key was released or parked, or the app's limit may have changed (its
   * Deployment changed): pods refused because their app was at its limit may go on.
   */
  appChanged?(key: string): void;
}

export interface LifecycleDeps {
  readonly store: LifecycleStore;
  readonly workloads: Pick<Workloads, 'factsFor' | 'followFor'>;
  readonly pods: PodLookup;
  readonly locks: DecisionLocks;
  /** Where releases are audited (an Event on the FloatingIP object), besides the log. */
  readonly events: EventRecorder;
  readonly log: Logger;
  readonly observer?: LifecycleObserver;
}

/** The audit trail's actor for every release the lifecycle makes. */
export const LIFECYCLE_ACTOR = 'floatip lifecycle';

/**
 * Releases an address (conditional on `owner` and the version `decidedAt` the decision saw),
 * audits it and counts it.
 */
export async function releaseDecided(
  deps: Pick<LifecycleDeps, 'store' | 'events' | 'log' | 'observer'>,
  allocation: Allocation,
  owner: Owner,
  cause: Exclude<ReleaseCause, 'rest'>,
  reason: string,
  decidedAt: bigint | undefined,
): Promise<void> {
  const attribution = { actor: LIFECYCLE_ACTOR, via: cause, reason };
  await releaseAudited(deps.store, deps, allocation.ip, owner, attribution, decidedAt);
  deps.observer?.released?.(allocation, { kind: 'release', why: reason }, cause);
}
