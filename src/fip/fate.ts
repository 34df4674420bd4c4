// What floatip does with an address when its pod is gone: src/ipam's release decision, given the
// workload facts the snapshot has (Deployments and StatefulSets; a custom workload kind counts as
// having no replicas, which is floatip's answer too when the kind has no scale subresource).
import {
  type Allocation,
  AllocationKey,
  type ReleaseAction,
  type WorkloadFacts,
  decideRelease,
  reservationRefusal,
  ReleasePolicy,
} from '../ipam/index.js';
import type { Snapshot } from './snapshot.js';

export function whenPodGoes(snapshot: Snapshot, allocation: Allocation): ReleaseAction {
  const key = AllocationKey.parse(allocation.key);
  const policy = allocation.policy;
  const appPrefix = `${key.typePrefix}${key.namespace}_${key.appName}_`;
  const workload = snapshot.workloads.get(appPrefix);
  let facts: WorkloadFacts = workload
    ? { exists: true, replicas: workload.replicas, rollingOut: workload.rollingOut }
    : { exists: false, replicas: 0 };
  if (key.isDeployment()) {
    const held = snapshot.allocator
      .byPrefix(key.poolPrefix)
      .filter((a) => a.family === allocation.family).length;
    facts = { ...facts, held };
  } else if (policy !== ReleasePolicy.PodDelete) {
    const unsupported = reservationRefusal(key, policy, () => false);
    if (unsupported) facts = { exists: false, replicas: 0, unsupported };
  }
  return decideRelease(key, policy, facts);
}

/** The action in words: `release (why)`, `park at <key> (why)`, `keep on its key (why)`. */
export function describeAction(action: ReleaseAction): string {
  if (action.kind === 'release') return `release it (${action.why})`;
  if (action.kind === 'park') return `park it at ${action.to} (${action.why})`;
  return `keep it on its key (${action.why})`;
}
