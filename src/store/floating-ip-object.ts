// The FloatingIP custom resource (galaxy.k8s.io/v1alpha1, docs/galaxy.md#floatingip-objects): one object per allocated
// address. This module is its one decoder and encoder; everything else sees AllocationRecords.
import { clip } from '../clip.js';
import {
  AllocationKey,
  type AllocationRecord,
  InvalidAddressError,
  ReleasePolicy,
  canonicalAddress,
  goFieldKey,
  isReleasePolicy,
} from '../ipam/index.js';

export const GROUP = 'galaxy.k8s.io';
export const VERSION = 'v1alpha1';
export const FLOATING_IP_PLURAL = 'floatingips';
export const POOL_PLURAL = 'pools';
/** Presence (any value) marks an address an operator set aside (docs/galaxy.md#reserved-addresses). */
export const RESERVED_LABEL = 'reserved';
/**
 * Labels floatip keeps in step with every write, for people (`kubectl get fip` shows them as the
 * Node and Pod columns, `-l floatip.io/node=n1` selects by them); floatip itself never reads them.
 */
export const NODE_LABEL = 'floatip.io/node';
export const POD_LABEL = 'floatip.io/pod';

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  resourceVersion?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: Date;
  deletionTimestamp?: Date;
}

export interface FloatingIPObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: {
    key: string;
    /** galaxy's string form: `{"NodeName":"…","Uid":"…"}`, or "" for none. */
    attribute: string;
    policy: number;
    /** RFC 3339. */
    updateTime: string;
  };
}

/**
 * The object name of an address. Names must be DNS subdomains, which allow no ':', so IPv6
 * addresses are written with '-' (and a '0' where a name would start or end with '-').
 * IPv4 names are the dotted quad, as galaxy's.
 */
export function objectNameOf(ip: string): string {
  if (!ip.includes(':')) return ip;
  let name = ip.replace(/:/g, '-');
  if (name.startsWith('-')) name = `0${name}`;
  if (name.endsWith('-')) name = `${name}0`;
  return name;
}

/** The canonical address an object name stands for; throws InvalidAddressError. */
export function ipOfObjectName(name: string): string {
  const text = name.includes('-') ? name.replace(/-/g, ':') : name;
  try {
    return canonicalAddress(text);
  } catch {
    throw new InvalidAddressError(name, 'FloatingIP name is not an IP address');
  }
}

/** Why an object named otherwise than objectNameOf(ip) does not count (the webhook's words too). */
const nonCanonical = (ip: string): string =>
  `the name must be the address in canonical form: ${objectNameOf(ip)}`;

/** The address an object's name stands for when it is that address's one name, else undefined. */
export function ipOfCanonicalName(name: string): string | undefined {
  try {
    const ip = ipOfObjectName(name);
    return objectNameOf(ip) === name ? ip : undefined;
  } catch {
    return undefined;
  }
}

export function encodeAttribute(nodeName: string, podUid: string): string {
  return JSON.stringify({ NodeName: nodeName, Uid: podUid });
}

/** A label value's syntax (Kubernetes' IsValidLabelValue): at most 63 characters. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const asLabelValue = (text: string): string | null =>
  text !== '' && text.length <= 63 && LABEL_VALUE.test(text) ? text : null;

/**
 * floatip's labels for an allocation, `null` for one it must not carry (a merge patch removes
 * it): the node it is bound to, and the pod of its key while a pod holds it (a pod UID is
 * known). A value that cannot be a label value (a node name of more than 63 characters) is left
 * out rather than failing the write.
 */
export function ownedLabels(allocation: AllocationRecord): Record<string, string | null> {
  const pod = allocation.podUid !== '' ? AllocationKey.parse(allocation.key).podName : '';
  return { [NODE_LABEL]: asLabelValue(allocation.nodeName), [POD_LABEL]: asLabelValue(pod) };
}

/** What a store writes for an allocation; labels of an existing object that floatip does not own are kept. */
export function toFloatingIPObject(allocation: AllocationRecord, existing?: ObjectMeta): FloatingIPObject {
  const metadata: ObjectMeta = { name: objectNameOf(allocation.ip) };
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...existing?.labels, ...ownedLabels(allocation) })) {
    if (v !== null) labels[k] = v;
  }
  if (Object.keys(labels).length > 0) metadata.labels = labels;
  if (existing?.resourceVersion) metadata.resourceVersion = existing.resourceVersion;
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'FloatingIP',
    metadata,
    spec: {
      key: allocation.key,
      attribute: encodeAttribute(allocation.nodeName, allocation.podUid),
      policy: allocation.policy,
      // milliseconds survive a restart, so "most recently parked" still orders correctly;
      // galaxy's RFC 3339 parser reads fractional seconds too
      updateTime: new Date(allocation.updateTime).toISOString(),
    },
  };
}

/**
 * `aside`: for an object that is its address's one name (objectNameOf) but cannot be read, what
 * memory holds its address as: taken while the object exists (a create of that name is refused
 * AlreadyExists, so the address is nobody else's to be given), by the key the object names ("" for
 * none), set aside as a reservation is: never handed out, released or written by floatip; deleting
 * or fixing the object is what frees it. None for an object under any other name: it takes nothing.
 */
export type Decoded =
  { ok: true; record: AllocationRecord } | { ok: false; reason: string; aside?: AllocationRecord };

/**
 * An object as an allocation record, or why it is not one (and, named as its address, what keeps
 * that address aside). Lenient where galaxy is (an empty or unparsable attribute means no node and
 * no UID), strict where a wrong value could hand out an address twice (the name, the key, the
 * policy).
 */
export function fromFloatingIPObject(object: unknown): Decoded {
  const o = object as Partial<FloatingIPObject> | null;
  const name = o?.metadata?.name;
  if (typeof name !== 'string' || name === '') return { ok: false, reason: 'no metadata.name' };
  let ip: string;
  try {
    ip = ipOfObjectName(name);
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
  // one object per address: another spelling of it (`fd00-100-0-0-0-0-0-14`, the IPv4-mapped
  // `0--ffff-a00-640e`) would let any object overwrite, or by its deletion free, the address of
  // the one floatip writes and reads back by name
  if (objectNameOf(ip) !== name) return { ok: false, reason: nonCanonical(ip) };
  const spec = o?.spec && typeof o.spec === 'object' ? o.spec : undefined;
  const { nodeName, podUid } = decodeAttribute(spec?.attribute);
  const updateTime = typeof spec?.updateTime === 'string' ? Date.parse(spec.updateTime) : NaN;
  const read = { ip, nodeName, podUid, updateTime: Number.isNaN(updateTime) ? 0 : updateTime };
  // the address is this object's all the same: memory holds it aside rather than thinking it free
  const unreadable = (reason: string): Decoded => ({
    ok: false,
    reason,
    aside: {
      ...read,
      key: typeof spec?.key === 'string' ? spec.key : '',
      // no policy of its own is readable; kept until someone deletes the object, as `never` says
      policy: ReleasePolicy.Never,
      reserved: true,
    },
  });
  if (!spec) return unreadable('no spec');
  if (typeof spec.key !== 'string') return unreadable('spec.key is not a string');
  const policy = spec.policy ?? 0;
  if (!isReleasePolicy(policy)) return unreadable(`spec.policy ${shown(policy)} is not 0, 1 or 2`);
  return {
    ok: true,
    record: {
      ...read,
      key: spec.key,
      policy,
      reserved: o?.metadata?.labels?.[RESERVED_LABEL] !== undefined,
    },
  };
}

/**
 * A value the object's writer chose, as a reason names it: JSON text up to 200 characters, a
 * container by its type (JSON.stringify of one nested 100,000 deep overflows the stack, which the
 * webhook answered 500; a megabyte of it would go into every Event and log line naming the object).
 */
function shown(value: unknown): string {
  if (typeof value === 'object' && value !== null) return Array.isArray(value) ? '(an array)' : '(an object)';
  return clip(JSON.stringify(value) ?? String(value), 200);
}

function decodeAttribute(attribute: unknown): { nodeName: string; podUid: string } {
  if (typeof attribute !== 'string' || attribute === '') return { nodeName: '', podUid: '' };
  try {
    const parsed: unknown = JSON.parse(attribute);
    if (typeof parsed !== 'object' || parsed === null) return { nodeName: '', podUid: '' };
    // galaxy decodes with Go's encoding/json: keys case-insensitively, the last one naming a field
    const field = (name: string): string => {
      const key = goFieldKey(parsed as Record<string, unknown>, name, false);
      const value = key === undefined ? undefined : (parsed as Record<string, unknown>)[key];
      return typeof value === 'string' ? value : '';
    };
    return { nodeName: field('NodeName'), podUid: field('Uid') };
  } catch {
    return { nodeName: '', podUid: '' };
  }
}
