// The REST API's FloatingIP object (docs/galaxy.md#the-floatingip-item): galaxy's field names and order, empty strings and a
// false `releasable` left out, as Go's `omitempty` does. Built from an allocation (or a free
// address) and what releasability found; the one encoder for it.
import { type Allocation, AllocationKey } from '../ipam/index.js';
import type { Releasability } from './releasability.js';

export interface FloatingIPJson {
  ip: string;
  namespace?: string;
  appName?: string;
  podName?: string;
  poolName?: string;
  policy: number;
  appType?: string;
  updateTime: string;
  status?: string;
  releasable?: boolean;
}

/** Go's zero time, which galaxy shows for a time it does not have. */
export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

/**
 * Milliseconds since the epoch as Go's RFC 3339 with nanoseconds prints them: UTC, and the
 * fraction without trailing zeros (none at all when it is zero).
 */
export function formatTime(ms: number): string {
  if (ms === 0) return GO_ZERO_TIME;
  return new Date(ms)
    .toISOString()
    .replace(/\.(\d*?)0*Z$/, (_, digits: string) => (digits ? `.${digits}Z` : 'Z'));
}

/**
 * The list item for an address: allocated (with the parsed key) or free (`allocation` undefined;
 * `freeSince`, when it became free, is its `updateTime`, as galaxy's "last allocate or release time").
 */
export function floatingIPJson(
  ip: string,
  allocation: Allocation | undefined,
  judged?: Releasability,
  freeSince = 0,
): FloatingIPJson {
  const key = allocation ? AllocationKey.parse(allocation.key) : undefined;
  // written in galaxy's field order: JSON keeps insertion order
  const out: FloatingIPJson = {
    ip,
    ...(key?.namespace ? { namespace: key.namespace } : {}),
    ...(key?.appName ? { appName: key.appName } : {}),
    ...(key?.podName ? { podName: key.podName } : {}),
    ...(key?.pool ? { poolName: key.pool } : {}),
    policy: allocation?.policy ?? 0,
    ...(key?.appType ? { appType: key.appType } : {}),
    updateTime: formatTime(allocation ? allocation.updateTime : freeSince),
  };
  if (judged?.status) out.status = judged.status;
  if (judged?.releasable) out.releasable = true;
  return out;
}
