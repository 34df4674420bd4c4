// Who holds each address, as `kubectl fip ls` and `show` say it: one state per allocation, from the
// object and the pod its key names, and the REST API's filters (pod, app, pool) plus node, parked
// and leaked.
import {
  type Allocation,
  AllocationKey,
  ReleasePolicy,
  parseAddress,
  releasePolicyName,
} from '../ipam/index.js';
import { type PodView, type Snapshot, podOfAllocation, podsByName } from './snapshot.js';

export type HolderState =
  /** Held by the pod its key names (same UID), which has not finished. */
  | 'in-use'
  /** Held by an app's or a pool's key between pods (a Deployment's `never`/`immutable`, a Pool). */
  | 'parked'
  /** Kept on a pod's own key with no pod bound (a StatefulSet pod's address waiting for it). */
  | 'kept'
  /** Set aside by an operator (label `reserved`). */
  | 'reserved'
  /** Still bound to a pod that is gone, finished or replaced: floatip's resync will settle it. */
  | 'leaked';

export interface Holder {
  readonly allocation: Allocation;
  readonly key: AllocationKey;
  readonly state: HolderState;
  /** The pod the key names, when it exists. */
  readonly pod: PodView | undefined;
  /** Why the state, in a few words. */
  readonly why: string;
}

export function holderOf(allocation: Allocation, pods: ReadonlyMap<string, PodView>): Holder {
  const key = AllocationKey.parse(allocation.key);
  const pod = podOfAllocation(allocation, pods);
  const at = (state: HolderState, why: string): Holder => ({ allocation, key, state, pod, why });
  if (allocation.reserved) return at('reserved', 'the object has the label "reserved"');
  if (!key.pod) return at('parked', `held by ${allocation.key || 'an empty key'}, no pod named`);
  const who = `${key.namespace}/${key.podName}`;
  const bound = allocation.podUid !== '' || allocation.nodeName !== '';
  if (pod && !pod.finished && allocation.podUid === pod.uid) {
    // its bind recorded the address and its binding may still land (an answer lost): floatip keeps
    // it for the pod, even against its object's deletion (README "Release policies in motion")
    if (!pod.node) return at('in-use', `pod ${who} holds it (not on a node yet: its binding may still land)`);
    return at('in-use', `pod ${who} holds it`);
  }
  if (!bound) {
    return at(
      'kept',
      pod ? `kept on its key for pod ${who} (not bound yet)` : `kept on its key; pod ${who} does not exist`,
    );
  }
  if (!pod) return at('leaked', `pod ${who} (uid ${allocation.podUid || 'none'}) no longer exists`);
  if (pod.finished) return at('leaked', `pod ${who} has finished (phase ${pod.phase})`);
  return at(
    'leaked',
    `pod ${who} is another incarnation (uid ${pod.uid}, the object names ${allocation.podUid})`,
  );
}

export function holders(snapshot: Snapshot): Holder[] {
  const pods = podsByName(snapshot);
  return [...snapshot.allocator.all()].sort(byAddress).map((a) => holderOf(a, pods));
}

export interface HolderFilters {
  readonly namespace?: string;
  readonly pod?: string;
  readonly app?: string;
  readonly pool?: string;
  readonly node?: string;
  readonly parked?: boolean;
  readonly leaked?: boolean;
}

export function filterHolders(list: readonly Holder[], f: HolderFilters): Holder[] {
  return list.filter(
    (h) =>
      (!f.namespace || h.key.namespace === f.namespace) &&
      (!f.pod || h.key.podName === f.pod) &&
      (!f.app || h.key.appName === f.app) &&
      (!f.pool || h.key.pool === f.pool) &&
      (!f.node || h.allocation.nodeName === f.node) &&
      (!f.parked || h.state === 'parked' || h.state === 'kept') &&
      (!f.leaked || h.state === 'leaked'),
  );
}

/** IPv4 before IPv6, each by value. */
export function byAddress(a: { ip: string }, b: { ip: string }): number {
  const x = parseAddress(a.ip);
  const y = parseAddress(b.ip);
  if (x.family !== y.family) return x.family - y.family;
  return x.value < y.value ? -1 : x.value > y.value ? 1 : 0;
}

export const policyName = (policy: ReleasePolicy): string => releasePolicyName(policy) || 'delete';
