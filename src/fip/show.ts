// `kubectl fip show IP|POD`: who holds an address, since when, and why it would or would not be
// released, both ways it can go: when its pod goes (src/ipam's release decision, on the workload as
// it is now) and through `kubectl fip release` now (floatip's own answer to a dry run, added by the
// caller since it needs the REST API).
import { clipQuoted, printable } from '../clip.js';
import { type Allocation, canonicalAddress, formatCidr } from '../ipam/index.js';
import { ipOfCanonicalName } from '../store/floating-ip-object.js';
import { describeAction, whenPodGoes } from './fate.js';
import { type Holder, holderOf, policyName } from './holders.js';
import { type PodView, type Snapshot, podRef, podsByName } from './snapshot.js';
import { shortAge } from './table.js';

/**
 * A well-formed `show` that names nothing there is: exit 1, as kubectl's NotFound (`kubectl get pod
 * nosuch`), not 2, which the README keeps for usage and connection errors.
 */
export class NotFound extends Error {}

export interface Shown {
  /** What was asked for, as given. */
  readonly subject: string;
  readonly pod: PodView | undefined;
  readonly holders: readonly Holder[];
  /** An address asked for that nobody holds. */
  readonly freeIP?: string;
}

/**
 * An IP's holder (the address, or its FloatingIP's name as `kubectl get fip` shows it), or a pod's
 * addresses (by its key): the pod `name` in `namespace`, or `namespace/name`.
 */
export function find(snapshot: Snapshot, subject: string, namespace: string): Shown {
  const pods = podsByName(snapshot);
  let ip: string | undefined;
  try {
    ip = canonicalAddress(subject);
  } catch {
    ip = undefined;
  }
  const slash = subject.indexOf('/');
  const ref =
    slash > 0 ? podRef(subject.slice(0, slash), subject.slice(slash + 1)) : podRef(namespace, subject);
  const pod = ip === undefined ? pods.get(ref) : undefined;
  ip ??= pod ? undefined : ipOfCanonicalName(subject);
  if (ip !== undefined) {
    const a = snapshot.allocator.get(ip);
    if (!a) return { subject, pod: undefined, holders: [], freeIP: ip };
    const h = holderOf(a, pods);
    return { subject, pod: h.pod, holders: [h] };
  }
  if (!pod) {
    throw new NotFound(
      `${clipQuoted(subject, 300)} is no IP address, FloatingIP name or pod ${slash > 0 ? '' : `of namespace ${namespace} `}that exists`,
    );
  }
  const held = pod.key ? snapshot.allocator.byKey(pod.key) : [];
  return { subject, pod, holders: held.map((a) => holderOf(a, pods)) };
}

const iso = (ms: number) => (ms > 0 ? new Date(ms).toISOString() : 'unknown');

/**
 * `Field:  value` lines, the values aligned. A value is one line whatever its object data holds: a
 * newline in a key would otherwise forge lines of its own.
 */
export function describeLines(fields: readonly (readonly [string, string])[]): string {
  const width = Math.max(...fields.map(([k]) => k.length)) + 2;
  return fields.map(([k, v]) => `${`${k}:`.padEnd(width)}${printable(v)}`).join('\n') + '\n';
}

export function holderFields(snapshot: Snapshot, h: Holder, releaseNow: string): [string, string][] {
  const a: Allocation = h.allocation;
  const net = snapshot.allocator.networkOf(a.ip);
  const entry = net ? snapshot.allocator.configuration.entries.find((e) => e.index === net.entry) : undefined;
  const created = snapshot.createdAt.get(a.ip);
  const pod = h.pod;
  const annotation = pod
    ? pod.annotationError
      ? `cannot be read: ${pod.annotationError}`
      : pod.addresses.includes(a.ip)
        ? `names ${a.ip}`
        : `does not name ${a.ip} (names ${pod.addresses.join(', ') || 'nothing'})`
    : '-';
  // one sentence after "When its pod goes": what floatip does then
  const fate =
    h.state === 'reserved'
      ? 'nothing happens: floatip never releases a reserved address'
      : h.state === 'parked'
        ? 'it has none: parked, it waits for the next pod of its app or pool (an immutable one is released once its Deployment is gone, a never one of a gone app after the parked-address TTL, when one is set)'
        : `floatip will ${describeAction(whenPodGoes(snapshot, a))}`;
  return [
    ['IP', a.ip],
    ['State', `${h.state} (${h.why})`],
    ['Key', a.key || '""'],
    [
      'Pod',
      pod
        ? `${podRef(pod.namespace, pod.name)} (uid ${pod.uid}, phase ${pod.phase || 'none'}, node ${pod.node || 'none'})`
        : '-',
    ],
    ['Recorded', `node ${a.nodeName || 'none'}, pod uid ${a.podUid || 'none'}`],
    ['Annotation', annotation],
    ['Policy', `${policyName(a.policy)} (${a.policy})`],
    [
      'Since',
      a.updateTime
        ? `${iso(a.updateTime)} (${shortAge(snapshot.now - a.updateTime)} ago, the object's updateTime)`
        : 'unknown (the object has no updateTime)',
    ],
    ['Created', created ? `${iso(created)} (${shortAge(snapshot.now - created)} ago)` : 'unknown'],
    [
      'Subnet',
      net && entry
        ? `${formatCidr(entry.subnet)} (entry ${net.entry}, gateway ${net.gateway}, vlan ${net.vlan}, node subnets ${entry.nodeSubnets.join(', ')})`
        : 'outside every configured range',
    ],
    ['When its pod goes', fate],
    ['Release now', releaseNow],
  ];
}

export function freeFields(snapshot: Snapshot, ip: string): [string, string][] {
  const named = snapshot.pods
    .filter((p) => !p.finished && p.addresses.includes(ip))
    .map((p) => podRef(p.namespace, p.name));
  return [
    ['IP', ip],
    [
      'State',
      snapshot.allocator.isConfigured(ip)
        ? 'free (no FloatingIP object)'
        : 'not in any configured range, no FloatingIP object',
    ],
    [
      'Named by',
      named.length ? `the annotation of ${named.join(', ')} (see kubectl fip check)` : 'no pod annotation',
    ],
  ];
}
