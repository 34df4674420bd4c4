// What happens to a gone pod's addresses (docs/galaxy.md#the-release-table): each is released, parked for its app,
// or kept on its key, as decideRelease says for its policy and its workload now. Pod deletions and
// finished phases reach here through the release queue; a leak resync found, through settle.
// Every decision names the address, key, pod UID and object version it was made on, and is
// dropped (then made again) if any of them changed.
import type { V1Pod } from '@kubernetes/client-node';
import {
  type Allocation,
  AllocationKey,
  type Attrs,
  type ReleaseAction,
  ReleasePolicy,
  type WorkloadFacts,
  decideRelease,
} from '../ipam/index.js';
import { CNI_ARGS_ANNOTATION, addressOf, parseCniArgs } from '../cni/args.js';
import { isFinished, keyOfPod, namespacedName, policyOfPod } from '../pods/pod-facts.js';
import type { ReleaseCause } from '../store/release-audit.js';
import { type LifecycleDeps, releaseDecided } from './lifecycle-deps.js';

/** Why addresses are settled after their pod: its deletion or end was seen, or resync found a leak. */
export type SettleCause = Extract<ReleaseCause, 'pod-gone' | 'leak'>;

export class PodGone {
  constructor(
    private readonly deps: Pick<
      LifecycleDeps,
      'store' | 'workloads' | 'locks' | 'events' | 'log' | 'observer' | 'pods'
    >,
  ) {}

  private get allocator() {
    return this.deps.store.allocator;
  }

  /** The release queue's job: a gone (or finished) pod's addresses, each decided by its policy and workload. */
  async handle(pod: V1Pod): Promise<void> {
    const namespace = pod.metadata?.namespace ?? 'default';
    const name = pod.metadata?.name ?? '';
    await this.deps.locks.pod(namespace, name, async () => {
      let key: AllocationKey;
      try {
        key = keyOfPod(pod);
      } catch (err) {
        this.deps.log.warn(
          { pod: namespacedName(pod), err: (err as Error).message },
          'unbind: pod has no allocation key',
        );
        return;
      }
      const uid = pod.metadata?.uid ?? '';
      // only what this incarnation of the pod holds: a re-created pod's addresses are not ours to touch
      const held = this.allocator
        .byKey(key.text)
        .filter((a) => !a.reserved && (a.podUid === uid || a.podUid === ''));
      if (held.length === 0) return;
      const moved = await this.movedToSuccessor(key, uid, held);
      const left = held.filter((a) => !moved.includes(a));
      if (left.length > 0) await this.settle(key, policyOfPod(pod), left, 'pod-gone');
    });
    this.deps.observer?.settled?.(namespace, name);
  }

  /**
   * kube-apiserver v1.20 ignores a Binding's UID: a bind decided for this incarnation, while it was
   * being deleted and its successor (same name) created, bound the successor, which runs with the
   * address. The API server says (a cache may not show the successor yet, and the bind has ended:
   * this runs under the pod's lock); such an address moves to the successor instead of being
   * released (the churn on v1.20 found one address on two pods that way).
   */
  private async movedToSuccessor(
    key: AllocationKey,
    uid: string,
    held: readonly Allocation[],
  ): Promise<Allocation[]> {
    const own = held.filter((a) => uid !== '' && a.podUid === uid);
    if (own.length === 0 || !key.podName) return [];
    const now = await this.deps.pods.fetch(key.namespace, key.podName);
    const successorUid = now?.metadata?.uid ?? '';
    if (!now || successorUid === '' || successorUid === uid || !now.spec?.nodeName || isFinished(now))
      return [];
    if (keyOfPod(now).text !== key.text) return [];
    let ips: string[];
    try {
      ips = parseCniArgs(now.metadata?.annotations?.[CNI_ARGS_ANNOTATION]).ipinfos.map(addressOf);
    } catch {
      return [];
    }
    const moved = own.filter((a) => ips.includes(a.ip));
    for (const a of moved) {
      await this.deps.store.update(
        a.ip,
        { key: a.key, podUid: uid },
        { policy: policyOfPod(now), nodeName: now.spec.nodeName, podUid: successorUid },
      );
      this.deps.log.warn(
        { ip: a.ip, key: a.key, pod: namespacedName(now), from: uid, to: successorUid },
        `the binding decided for pod uid ${uid} bound its successor ${successorUid} (kube-apiserver ignored the Binding's UID); ${a.ip} moves to it instead of being released`,
      );
    }
    return moved;
  }

  /**
   * Decides for each address and carries it out, ABA-safe: the write names the address's owner
   * (key and pod UID) and the object version the decision saw; a change in between makes the write
   * refuse, and the caller's retry decides again on fresh facts. The caller holds the pod's lock.
   */
  async settle(
    key: AllocationKey,
    policy: ReleasePolicy,
    held: readonly Allocation[],
    cause: SettleCause,
  ): Promise<void> {
    // the default policy releases whatever the workload: its facts are not read (nor followed)
    const facts: WorkloadFacts =
      policy === ReleasePolicy.PodDelete
        ? { exists: false, replicas: 0 }
        : await this.deps.workloads.factsFor(key, policy);
    const run = async () => {
      for (const allocation of held) {
        const decidedAt = this.deps.store.versionOf(allocation.ip);
        const sameFamily = (a: Allocation) => a.family === allocation.family;
        const allocator = this.allocator;
        // counted only where the decision reads it (an immutable Deployment's): the walk over the
        // app's addresses was a release's largest own cost for a Deployment of many replicas
        const action = decideRelease(key, policy, {
          ...facts,
          get held() {
            return key.isDeployment() ? allocator.byPrefix(key.poolPrefix).filter(sameFamily).length : 0;
          },
        });
        await this.apply(allocation, action, decidedAt, cause);
        this.deps.log.info(
          { ip: allocation.ip, key: key.text, action: action.kind, why: action.why, cause },
          'address after its pod',
        );
      }
    };
    // parking decisions about a Deployment's addresses count the app's addresses: one at a time per app
    if (key.isDeployment()) {
      await this.deps.locks.app(key.poolPrefix, run);
      this.deps.observer?.appChanged?.(key.text);
    } else await run();
  }

  private async apply(
    allocation: Allocation,
    action: ReleaseAction,
    decidedAt: bigint | undefined,
    cause: SettleCause,
  ): Promise<void> {
    const { store } = this.deps;
    const owner = { key: allocation.key, podUid: allocation.podUid };
    const cleared: Attrs = { policy: allocation.policy, nodeName: '', podUid: '' };
    switch (action.kind) {
      case 'release':
        await releaseDecided(this.deps, allocation, owner, cause, action.why, decidedAt);
        return;
      case 'park':
        await store.rekey(allocation.ip, owner, action.to, cleared, decidedAt);
        break;
      case 'keep':
        if (allocation.nodeName !== '' || allocation.podUid !== '') {
          await store.update(allocation.ip, owner, cleared, decidedAt);
        }
        break;
    }
    // parks and keeps are not releases (no Event), but are counted as such
    this.deps.observer?.released?.(allocation, action, cause);
  }
}
