// Leaks (docs/galaxy.md#resync-and-leaks): addresses whose pod is gone or finished though no event said so (a deletion
// while floatip was down, a lost watch). The cache may lag either way, so one resync pass seeing
// a leak makes it a suspect and the next pass acts; a pod of the same name with another UID at the
// API server itself proves the address's incarnation gone at once (names are unique), which the
// cache alone cannot (it could still be showing an older one). A leak is then settled per its
// stored policy, as a gone pod's addresses are.
import type { V1Pod } from '@kubernetes/client-node';
import { type Allocation, AllocationKey, ReleasePolicy } from '../ipam/index.js';
import { isFinished } from '../pods/pod-facts.js';
import type { LifecycleDeps } from './lifecycle-deps.js';
import type { PodGone } from './pod-gone.js';

interface NotRunning {
  readonly text: string;
  /** A pod of that name exists with another UID than the address's. */
  readonly reincarnated?: boolean;
}

export class Leaks {
  /** Leak candidates of the previous pass: "ip key uid". */
  private suspects = new Set<string>();

  constructor(
    private readonly deps: Pick<LifecycleDeps, 'store' | 'pods' | 'locks' | 'log' | 'observer'>,
    private readonly podGone: Pick<PodGone, 'settle'>,
  ) {}

  /** One pass over every allocation: acts on second sightings (and proven ones), remembers the first. */
  /** Returns how many allocations could not be checked (a resync that checks nothing is failing). */
  async sweep(): Promise<number> {
    const seen = new Set<string>();
    let unchecked = 0;
    for (const allocation of [...this.deps.store.allocator.all()]) {
      try {
        const suspect = await this.check(allocation);
        if (suspect) seen.add(suspect);
      } catch (err) {
        unchecked++;
        this.deps.log.warn(
          { ip: allocation.ip, key: allocation.key, err: (err as Error).message },
          'resync: could not check',
        );
      }
    }
    this.suspects = seen;
    return unchecked;
  }

  /** Returns the leak's identity when the allocation's pod is not running (and acts on a second sighting). */
  private async check(allocation: Allocation): Promise<string | undefined> {
    if (allocation.reserved) return undefined;
    const key = AllocationKey.parse(allocation.key);
    // parked app-level keys have no pod; they are the TTL's business
    if (!key.podName || !key.appName) return undefined;
    if (
      !key.isDeployment() &&
      allocation.policy === ReleasePolicy.Never &&
      !allocation.nodeName &&
      !allocation.podUid
    ) {
      return undefined; // already kept on its key
    }
    const reason = await this.notRunning(key, allocation);
    if (!reason) return undefined;
    const identity = `${allocation.ip} ${allocation.key} ${allocation.podUid}`;
    const proven = reason.reincarnated && (await this.reincarnatedAtServer(key, allocation));
    if (!proven && !this.suspects.has(identity)) return identity;
    await this.deps.locks.pod(key.namespace, key.podName, async () => {
      const now = this.deps.store.allocator.get(allocation.ip);
      if (!now || now.key !== allocation.key || now.podUid !== allocation.podUid) return; // changed meanwhile
      this.deps.log.warn(
        { ip: allocation.ip, key: allocation.key, reason: reason.text },
        'leak: releasing per the stored policy',
      );
      this.deps.observer?.leakFound?.(allocation, reason.text);
      await this.podGone.settle(key, allocation.policy, [now], 'leak');
    });
    if (reason.reincarnated) this.deps.observer?.settled?.(key.namespace, key.podName);
    return undefined;
  }

  /** Whether the API server now has a pod of the key's name with another UID than the address's. */
  private async reincarnatedAtServer(key: AllocationKey, allocation: Allocation): Promise<boolean> {
    try {
      const pod = await this.deps.pods.fetch(key.namespace, key.podName);
      return pod !== undefined && (pod.metadata?.uid ?? '') !== allocation.podUid;
    } catch {
      return false; // unknown: the second sighting decides
    }
  }

  /** Why the pod named by the key is not running, or undefined when it is (or may be). */
  private async notRunning(key: AllocationKey, allocation: Allocation): Promise<NotRunning | undefined> {
    let pod: V1Pod | undefined;
    try {
      pod = await this.deps.pods.find(key.namespace, key.podName);
    } catch {
      return undefined; // unknown: keep the address
    }
    if (!pod) return { text: 'pod not found' };
    const uid = pod.metadata?.uid ?? '';
    if (allocation.podUid && allocation.podUid !== uid) {
      return { text: `pod current uid ${uid} missmatch stored uid ${allocation.podUid}`, reincarnated: true };
    }
    if (isFinished(pod)) return { text: 'pod finished' };
    return undefined;
  }
}
