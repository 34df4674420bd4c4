// What the extender's verbs share: a pod's placement request in the core's terms, where its app's
// facts come from, and who hears of refusals floatip will clear itself.
import type { V1Pod } from '@kubernetes/client-node';
import type { AllocationKey, AppFacts, PlacementRequest, ReleasePolicy } from '../ipam/index.js';
import { cniArgsOfPod, keyOfPod, policyOfPod } from '../pods/pod-facts.js';
import type { FilterResult } from './wire-answers.js';

/** galaxy's reason for a node whose subnet cannot serve the pod. */
export const NO_FIP_LEFT = 'FloatingIPPlugin:NoFIPLeft';

/**
 * A filter answer that leaves the pod no node, some for want of a free address: kube-scheduler never
 * calls bind for it, so this is where a pod is refused for no free IP (answered without an error).
 */
export const refusedForWantOfAddress = (result: FilterResult): boolean =>
  result.error === '' &&
  (result.nodes ?? result.nodeNames ?? []).length === 0 &&
  Object.values(result.failedNodes).includes(NO_FIP_LEFT);

/** What the cluster says about apps (the workload caches, wired in by the composition root). */
export interface AppSource {
  /** The Pool and Deployment facts an app's limit is computed from. */
  appFacts(key: AllocationKey): AppFacts;
  /** Whether a custom workload kind has a scale subresource, by its key type prefix. */
  isScalable(typePrefix: string): boolean;
  /** What to wait for before appFacts can answer for a pod of this policy (undefined: nothing). */
  readyFor(policy: ReleasePolicy): Promise<void> | undefined;
}

/** Who is told about refusals that floatip itself will clear, so that the pod is retried then. */
export interface RefusalListener {
  /** The UID rule refused the pod. */
  refused(namespace: string, name: string, uid: string): void;
  /** The pod's app is at its limit. */
  refusedForApp(countPrefix: string, namespace: string, name: string, uid: string): void;
  /** No node could take the pod: these node subnets had no free address for it. */
  refusedForSubnets(namespace: string, name: string, uid: string, subnets: ReadonlySet<string>): void;
  bound(namespace: string, name: string): void;
  /** A refusal is held until the pod cache has the pod (it is passed on then). */
  held?(): void;
}

/**
 * Passes refusals on, and notes them: a follower whose filter just refused a pod for later hands
 * that filter to the leader, the one replica that sends refused pods back (its lifecycle sees what
 * clears a refusal). Filter is synchronous, so "since the last take" is "this call".
 */
export class NotedRefusals implements RefusalListener {
  private noted = false;
  constructor(private readonly inner: RefusalListener) {}

  /** Whether a refusal was noted since the last take; resets. */
  take(): boolean {
    const noted = this.noted;
    this.noted = false;
    return noted;
  }

  refused(namespace: string, name: string, uid: string): void {
    this.noted = true;
    this.inner.refused(namespace, name, uid);
  }

  refusedForApp(countPrefix: string, namespace: string, name: string, uid: string): void {
    this.noted = true;
    this.inner.refusedForApp(countPrefix, namespace, name, uid);
  }

  refusedForSubnets(namespace: string, name: string, uid: string, subnets: ReadonlySet<string>): void {
    this.noted = true;
    this.inner.refusedForSubnets(namespace, name, uid, subnets);
  }

  bound(namespace: string, name: string): void {
    this.inner.bound(namespace, name);
  }

  held(): void {
    this.noted = true;
  }
}

/** The pod's placement request (throws for a pod without a key or with a bad annotation). */
export function placementOf(pod: V1Pod, apps: AppSource): PlacementRequest {
  const key = keyOfPod(pod);
  return {
    key,
    groups: cniArgsOfPod(pod).groups,
    policy: policyOfPod(pod),
    isScalable: (prefix) => apps.isScalable(prefix),
    appFacts: () => apps.appFacts(key),
  };
}

export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
