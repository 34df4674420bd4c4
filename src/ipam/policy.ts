// Release policies (docs/galaxy.md#policy-values): when an address goes back to the free list after its pod is gone.
// The numbers are stored in FloatingIP objects (`spec.policy`), so they are a compatibility contract.

export enum ReleasePolicy {
  /** Release as soon as the pod is deleted or finished. */
  PodDelete = 0,
  /** Release only when the app is deleted or scaled down; a re-created pod gets the same address. */
  Immutable = 1,
  /** Never release automatically; re-creating the app reuses the addresses. */
  Never = 2,
}

export const isReleasePolicy = (n: unknown): n is ReleasePolicy => n === 0 || n === 1 || n === 2;

/** The annotation value of each policy ("" for the default). */
export function releasePolicyName(policy: ReleasePolicy): string {
  return policy === ReleasePolicy.Immutable ? 'immutable' : policy === ReleasePolicy.Never ? 'never' : '';
}

/**
 * A pod's policy from its release-policy and pool annotation values (undefined when absent).
 * A pool forces `never`; anything but exactly `immutable` or `never` is the default.
 */
export function releasePolicyOf(annotations: { policy?: string; pool?: string }): ReleasePolicy {
  if (annotations.pool) return ReleasePolicy.Never;
  if (annotations.policy === 'immutable') return ReleasePolicy.Immutable;
  if (annotations.policy === 'never') return ReleasePolicy.Never;
  return ReleasePolicy.PodDelete;
}
