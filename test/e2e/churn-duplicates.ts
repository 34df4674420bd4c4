// Duplicates while the churn runs, not only at its end: an address given to a pod while another
// pod holds it may be gone again by the time the invariants are checked (one of the two deleted
// meanwhile), so the churn's pod ledger shows every pod it sees here. One watch stream gives the
// API server's order, so a pod's new address arrives after the deletion of the pod that held it
// before; a relist may not keep that order, so a suspect is confirmed at the API server: both pods
// exist there, neither finished, both with the address.
import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { addressesOf, isFinished } from './ipam-state.js';

interface Holder {
  readonly name: string;
  readonly uid: string;
}

export class DuplicateWatch {
  readonly problems: string[] = [];
  /** Who holds each address, per the pods seen (not finished, not gone). */
  private readonly holders = new Map<string, Holder>();
  private readonly core: CoreV1Api;
  private readonly checks = new Set<Promise<void>>();
  private readonly pairs = new Set<string>();

  constructor(
    kc: KubeConfig,
    private readonly namespace: string,
  ) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  /** A pod added, changed (`gone` false) or deleted. */
  seen(pod: V1Pod, gone: boolean): void {
    const me: Holder = { name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' };
    const ips = gone || isFinished(pod) ? [] : addressesOf(pod);
    for (const [ip, h] of this.holders) if (h.uid === me.uid && !ips.includes(ip)) this.holders.delete(ip);
    for (const ip of ips) {
      const other = this.holders.get(ip);
      if (other && other.uid !== me.uid) this.confirm(ip, other, me);
      this.holders.set(ip, me);
    }
  }

  /** Waits for the confirmations under way. */
  async settled(): Promise<void> {
    await Promise.all(this.checks);
  }

  private confirm(ip: string, a: Holder, b: Holder): void {
    // each pair once, whichever of the two was seen last
    const pair = [ip, ...[a.uid, b.uid].sort()].join(' ');
    if (this.pairs.has(pair)) return;
    this.pairs.add(pair);
    const check = (async () => {
      const [pa, pb] = await Promise.all([this.holds(a, ip), this.holds(b, ip)]);
      if (pa && pb)
        this.problems.push(
          `${ip} was held by pods ${this.namespace}/${a.name} (uid ${a.uid}) and ${this.namespace}/${b.name} (uid ${b.uid}) at once, both at the API server`,
        );
    })().catch(() => undefined);
    this.checks.add(check);
    void check.finally(() => this.checks.delete(check));
  }

  /** Whether the pod exists at the API server as that incarnation, not finished, with the address. */
  private async holds(h: Holder, ip: string): Promise<boolean> {
    const pod = await this.core
      .readNamespacedPod({ namespace: this.namespace, name: h.name })
      .catch(() => undefined);
    return pod?.metadata?.uid === h.uid && !isFinished(pod) && addressesOf(pod).includes(ip);
  }
}
