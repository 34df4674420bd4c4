// Whether an allocated IP may be released now, and the `status` galaxy shows beside it (docs/galaxy.md#releasable).
// One rule for the list's `releasable` and for the release itself, so that what the list offers is
// exactly what POST /v1/ip does. Stricter than galaxy's list in one way and looser in another:
// - the pod named by the key only blocks while it is the pod recorded (same UID, or none recorded)
//   and has not finished: a Failed/Succeeded pod, or a newer pod of the same name, no longer uses
//   the address (galaxy's release follows this rule; its list called them unreleasable);
// - an address set aside by an operator (label `reserved`) is never releasable here (galaxy's
//   release never looked at the label, docs/galaxy.md#release-ignores-the-reserved-label).
import type { V1Pod } from '@kubernetes/client-node';
import { type Allocation, AllocationKey } from '../ipam/index.js';
import { isFinished } from '../pods/pod-facts.js';
import { objectNameOf } from '../store/floating-ip-object.js';

export interface Releasability {
  readonly releasable: boolean;
  /** galaxy's status: the pod's phase, `Deleted`, `Unknown`, or "" (no pod named). */
  readonly status: string;
  /**
   * Why not, when not releasable: galaxy's exact `releasable is false, pod status <status>` when
   * a pod decided it, else floatip's own `releasable is false: ...`.
   */
  readonly reason?: string;
  /** What floatip adds to the reason (which pod, which label); never part of galaxy's text. */
  readonly detail?: string;
}

/** The pod the key names, as far as it is known: a pod, none, or `unknown` (could not tell). */
export type PodState = V1Pod | undefined | 'unknown';

/** The namespace and name of the pod a key names, if it names one. */
export const podOf = (key: string) => AllocationKey.parse(key).pod;

/** Judges an allocation, given the state of the pod its key names (ignored when it names none). */
export function judge(allocation: Allocation | undefined, pod: PodState): Releasability {
  if (!allocation) return { releasable: false, status: '', reason: 'not allocated' };
  const { ip, key } = allocation;
  if (allocation.reserved) {
    return {
      releasable: false,
      status: '',
      reason: `releasable is false: ${ip} is reserved`,
      detail: `its FloatingIP ${objectNameOf(ip)} has the label "reserved"; remove the label or the object to free it`,
    };
  }
  const parsed = AllocationKey.parse(key);
  if (!parsed.podName && !parsed.appName && !parsed.pool) {
    return {
      releasable: false,
      status: '',
      reason: `releasable is false: key ${JSON.stringify(key)} names no pod, app or pool`,
      detail: '',
    };
  }
  // a parked address (an app's or a pool's) belongs to no pod
  if (!parsed.podName) return { releasable: true, status: 'Deleted' };
  const who = `${parsed.namespace}_${parsed.podName}`;
  if (pod === 'unknown') {
    return {
      releasable: false,
      status: 'Unknown',
      reason: podStatusReason('Unknown'),
      detail: `cannot tell whether pod ${who} exists`,
    };
  }
  if (!pod) return { releasable: true, status: 'Deleted' };
  const phase = pod.status?.phase ?? '';
  const uid = pod.metadata?.uid ?? '';
  // a newer pod of the same name does not use the address recorded for the old one
  if (allocation.podUid && uid !== allocation.podUid) return { releasable: true, status: 'Deleted' };
  if (isFinished(pod)) return { releasable: true, status: phase };
  return {
    releasable: false,
    status: phase,
    reason: podStatusReason(phase),
    detail: `pod ${who} (uid ${allocation.podUid || uid}) has not finished (phase ${phase || 'not set'})`,
  };
}

/** galaxy's reason for an address its pod keeps, to the letter (spec Appendix A). */
const podStatusReason = (status: string) => `releasable is false, pod status ${status}`;
