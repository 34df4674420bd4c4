// The audit trail of releases: every address floatip frees on purpose (through the REST API, or
// by the lifecycle controller after a pod, a leak, a rollout or the parked-IP TTL) goes through
// releaseAudited, which leaves a Kubernetes Event on its FloatingIP object, for `kubectl describe
// fip <ip>` and `kubectl get events`, and one structured log line. Both say who asked (`actor`),
// for which owner (`key`), along which path (`via`, the cause) and why (`reason`).
import type { Allocation, Owner } from '../ipam/index.js';
import type { EventRecorder } from '../kube/events.js';
import type { Logger } from '../log.js';
import { GROUP, VERSION, objectNameOf } from './floating-ip-object.js';
import type { FloatingIPStore } from './floating-ip-store.js';

/**
 * Why floatip released an address: `rest` (POST /v1/ip), `pod-gone` (after its pod), `leak` (found
 * by resync), `rollout` (the trim at a rollout's end), `ttl` (parked longer than --parked-ip-ttl).
 * The audit record's `via`, and the `cause` label of floatip_releases_total.
 */
export type ReleaseCause = 'rest' | 'pod-gone' | 'leak' | 'rollout' | 'ttl';

export interface AuditSink {
  readonly events: EventRecorder;
  readonly log: Logger;
}

/** Who released, along which path, and why: the part of the audit record the caller knows. */
export interface ReleaseAttribution {
  /** An authenticated user, `anonymous (<remote address>)`, or a controller's name. */
  readonly actor: string;
  readonly via: ReleaseCause;
  readonly reason: string;
}

export interface ReleaseAuditRecord extends ReleaseAttribution {
  readonly ip: string;
  /** The key that held the address until now. */
  readonly key: string;
  readonly podUid?: string;
  readonly nodeName?: string;
}

/** The Event reason, for `kubectl get events --field-selector reason=FloatingIPReleased`. */
export const RELEASED_EVENT_REASON = 'FloatingIPReleased';

export function auditRelease(sink: AuditSink, record: ReleaseAuditRecord): void {
  const { ip, key, actor, via, reason } = record;
  sink.log.info(
    {
      audit: 'release',
      ip,
      key,
      podUid: record.podUid ?? '',
      nodeName: record.nodeName ?? '',
      actor,
      via,
      reason,
    },
    'floating IP released',
  );
  sink.events.record(
    // cluster-scoped: the recorder files its Events in `default`
    { apiVersion: `${GROUP}/${VERSION}`, kind: 'FloatingIP', name: objectNameOf(ip), namespace: '' },
    'Normal',
    RELEASED_EVENT_REASON,
    `released ${ip} from ${key} (by ${actor} via ${via}): ${reason}`,
  );
}

/**
 * Releases an address held by `owner` and audits it: the one path of every release floatip makes.
 * Conditional as FloatingIPStore.release: on the owner, and (with `decidedAt`) on the object
 * version the decision saw; a refused release throws and is not audited.
 */
export async function releaseAudited(
  store: Pick<FloatingIPStore, 'release'>,
  sink: AuditSink,
  ip: string,
  owner: Owner,
  attribution: ReleaseAttribution,
  decidedAt?: bigint,
): Promise<Allocation> {
  const released = await store.release(ip, owner, decidedAt);
  auditRelease(sink, {
    ip: released.ip,
    key: released.key,
    podUid: released.podUid,
    nodeName: released.nodeName,
    ...attribution,
  });
  return released;
}
