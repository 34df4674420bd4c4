// Adoption (galaxy's syncPodIP): a running pod whose annotation names addresses floatip does not
// hold for it takes them for its key if they are free (a restore after data loss, or galaxy's
// objects lost), or if its key keeps them for no pod; one another key holds is a conflict, warned
// about and left alone. A pod without
// the annotation has nothing to adopt (galaxy crashes, docs/galaxy.md#adoption-crashes-without-the-annotation).
//
// The sweep (every resync, and a new leader's catch-up) adopts for every bound pod that has not
// finished, not only running ones as galaxy did: a bound pod will run with its annotation's
// addresses, and a replica that freed one as a follower (its object deleted, the pod unknown to its
// cache yet) and then took the Lease would otherwise give it to the next pod before the first ran.
// A pod seen changing is adopted once it runs, as galaxy: the bind event of every pod stays cheap.
import type { V1Pod } from '@kubernetes/client-node';
import { CNI_ARGS_ANNOTATION, addressOf, parseCniArgs } from '../cni/args.js';
import { type Allocation, AllocationKey, type Attrs } from '../ipam/index.js';
import { isFinished, keyOfPod, namespacedName, policyOfPod } from '../pods/pod-facts.js';
import type { LifecycleDeps } from './lifecycle-deps.js';

const isRunning = (pod: V1Pod) => pod.status?.phase === 'Running';
/** Bound to a node and not finished: it runs, or will, with its annotation's addresses. */
const isPlaced = (pod: V1Pod) => Boolean(pod.spec?.nodeName) && !isFinished(pod);

/**
 * Why a pod that is not on a node yet may still run with the addresses recorded for its incarnation,
 * or undefined when it will not (the leader's answer: server.ts). A binding sent whose answer was
 * lost may land at any moment with them in its annotation (README "Binds end before the scheduler
 * stops waiting"), and so may one of a bind cut short by a restart or a lost Lease.
 */
export type PendingHolds = (pod: V1Pod) => string | undefined;

/** Whether this replica is binding the pod now (Binder.isBinding). */
export type BindingNow = (namespace: string, name: string) => boolean;

/**
 * While this replica leads, every pod not on a node yet keeps what is recorded for its incarnation.
 * A bind that failed for certain undoes its own objects, so an object someone else deletes under a
 * pending pod is most likely one whose binding may still land; at worst the address waits for the
 * pod's next bind, which reuses it, or its deletion, which releases it by its policy. A follower
 * keeps nothing for a pending pod (ownHolder).
 */
export const leaderPendingHolds =
  (isLeader: () => boolean, bindingNow: BindingNow): PendingHolds =>
  (pod) => {
    if (!isLeader()) return undefined;
    return bindingNow(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '')
      ? 'this replica is binding it now'
      : `it is not on a node yet, and a binding of it with this address may still land (one whose answer was lost, or one of a bind cut short by a restart or a lost Lease)`;
  };

/** Who holds a deleted object's address, and, for a pod not on a node yet, why it holds it. */
export interface LiveHolder {
  readonly key: string;
  readonly attrs: Attrs;
  readonly why?: string;
}

/**
 * The allocation's own pod, if `pod` is the incarnation it names, has not finished, and is on a
 * node or, not yet, is one `pendingHolds` says may be bound with the address. Without it (a
 * follower) a pending pod runs with no address: its object deleted is most likely the leader's undo
 * of a bind that failed, and kept, the address would stay with a pod that never got it, written
 * again by the next leader, and parked for its app once the pod went (ha.test.ts E8-11).
 */
export function ownHolder(
  pod: V1Pod | undefined,
  a: Allocation,
  pendingHolds?: PendingHolds,
): LiveHolder | undefined {
  if (!pod || pod.metadata?.uid !== a.podUid || isFinished(pod)) return undefined;
  const attrs = { policy: a.policy, nodeName: a.nodeName, podUid: a.podUid };
  if (pod.spec?.nodeName) return { key: a.key, attrs };
  const why = pendingHolds?.(pod);
  return why === undefined ? undefined : { key: a.key, attrs, why };
}

/**
 * The live pod holding `a`'s address, as the key and attributes it holds it under: the incarnation
 * the allocation's pod UID names (ownHolder), else a bound pod, not finished, whose
 * annotation names the address (an operator's reservation made over a running pod's address).
 * What floatip keeps when someone deletes the address's object (FollowObserver.stillHeld).
 */
export function liveHolder(
  pods: { get(namespace: string, name: string): V1Pod | undefined; list(): readonly V1Pod[] },
  a: Allocation,
  pendingHolds?: PendingHolds,
): LiveHolder | undefined {
  const key = AllocationKey.parse(a.key);
  const own =
    !a.reserved && a.podUid !== '' && key.podName ? pods.get(key.namespace, key.podName) : undefined;
  const ownHeld = ownHolder(own, a, pendingHolds);
  if (ownHeld) return ownHeld;
  for (const pod of pods.list()) {
    // the allocation's own pod shown as another incarnation is for the API server to settle
    if (!runsWithAddress(pod, a.ip) || keyOfPod(pod).text === a.key) continue;
    const attrs = {
      policy: policyOfPod(pod),
      nodeName: pod.spec?.nodeName ?? '',
      podUid: pod.metadata?.uid ?? '',
    };
    return { key: keyOfPod(pod).text, attrs };
  }
  return undefined;
}

/** Whether `pod`, bound and not finished, runs with `ip`: its annotation names it. */
function runsWithAddress(pod: V1Pod, ip: string): boolean {
  const text = pod.metadata?.annotations?.[CNI_ARGS_ANNOTATION];
  if (!text || !isPlaced(pod)) return false;
  try {
    return parseCniArgs(text).ipinfos.map(addressOf).includes(ip);
  } catch {
    return false;
  }
}

/**
 * Whether the pod `key` names runs with `ip` (bound, not finished, its annotation naming it): an
 * object of that address for that key records what is so, wherever the configuration stands
 * (the admission webhook lets floatip write again the object of an orphan it keeps for the pod).
 */
export function keyRunsWith(
  pods: { get(namespace: string, name: string): V1Pod | undefined },
  ip: string,
  key: string,
): boolean {
  const parsed = AllocationKey.parse(key);
  const pod = parsed.podName ? pods.get(parsed.namespace, parsed.podName) : undefined;
  return pod !== undefined && keyOfPod(pod).text === key && runsWithAddress(pod, ip);
}

export class Adoption {
  constructor(private readonly deps: Pick<LifecycleDeps, 'store' | 'pods' | 'locks' | 'log'>) {}

  /** A pod seen added or changed: adopted in the background once it runs. */
  soon(pod: V1Pod): void {
    if (!isRunning(pod)) return;
    void this.adopt(pod).catch((err: unknown) =>
      this.deps.log.warn(
        { pod: namespacedName(pod), err: (err as Error).message },
        'could not adopt the addresses of a running pod',
      ),
    );
  }

  /** The resync's pass: every bound pod that has not finished, one after the other. */
  async sweep(pods: Iterable<V1Pod>): Promise<void> {
    for (const pod of pods) {
      if (!isPlaced(pod)) continue;
      await this.adopt(pod).catch((err: unknown) =>
        this.deps.log.warn(
          { pod: namespacedName(pod), err: (err as Error).message },
          'resync: could not adopt',
        ),
      );
    }
  }

  async adopt(pod: V1Pod): Promise<void> {
    const text = pod.metadata?.annotations?.[CNI_ARGS_ANNOTATION];
    if (!text) return;
    const ips = parseCniArgs(text).ipinfos.map(addressOf);
    if (ips.length === 0) return;
    const { store, pods, locks, log } = this.deps;
    const who = namespacedName(pod);
    const namespace = pod.metadata?.namespace ?? 'default';
    const name = pod.metadata?.name ?? '';
    await locks.pod(namespace, name, async () => {
      // the sweep's pods are a snapshot, and a deletion's release may have run since: adopting for
      // a pod the cache no longer has would hold a free address for it until two resyncs see a leak
      const current = pods.cached(namespace, name);
      if (!current || current.metadata?.uid !== pod.metadata?.uid || !isPlaced(current)) return;
      const key = keyOfPod(pod);
      const attrs: Attrs = {
        policy: policyOfPod(pod),
        nodeName: pod.spec?.nodeName ?? '',
        podUid: pod.metadata?.uid ?? '',
      };
      for (const ip of ips) {
        const holder = store.allocator.get(ip);
        if (holder?.key === key.text) {
          // kept on the key for no pod, yet a pod of that key runs with it: kube-apiserver v1.20
          // ignores a Binding's UID, so a bind decided for an incarnation that was just replaced
          // binds its successor, which the resync then finds under a kept (UID-less) object
          if (holder.podUid === '' && attrs.podUid !== '') {
            await store.update(ip, { key: key.text, podUid: '' }, attrs);
            log.info({ pod: who, ip, key: key.text }, 'adopted the kept address of a bound pod');
          }
          continue;
        }
        if (holder) {
          log.warn(
            { pod: who, ip, key: key.text, holder: holder.key },
            `conflict ip ${ip} found for both ${key.text} and ${holder.key}`,
          );
          continue;
        }
        if (!store.allocator.isConfigured(ip)) {
          // galaxy's words, and it left the address there: free in memory, it went to another pod
          // once its range came back while this one ran with it. Held as an orphan instead.
          await store.allocateIP(ip, key.text, attrs, { orphan: true });
          log.warn(
            { pod: who, ip, key: key.text },
            `failed to find floating ip by ${ip} in cache: adopted for the bound pod all the same, kept as an orphan outside the configuration`,
          );
          continue;
        }
        await store.allocateIP(ip, key.text, attrs);
        log.info({ pod: who, ip, key: key.text }, 'adopted the address of a bound pod');
      }
    });
  }
}
