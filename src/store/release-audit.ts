// The audit trail of releases: every address freed on purpose (through the REST API, or later by
// the lifecycle controller) leaves a Kubernetes Event on its FloatingIP object, for `kubectl
// describe fip <ip>` and `kubectl get events`, and one structured log line. Both say who asked
// (`actor`), for which owner (`key`), and why (`reason`).
import type { Allocation, Owner } from '../ipam/index.js';
import type { EventRecorder } from '../kube/events.js';
import type { Logger } from '../log.js';
import { GROUP, VERSION, objectNameOf } from './floating-ip-object.js';
import type { FloatingIPStore } from './floating-ip-store.js';

export interface AuditSink {
  readonly events: EventRecorder;
  readonly log: Logger;
}

export interface ReleaseAuditRecord {
  readonly ip: string;
  /** The key that held the address until now. */
  readonly key: string;
  readonly podUid?: string;
  readonly nodeName?: string;
  /** Who asked: an authenticated user, `anonymous (<remote address>)`, or a controller's name. */
  readonly actor: string;
  /** Which path released it: `rest`, `lifecycle`, ... */
  readonly via: string;
  readonly reason: string;
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

/** Who released, how, and why: the part of the audit record the caller knows. */
export interface ReleaseCause {
  readonly actor: string;
  readonly via: string;
  readonly reason: string;
}

/**
 * Releases an address held by `owner` (conditional, as FloatingIPStore.release) and audits it.
 * Every deliberate release goes through here: the REST API's, and the lifecycle controller's.
 */
export async function releaseAudited(
  store: Pick<FloatingIPStore, 'release'>,
  sink: AuditSink,
  ip: string,
  owner: Owner,
  cause: ReleaseCause,
): Promise<Allocation> {
  const released = await store.release(ip, owner);
  auditRelease(sink, {
    ip: released.ip,
    key: released.key,
    podUid: released.podUid,
    nodeName: released.nodeName,
    ...cause,
  });
  return released;
}
