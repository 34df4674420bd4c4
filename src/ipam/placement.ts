// Where a pod may get its addresses, and how many its app may hold: the placement rules, as pure
// functions of the allocator's state and plain facts about the pod and its app (policy apart from
// mechanism, as decideRelease is for releases). The extender gathers the facts and answers filter,
// prioritize and preempt with these; bind enforces the same limit under the app's lock.
import type { Allocation } from './allocation.js';
import type { Family } from './address.js';
import type { Allocator } from './allocator.js';
import { AppLimitError, HeldOutsideConfigError, PolicyNotSupportedError } from './errors.js';
import { AllocationKey, ordinalOf } from './keys.js';
import { ReleasePolicy, releasePolicyName } from './policy.js';
import type { RangeGroup } from './range.js';

/**
 * Whether a pod draws from its app's addresses: a Deployment's (or a Pool's) pod with a policy other
 * than the default unparks what the app parked, parks its own when it goes, and counts against the
 * app's limit.
 */
export const sharesAppAddresses = (key: AllocationKey, policy: ReleasePolicy): boolean =>
  key.isDeployment() && policy !== ReleasePolicy.PodDelete;

/** A Deployment's rollout: how many replicas it wants, whether it is rolling out, its surge. */
export interface Rollout {
  readonly replicas: number;
  readonly rolling: boolean;
  readonly maxSurge: number;
}

/** What the cluster says about a pod's app, for its limit. */
export interface AppFacts {
  /**
   * The Pool object named by the pod's pool annotation, if it exists; `unreadable` says why its
   * stored size was read as 0 (`size 1.5 is not an integer`).
   */
  readonly pool?: { readonly name: string; readonly size: number; readonly unreadable?: string };
  /** The pod's Deployment, if it exists. */
  readonly deployment?: Rollout;
}

/** How many pods of an app may hold addresses at once, and which keys count. */
export interface AppLimit {
  readonly limit: number;
  /** Keys counted against the limit start with this. */
  readonly countPrefix: string;
  /** The refusal when the limit is reached, in galaxy's words. */
  readonly reached: (used: number) => string;
}

/**
 * A Pool object's size caps all its pods; otherwise the Deployment's replicas, plus its maxSurge while
 * it rolls out, so that a rolling update can always make progress (galaxy deadlocks at 1-3
 * replicas). No Deployment: no room.
 */
export function appLimit(key: AllocationKey, facts: AppFacts): AppLimit {
  const pool = facts.pool;
  if (pool) {
    return {
      limit: pool.size,
      countPrefix: key.poolPrefix,
      // galaxy's words, then why the limit is 0 when the object says otherwise: kubectl shows a
      // size of 1.5, and "limit of 0" alone sent the operator looking for a Pool of size 0
      reached: () =>
        `reached pool ${pool.name} size limit of ${pool.size}` +
        (pool.unreadable
          ? ` (its stored ${pool.unreadable}, so the pool admits no pod until the Pool object is fixed)`
          : ''),
    };
  }
  const rollout = facts.deployment;
  const replicas = rollout?.replicas ?? 0;
  const limit = rollout ? replicas + (rollout.rolling ? rollout.maxSurge : 0) : 0;
  return {
    limit,
    countPrefix: key.poolAppPrefix,
    reached: (used) =>
      `deployment ${key.appName} has allocated ${used} ips with replicas of ${replicas}` +
      `${limit > replicas ? ` (+${limit - replicas} surge during its rollout)` : ''}, wait for releasing`,
  };
}

/**
 * galaxy's supportReserveIPPolicy: why a policy other than the default cannot apply to this kind of
 * pod (undefined when it can). Deployments and StatefulSets always can; other pods need a name ending
 * in `-<n>`, and for `immutable` a parent kind with a scale subresource.
 */
export function reservationRefusal(
  key: AllocationKey,
  policy: ReleasePolicy,
  isScalable: (typePrefix: string) => boolean,
): string | undefined {
  if (key.isDeployment() || key.isStatefulSet()) return undefined;
  if (ordinalOf(key.podName) === undefined) {
    return "pod name doesn't match '.*-[0-9]*$', assume its parent is not a stateful workload";
  }
  if (policy === ReleasePolicy.Never) return undefined;
  return isScalable(key.typePrefix) ? undefined : 'parent workload has no replicas';
}

/**
 * Pods of the app (or pool) holding addresses now, its parked addresses aside. Only keys of the
 * pod's own pool count: `pool__my_` is also a prefix of every key of a pool named `my_pool`.
 */
export function appUsage(allocator: Allocator, limit: AppLimit, key: AllocationKey): number {
  const parkedHere =
    key.poolPrefix.startsWith(limit.countPrefix) && allocator.byKey(key.poolPrefix).length > 0 ? 1 : 0;
  const ownPool = (group: string) => AllocationKey.parse(group).pool === key.pool;
  return allocator.countKeysByPrefix(limit.countPrefix, ownPool) - parkedHere;
}

/** Throws AppLimitError when the app already holds addresses for as many pods as it may. */
export function checkAppLimit(allocator: Allocator, limit: AppLimit, key: AllocationKey): void {
  const used = appUsage(allocator, limit, key);
  if (used >= limit.limit) throw new AppLimitError(limit.reached(used), limit.countPrefix);
}

/** The app's (or pool's) parked addresses that can be handed out. */
export const parkedFor = (allocator: Allocator, key: AllocationKey): Allocation[] =>
  allocator.byKey(key.poolPrefix).filter((a) => !a.reserved);

/**
 * The addresses a pod's key holds that it can use: a reserved one is an operator's, whatever key
 * it names (galaxy would hand it to that pod; floatip hands a reserved address to nobody).
 */
export const usableHeld = (allocator: Allocator, key: AllocationKey): Allocation[] =>
  allocator.byKey(key.text).filter((a) => !a.reserved);

/** Node subnets where every one of these addresses can be used. */
export const subnetsServingAll = (allocator: Allocator, held: readonly Allocation[]): Set<string> =>
  intersection(held.map((a) => new Set(allocator.nodeSubnetsServing(a.ip))));

function intersection(sets: readonly Set<string>[]): Set<string> {
  const [first, ...rest] = sets;
  return new Set([...(first ?? [])].filter((s) => rest.every((other) => other.has(s))));
}

/**
 * What a pod without range groups uses of what its key holds: one address per family, the first
 * that serves `nodeSubnet` (else the first). galaxy reuses one held address (docs/galaxy.md); a
 * key holds more when the pod once asked for range groups, and those stay held, unused.
 */
export function heldForNode(
  allocator: Allocator,
  held: readonly Allocation[],
  nodeSubnet: string,
): Allocation[] {
  const chosen = new Map<Family, Allocation>();
  for (const a of held) {
    const other = chosen.get(a.family);
    if (!other || (!serves(allocator, other, nodeSubnet) && serves(allocator, a, nodeSubnet)))
      chosen.set(a.family, a);
  }
  return [...chosen.values()].sort((a, b) => a.family - b.family);
}

const serves = (allocator: Allocator, a: Allocation, nodeSubnet: string) =>
  allocator.nodeSubnetsServing(a.ip).includes(nodeSubnet);

/** Node subnets where a pod without range groups can use what its key holds (heldForNode). */
function subnetsServingHeld(allocator: Allocator, held: readonly Allocation[]): Set<string> {
  const families = [...new Set(held.map((a) => a.family))];
  const ofFamily = (f: Family) => held.filter((a) => a.family === f);
  return intersection(families.map((f) => subnetsServingAny(allocator, ofFamily(f))));
}

/** Node subnets where at least one of these addresses can be used. */
export const subnetsServingAny = (allocator: Allocator, held: readonly Allocation[]): Set<string> =>
  new Set(held.flatMap((a) => allocator.nodeSubnetsServing(a.ip)));

/** What placement needs to know about a pod. */
export interface PlacementRequest {
  readonly key: AllocationKey;
  /** Its request_ip_range groups. */
  readonly groups: readonly RangeGroup[];
  readonly policy: ReleasePolicy;
  /** Whether the pod's parent kind is scalable (a CRD with a scale subresource), by key type prefix. */
  readonly isScalable: (typePrefix: string) => boolean;
  /** Its app's facts, asked for only when the app's limit applies. */
  readonly appFacts: () => AppFacts;
}

/**
 * Throws PolicyNotSupportedError when the pod may not be given new addresses under its release
 * policy: filter's refusals, which bind asks again before it allocates (a bind need not follow a
 * filter, and a pod's annotations can change in between).
 */
export function checkNewAddresses(
  pod: Pick<PlacementRequest, 'key' | 'groups' | 'policy' | 'isScalable'>,
): void {
  const { key, groups, policy } = pod;
  if (policy !== ReleasePolicy.PodDelete) {
    const refusal = reservationRefusal(key, policy, pod.isScalable);
    if (refusal) {
      throw new PolicyNotSupportedError(
        `release policy ${releasePolicyName(policy)} is not supported for pod ${key.podName}: ${refusal}`,
      );
    }
  }
  if (groups.length > 0 && sharesAppAddresses(key, policy)) {
    throw new PolicyNotSupportedError(
      'request ip ranges for deployment pod with release policy other than ReleasePolicyPodDelete is not supported',
    );
  }
}

/**
 * The node subnets where this pod can get (or keep) its addresses now, without reserving anything
 * (galaxy's getSubnet, without its side effects): the subnets of what it holds; for a pod sharing its
 * app's addresses, those of the app's parked addresses (where there is room, if none can be used) while the app is within its
 * limit; otherwise those with free addresses for it. Throws with the reason when there are none.
 */
export function allowedSubnets(allocator: Allocator, pod: PlacementRequest): Set<string> {
  const { key, groups, policy } = pod;
  // addresses the pod already holds pin it to the node subnets that can use them all
  let pinned: Set<string> | undefined;
  let unmatched: readonly RangeGroup[] = groups;
  if (groups.length > 0) {
    const matched = allocator.matchHeld(key.text, groups);
    const held = matched.filter((a): a is Allocation => a !== undefined);
    if (held.length > 0) pinned = subnetsServingAll(allocator, held);
    unmatched = groups.filter((_, i) => matched[i] === undefined);
    if (unmatched.length === 0) return pinned ?? new Set();
  } else {
    const held = usableHeld(allocator, key);
    if (held.length > 0) {
      const serving = subnetsServingHeld(allocator, held);
      const outside = held.filter((a) => !allocator.isConfigured(a.ip)).map((a) => a.ip);
      if (serving.size === 0 && outside.length > 0) throw new HeldOutsideConfigError(key.text, outside);
      return serving;
    }
  }
  checkNewAddresses(pod);
  let subnets: Set<string>;
  if (sharesAppAddresses(key, policy)) {
    checkAppLimit(allocator, appLimit(key, pod.appFacts()), key);
    // parked addresses a configuration change left outside every entry (kept as orphans) serve no
    // node subnet and can never be unparked: with only those, the app goes where there is room, as
    // with nothing parked, instead of being refused everywhere for good (galaxy deleted them)
    const serving = subnetsServingAny(allocator, parkedFor(allocator, key));
    subnets = serving.size > 0 ? serving : allocator.nodeSubnetsFor();
  } else {
    subnets = allocator.nodeSubnetsFor(unmatched);
  }
  if (pinned) subnets = new Set([...subnets].filter((s) => pinned.has(s)));
  return subnets;
}

/**
 * The node subnets where a pod keeps the addresses it (or, sharing its app's, its app) already holds:
 * where prioritize scores highest.
 */
export function homeSubnets(allocator: Allocator, key: AllocationKey, policy: ReleasePolicy): Set<string> {
  const held = usableHeld(allocator, key);
  if (held.length > 0) return subnetsServingHeld(allocator, held);
  if (sharesAppAddresses(key, policy)) return subnetsServingAny(allocator, parkedFor(allocator, key));
  return new Set();
}
