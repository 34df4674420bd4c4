// POST /v1/ip (docs/galaxy.md#releasing-ips): release IPs the caller names together with their owner, exactly:
// - the stored key must be the key the request names (galaxy's NewKeyObj, with an empty `appType`
//   meaning statefulset, which galaxy's release forgot, docs/galaxy.md#release-empty-apptype-and-false-successes), so an address that changed hands
//   since the caller looked stays where it is;
// - a reserved address (or one whose object floatip cannot read), or one whose pod is still running,
//   stays (releasability.ts);
// - an address that is free or not configured is reported as not released (galaxy said success).
// Each decision and its release run under the lock of the pod the key names (or of the app/pool
// for a parked address), the lock bind takes, so a release never interleaves with a bind of that
// pod; the store's release is itself conditional on the key and pod UID decided on.
// `reasons` keep galaxy's exact texts where galaxy had one; what floatip adds goes to `details`.
// A request names at most 10,000 entries (the OpenAPI document's `maxItems`), and the work yields
// the event loop every few milliseconds: the extender shares this process, and kube-scheduler's
// calls must not wait for a long release. One log line sums up each request.
import {
  type Allocation,
  AllocationKey,
  type Allocator,
  canonicalAddress,
  typePrefixOfAppType,
} from '../ipam/index.js';
import type { PodLookup } from '../kube/pod-lookup.js';
import type { DecisionLocks } from '../store/decision-locks.js';
import type { FloatingIPStore } from '../store/floating-ip-store.js';
import { type AuditSink, releaseAudited } from '../store/release-audit.js';
import { type PodState, type Releasability, judge, podOf, podStatusReason } from './releasability.js';
import { timeSlicer } from './time-slice.js';

export interface ReleaseItem {
  readonly ip: string;
  readonly namespace?: string;
  readonly appName?: string;
  readonly podName?: string;
  readonly poolName?: string;
  readonly appType?: string;
}

export interface ReleaseDeps {
  readonly allocator: Allocator;
  readonly store: Pick<FloatingIPStore, 'release' | 'unreadable'>;
  readonly pods: Pick<PodLookup, 'cached' | 'find'>;
  readonly locks: DecisionLocks;
  readonly audit: AuditSink;
  /** After an address of this key was released (pods waiting for their app may go on). */
  readonly released?: (key: string) => void;
}

export interface ReleaseReport {
  /** Released (or, on a dry run, releasable), as the request wrote them. */
  readonly released: string[];
  /** Left as they were; `reasons[i]` says why for `unreleased[i]`, and `details[i]` says more. */
  readonly unreleased: string[];
  readonly reasons: string[];
  readonly details: string[];
}

export interface ReleaseOptions {
  /** Who asked, for the audit trail. */
  readonly actor: string;
  readonly dryRun?: boolean;
}

/**
 * The key a release entry names (galaxy's NewKeyObj, docs/galaxy.md#keys-from-parts-newkeyobj);
 * undefined when it names no owner. A pod name alone makes the empty key, which no address has.
 */
export function requestedKey(item: ReleaseItem): string | undefined {
  // galaxy's releasability asks for a pod, app or pool name; a namespace alone names no owner
  if (!item.podName && !item.appName && !item.poolName) return undefined;
  return AllocationKey.fromParts(
    typePrefixOfAppType(item.appType ?? ''),
    item.namespace ?? '',
    item.appName ?? '',
    item.podName ?? '',
    item.poolName ?? '',
  ).text;
}

/** Why an entry stays: galaxy's text (or floatip's own where galaxy had none), and floatip's detail. */
interface Left {
  readonly reason: string;
  readonly detail: string;
  /** Judged unreleasable (galaxy lists those first); otherwise the release failed. */
  readonly refused: boolean;
}

type Verdict =
  | { readonly ok: true; readonly allocation: Allocation; readonly status: string }
  | ({ readonly ok: false } & Left);

const NO_OWNER: Verdict = {
  ok: false,
  refused: true,
  // galaxy's words to the letter: no pod named, so no status
  reason: 'releasable is false, pod status ',
  detail: 'the entry names no owner: give poolName, or namespace, appName and podName',
};

export async function releaseIPs(
  deps: ReleaseDeps,
  items: readonly ReleaseItem[],
  options: ReleaseOptions,
): Promise<ReleaseReport> {
  const released: string[] = [];
  // galaxy lists the entries it judged unreleasable first, then those whose release failed
  const refused: (Left & { ip: string })[] = [];
  const failed: (Left & { ip: string })[] = [];
  const pause = timeSlicer();
  // a dry run changes nothing, so what its earlier entries would have released is still held: the
  // decision must see them gone, as the real release's later entries do (an address named twice
  // is released once, and the second entry finds it already released)
  const releasedHere = options.dryRun ? new Set<string>() : undefined;
  for (const item of items) {
    await pause();
    const key = requestedKey(item);
    const outcome =
      key === undefined
        ? NO_OWNER
        : await deps.locks.forKey(key, () => releaseOne(deps, item, key, options, releasedHere));
    if (outcome.ok) {
      released.push(item.ip);
      releasedHere?.add(outcome.allocation.ip);
    } else (outcome.refused ? refused : failed).push({ ...outcome, ip: item.ip });
  }
  const left = [...refused, ...failed];
  deps.audit.log.info(
    {
      actor: options.actor,
      dryRun: options.dryRun ?? false,
      entries: items.length,
      released: released.length,
      unreleased: left.length,
      // a sample, not the list: the answer has every reason, and a log line per entry does not scale
      firstUnreleased: left.slice(0, 3).map(({ ip, reason, detail }) => ({ ip, reason, detail })),
    },
    'release through POST /v1/ip answered',
  );
  return {
    released,
    unreleased: left.map((l) => l.ip),
    reasons: left.map((l) => l.reason),
    details: left.map((l) => l.detail),
  };
}

async function releaseOne(
  deps: ReleaseDeps,
  item: ReleaseItem,
  key: string,
  options: ReleaseOptions,
  releasedHere: ReadonlySet<string> | undefined,
): Promise<Verdict> {
  const verdict = await decide(deps, item, key, releasedHere);
  if (!verdict.ok || options.dryRun) return verdict;
  const a = verdict.allocation;
  try {
    // conditional on the owner decided on: the store refuses if the address changed hands since
    await releaseAudited(
      deps.store,
      deps.audit,
      a.ip,
      { key: a.key, podUid: a.podUid },
      {
        actor: options.actor,
        via: 'rest',
        reason: `requested through POST /v1/ip (pod status ${verdict.status})`,
      },
    );
  } catch (err) {
    return { ok: false, refused: false, reason: `release ip: ${(err as Error).message}`, detail: '' };
  }
  deps.released?.(a.key);
  return verdict;
}

/** `releasedHere`: addresses a dry run's earlier entries would have released, seen as free. */
async function decide(
  deps: ReleaseDeps,
  item: ReleaseItem,
  key: string,
  releasedHere: ReadonlySet<string> | undefined,
): Promise<Verdict> {
  const ip = canonicalAddress(item.ip);
  const a = releasedHere?.has(ip) ? undefined : deps.allocator.get(ip);
  // galaxy asks first whether the pod the entry names exists, then whose the address is: an entry
  // naming a live pod is refused with that pod's status, whoever holds the address
  if (a?.key !== key) {
    const holder = a ? `${ip} is held by ${a.key}` : `${ip} is held by no pod`;
    const named = entryPodRefusal(deps.pods, item, holder);
    if (named) return named;
  }
  if (!a) {
    const reason = deps.allocator.isConfigured(ip)
      ? `${ip} is not allocated (already released)`
      : `${ip} is not in any configured range`;
    return { ok: false, refused: false, reason, detail: '' };
  }
  if (a.reserved) return refusal(judge(a, undefined, deps.store.unreadable(ip)));
  if (a.key !== key) {
    return {
      ok: false,
      refused: false,
      reason: `ip allocated to another pod ${a.key}`,
      detail: key
        ? `the request names ${key}`
        : 'the entry names a pod without its namespace and app: the empty key',
    };
  }
  const byPod = judge(a, await podState(deps.pods, a.key));
  if (!byPod.releasable) return refusal(byPod);
  return { ok: true, allocation: a, status: byPod.status };
}

const refusal = (judged: Releasability): Verdict => ({
  ok: false,
  refused: true,
  reason: judged.reason ?? 'releasable is false',
  detail: judged.detail ?? '',
});

/**
 * galaxy's releasability of an entry, from its own fields: refused while the pod it names exists.
 * Asked of the pod cache alone, as galaxy asks its lister: an entry whose pod does not hold the
 * address releases nothing either way, and 10,000 entries must not become 10,000 API calls.
 */
function entryPodRefusal(
  pods: Pick<PodLookup, 'cached'>,
  item: ReleaseItem,
  holder: string,
): Verdict | undefined {
  if (!item.podName || !item.namespace) return undefined;
  const pod = pods.cached(item.namespace, item.podName);
  if (!pod) return undefined;
  return {
    ok: false,
    refused: true,
    reason: podStatusReason(pod.status?.phase ?? ''),
    detail: `pod ${item.namespace}_${item.podName} (uid ${pod.metadata?.uid ?? ''}) exists, and ${holder}`,
  };
}

/** The pod a key names: the cache first, then the API server (the cache may lag behind a create). */
async function podState(pods: Pick<PodLookup, 'find'>, key: string): Promise<PodState> {
  const named = podOf(key);
  if (!named) return undefined;
  try {
    return await pods.find(named.namespace, named.name);
  } catch {
    return 'unknown';
  }
}
