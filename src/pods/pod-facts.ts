// What floatip reads from a Pod, in the core's terms: whether it wants a floating IP, its
// allocation key, its release policy and its request_ip_range. The annotation names are galaxy's.
// The one place Kubernetes pods are translated for the core; every room that decides reads pods
// through here.
import type { V1Pod } from '@kubernetes/client-node';
import { type CniArgs, CNI_ARGS_ANNOTATION, parseCniArgs } from '../cni/args.js';
import { AllocationKey, ReleasePolicy, releasePolicyOf } from '../ipam/index.js';

export const DEFAULT_RESOURCE = 'tke.cloud.tencent.com/eni-ip';
export const RELEASE_POLICY_ANNOTATION = 'k8s.v1.cni.galaxy.io/release-policy';
export const POOL_ANNOTATION = 'tke.cloud.tencent.com/eni-ip-pool';

/** "namespace/name", the pod's identity in logs. */
export const namespacedName = (pod: V1Pod): string =>
  `${pod.metadata?.namespace ?? 'default'}/${pod.metadata?.name ?? ''}`;

/**
 * Whether any regular container (not an init container) asks for the resource, in requests or
 * limits (the API server fills requests from limits for extended resources; galaxy reads requests).
 */
export function wantsFloatingIP(pod: V1Pod, resource: string): boolean {
  return (pod.spec?.containers ?? []).some(
    (c) => c.resources?.requests?.[resource] !== undefined || c.resources?.limits?.[resource] !== undefined,
  );
}

/**
 * A pod kube-scheduler has tried and put aside (not bound, PodScheduled False): it waits in the
 * scheduler's unschedulable queue until a cluster event or 60-90 s have passed.
 */
export function awaitsScheduler(pod: V1Pod): boolean {
  if (pod.spec?.nodeName || pod.metadata?.deletionTimestamp) return false;
  return (pod.status?.conditions ?? []).some((c) => c.type === 'PodScheduled' && c.status === 'False');
}

/** The pod's allocation key (throws UnsupportedAppTypeError, as galaxy's FormatKey fails). */
export function keyOfPod(pod: V1Pod): AllocationKey {
  return AllocationKey.forPod({
    namespace: pod.metadata?.namespace ?? 'default',
    name: pod.metadata?.name ?? '',
    ownerReferences: (pod.metadata?.ownerReferences ?? []).map((o) => ({ kind: o.kind, name: o.name })),
    pool: pod.metadata?.annotations?.[POOL_ANNOTATION] ?? '',
  });
}

export function policyOfPod(pod: V1Pod): ReleasePolicy {
  const annotations = pod.metadata?.annotations ?? {};
  return releasePolicyOf({
    policy: annotations[RELEASE_POLICY_ANNOTATION],
    pool: annotations[POOL_ANNOTATION],
  });
}

/**
 * A release-policy annotation value that means nothing (`forever`, `Immutable`): galaxy treats it
 * as the default, and so does floatip, but says so. Undefined when the value is known, empty or
 * overridden by a pool.
 */
export function unknownReleasePolicyOf(pod: V1Pod): string | undefined {
  const annotations = pod.metadata?.annotations ?? {};
  const value = annotations[RELEASE_POLICY_ANNOTATION];
  if (!value || annotations[POOL_ANNOTATION]) return undefined;
  return releasePolicyOf({ policy: value }) === ReleasePolicy.PodDelete ? value : undefined;
}

/** The pod's CNI args annotation (throws CniArgsError with galaxy's wording). */
export function cniArgsOfPod(pod: V1Pod): CniArgs {
  return parseCniArgs(pod.metadata?.annotations?.[CNI_ARGS_ANNOTATION]);
}

export const isFinished = (pod: V1Pod): boolean =>
  pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';
