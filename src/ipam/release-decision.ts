// What happens to a pod's address when the pod is gone (deleted, evicted, finished): one pure
// function of the policy, the workload kind and the workload's state (docs/galaxy.md#the-release-table). Policy
// apart from mechanism: the lifecycle controller gathers the facts and carries the answer out.
import { type AllocationKey, ordinalOf } from './keys.js';
import { ReleasePolicy } from './policy.js';

export type ReleaseAction =
  /** Back to the free list (the FloatingIP object is deleted). */
  | { readonly kind: 'release'; readonly why: string }
  /** Kept for the app: re-keyed to its parking key, node and pod UID cleared. */
  | { readonly kind: 'park'; readonly to: string; readonly why: string }
  /** Kept on the pod's own key (StatefulSet-like), node and pod UID cleared. */
  | { readonly kind: 'keep'; readonly why: string };

/** The workload's state, as the controller sees it now. */
export interface WorkloadFacts {
  /** Whether the parent app (Deployment, StatefulSet, scalable custom workload) exists. */
  readonly exists: boolean;
  /** Its desired replicas (0 when it does not exist). */
  readonly replicas: number;
  /** A Deployment whose rollout is in progress (docs/galaxy.md#rolling-updates: surge pods may hold an extra address). */
  readonly rollingOut?: boolean;
  /**
   * For Deployments: addresses the app holds in the family being decided, parked ones and this
   * pod's included (galaxy's N in docs/galaxy.md#the-release-table).
   */
  readonly held?: number;
  /** Why the policy cannot apply to this kind of pod (docs/galaxy.md#support-check-supportreserveippolicy), when it cannot. */
  readonly unsupported?: string;
}

export function decideRelease(
  key: AllocationKey,
  policy: ReleasePolicy,
  workload: WorkloadFacts,
): ReleaseAction {
  if (policy === ReleasePolicy.PodDelete) return { kind: 'release', why: 'deletedAndIPMutablePod' };
  if (key.isDeployment()) {
    const to = key.poolPrefix;
    if (policy === ReleasePolicy.Never)
      return { kind: 'park', to, why: 'never release policy: parked for the app' };
    if (!workload.exists || workload.replicas === 0)
      return { kind: 'release', why: 'deletedAndParentAppNotExistPod' };
    // during a rollout the surge pods need the addresses old pods leave: park, trim when it ends
    if (workload.rollingOut) return { kind: 'park', to, why: 'rollout in progress: parked for the next pod' };
    const held = workload.held ?? 0;
    if (held > workload.replicas) {
      return {
        kind: 'release',
        why: `deletedAndScaledDownDpPod: allocated ${held} > replicas ${workload.replicas}`,
      };
    }
    return {
      kind: 'park',
      to,
      why: `allocated ${held} <= replicas ${workload.replicas}: parked for the app`,
    };
  }
  if (workload.unsupported) return { kind: 'release', why: `policy not supported: ${workload.unsupported}` };
  if (policy === ReleasePolicy.Never)
    return { kind: 'keep', why: 'never release policy: kept on the pod key' };
  if (!workload.exists) return { kind: 'release', why: 'deletedAndParentAppNotExistPod' };
  const index = ordinalOf(key.podName);
  // galaxy's unbind fails here and the address stays with the key: never free what cannot be judged
  if (index === undefined) return { kind: 'keep', why: `invalid pod name of key ${key.text}: kept` };
  if (workload.replicas < index + 1) {
    return {
      kind: 'release',
      why: `deletedAndScaledDownAppPod: index ${index} >= replicas ${workload.replicas}`,
    };
  }
  return { kind: 'keep', why: 'pod index is less than replicas: kept on the pod key' };
}
