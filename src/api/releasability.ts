// Whether an allocated IP may be released now, and the `status` galaxy shows beside it (docs/galaxy.md#releasable).
// One rule for the list's `releasable` and for the release itself, so that what the list offers is
// exactly what POST /v1/ip does. galaxy's rule, and stricter in one way:
// - the pod named by the key blocks while it exists, whatever its phase or UID: a finished pod of a
//   StatefulSet, or a newer pod of the same name, is about to use the address again;
// - an address set aside by an operator (label `reserved`) is never releasable here (galaxy's
//   release never looked at the label, docs/galaxy.md#release-ignores-the-reserved-label), nor one
//   whose object floatip cannot read (held aside: the object is not floatip's to delete).
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

/**
 * Judges an allocation, given the state of the pod its key names (ignored when it names none).
 * `unreadable`: why floatip cannot read the address's object, when memory holds it aside for that
 * (FloatingIPStore.unreadable): reserved as far as releasing goes, but no label to remove.
 */
export function judge(allocation: Allocation | undefined, pod: PodState, unreadable?: string): Releasability {
  if (!allocation) return { releasable: false, status: '', reason: 'not allocated' };
  const { ip, key } = allocation;
  if (allocation.reserved && unreadable !== undefined) {
    return {
      releasable: false,
      status: '',
      reason: `releasable is false: ${ip} has a FloatingIP object floatip cannot read`,
      detail: `its FloatingIP ${objectNameOf(ip)}: ${unreadable}; the address is held aside until the object is fixed or deleted (kubectl delete fip ${objectNameOf(ip)})`,
    };
  }
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
  let detail: string;
  if (allocation.podUid && uid !== allocation.podUid) {
    detail = `pod ${who} exists (uid ${uid}, a newer pod than the uid ${allocation.podUid} recorded): it reuses the address once the old one's deletion is handled`;
  } else if (isFinished(pod)) {
    detail = `pod ${who} (uid ${uid}) has finished (phase ${phase}) but still exists: its owner may re-create it with this address; delete the pod first`;
  } else {
    detail = `pod ${who} (uid ${allocation.podUid || uid}) has not finished (phase ${phase || 'not set'})`;
  }
  return { releasable: false, status: phase, reason: podStatusReason(phase), detail };
}

/** galaxy's reason for an address its pod keeps, to the letter (spec Appendix A). */
export const podStatusReason = (status: string) => `releasable is false, pod status ${status}`;
