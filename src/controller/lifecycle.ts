// What happens after a pod is gone (spec §5, §7): its addresses are released, parked for its app,
// or kept on its key, exactly when its policy says. Pod deletions and finished phases go through
// the release queue; a periodic resync finds what was missed (a deletion while floatip was down)
// and releases a leak only when two consecutive passes saw it; running pods whose annotation names
// addresses floatip does not know are adopted. Every decision names the address, key, pod UID and
// object version it was made on, and is dropped (then made again) if any of them changed.
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { CNI_ARGS_ANNOTATION, addressOf, parseCniArgs } from '../cni/args.js';
import {
  type Allocation,
  AllocationKey,
  type Attrs,
  IpamError,
  type ReleaseAction,
  ReleasePolicy,
  decideRelease,
} from '../ipam/index.js';
import type { ClusterCache } from '../kube/cluster.js';
import { isFinished, keyOfPod, namespacedName, policyOfPod, wantsFloatingIP } from '../pods/pod-facts.js';
import type { Logger } from '../log.js';
import type { PodLookup } from '../kube/pod-lookup.js';
import type { DecisionLocks } from '../store/decision-locks.js';
import type { FloatingIPStore } from '../store/floating-ip-store.js';
import { type AuditSink, auditRelease } from '../store/release-audit.js';
import { QUEUE_DEFAULTS, type QueueOptions, ReleaseQueue } from './release-queue.js';
import { type Workloads, rolloutOf } from './workloads.js';

export interface LifecycleOptions {
  readonly resource: string;
  /** Period of the resync; 0 turns it off (tests run passes by hand). */
  readonly resyncIntervalMs: number;
  /** Parked `never` addresses of workloads that no longer exist are released after this long; 0 = never (galaxy). */
  readonly parkedIpTtlMs: number;
  readonly queue?: QueueOptions;
}

/** What the lifecycle did, for metrics and audit. */
export interface LifecycleObserver {
  /** An address released, parked or kept, and why. `leak` when resync found it. */
  released?(
    allocation: Allocation,
    action: ReleaseAction,
    cause: 'pod-gone' | 'leak' | 'rollout' | 'ttl',
  ): void;
  leakFound?(allocation: Allocation, reason: string): void;
  /** A release job tried again. */
  retried?(): void;
  /**
   * An incarnation of the pod namespace/name has been dealt with (its deletion processed, or its
   * addresses settled after a newer one was found): a newer one refused by the UID rule may go on.
   */
  settled?(namespace: string, name: string): void;
  /**
   * An address under this key was released or parked, or the app's limit may have changed (its
   * Deployment changed): pods refused because their app was at its limit may go on.
   */
  appChanged?(key: string): void;
}

type Family = 4 | 6;
const familyOf = (ip: string): Family => (ip.includes(':') ? 6 : 4);

export class Lifecycle {
  readonly queue: ReleaseQueue<V1Pod>;
  private timer: NodeJS.Timeout | undefined;
  /** Leak candidates of the previous resync pass: "ip key uid". */
  private suspects = new Set<string>();
  /** Addresses (per family) an app held when its rollout began, so its end trims only what the rollout added. */
  private readonly beforeRollout = new Map<string, Record<Family, number>>();
  private resyncing: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly store: FloatingIPStore,
    private readonly cluster: ClusterCache,
    private readonly workloads: Workloads,
    private readonly pods: PodLookup,
    private readonly locks: DecisionLocks,
    private readonly log: Logger,
    private readonly options: LifecycleOptions,
    private readonly observer: LifecycleObserver = {},
    /** Where automatic releases are audited (an Event on the FloatingIP and a log line), as REST's are. */
    private readonly audit?: AuditSink,
  ) {
    this.queue = new ReleaseQueue<V1Pod>(
      (pod, attempt) => {
        if (attempt > 1) this.observer.retried?.();
        return this.podGone(pod);
      },
      (pod, err) =>
        this.log.error(
          { pod: namespacedName(pod), err: (err as Error).message },
          'abort unbind; the resync will find it',
        ),
      options.queue ?? QUEUE_DEFAULTS,
    );
    // nothing runs until start() (the leader's)
    this.queue.pause();
  }

  private get allocator() {
    return this.store.allocator;
  }

  /** Subscribes to the caches (before they start, so the first list is seen) . */
  attach(): void {
    const wants = (pod: V1Pod) => wantsFloatingIP(pod, this.options.resource);
    this.cluster.pods
      .on('add', (pod) => {
        if (wants(pod)) this.adoptSoon(pod);
      })
      .on('update', (pod, old) => {
        if (!wants(pod)) return;
        if (isFinished(pod) && !(old && isFinished(old))) this.enqueue(pod);
        else this.adoptSoon(pod);
      })
      .on('delete', (pod) => {
        if (wants(pod)) this.enqueue(pod);
      });
    this.cluster.deployments.on('update', (deployment, old) => this.onDeployment(deployment, old));
  }

  /** Starts acting: the release queue runs and the periodic resync begins (on becoming leader). */
  start(): void {
    this.stopped = false;
    this.queue.resume();
    if (this.options.resyncIntervalMs > 0) {
      const tick = () => {
        if (this.stopped) return;
        this.timer = setTimeout(() => {
          void this.resync().finally(tick);
        }, this.options.resyncIntervalMs);
      };
      // first pass right away, as galaxy
      void this.resync().finally(tick);
    }
  }

  /** Stops acting but keeps collecting what happens (on losing leadership). */
  async pause(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.stopped = true;
    this.queue.pause();
    await this.resyncing;
  }

  async stop(): Promise<void> {
    await this.pause();
    this.queue.stop();
  }

  private enqueue(pod: V1Pod): void {
    this.queue.add(namespacedName(pod), pod);
  }

  // ---- a pod is gone

  /** A gone (or finished) pod's addresses, each decided by its policy and workload. */
  private async podGone(pod: V1Pod): Promise<void> {
    const who = namespacedName(pod);
    await this.locks.pod(pod.metadata?.namespace ?? 'default', pod.metadata?.name ?? '', async () => {
      let key: AllocationKey;
      try {
        key = keyOfPod(pod);
      } catch (err) {
        this.log.warn({ pod: who, err: (err as Error).message }, 'unbind: pod has no allocation key');
        return;
      }
      const uid = pod.metadata?.uid ?? '';
      // only what this incarnation of the pod holds: a re-created pod's addresses are not ours to touch
      const held = this.allocator
        .byKey(key.text)
        .filter((a) => !a.reserved && (a.podUid === uid || a.podUid === ''));
      if (held.length > 0) await this.decideAndApply(key, policyOfPod(pod), held, 'pod-gone');
    });
    this.observer.settled?.(pod.metadata?.namespace ?? 'default', pod.metadata?.name ?? '');
  }

  /**
   * Decides for each address and carries it out, ABA-safe: the write names the address's owner
   * (key and pod UID) and the object version the decision saw; a change in between makes the write
   * refuse, and the caller's retry decides again on fresh facts.
   */
  private async decideAndApply(
    key: AllocationKey,
    policy: ReleasePolicy,
    held: readonly Allocation[],
    cause: 'pod-gone' | 'leak',
  ): Promise<void> {
    const facts = await this.workloads.factsFor(key, policy);
    const run = async () => {
      for (const allocation of held) {
        const decidedAt = this.store.versionOf(allocation.ip);
        const sameFamily = (a: Allocation) => familyOf(a.ip) === familyOf(allocation.ip);
        const appHeld = key.isDeployment()
          ? this.allocator.byPrefix(key.poolPrefix).filter(sameFamily).length
          : 0;
        const action = decideRelease(key, policy, { ...facts, held: appHeld });
        await this.apply(allocation, action, decidedAt);
        this.audited(allocation, action, cause);
        this.log.info(
          { ip: allocation.ip, key: key.text, action: action.kind, why: action.why, cause },
          'address after its pod',
        );
      }
    };
    // parking decisions about a Deployment's addresses count the app's addresses: one at a time per app
    if (key.isDeployment()) {
      await this.locks.app(key.poolPrefix, run);
      this.observer.appChanged?.(key.text);
    } else await run();
  }

  private async apply(
    allocation: Allocation,
    action: ReleaseAction,
    decidedAt: bigint | undefined,
  ): Promise<void> {
    const owner = { key: allocation.key, podUid: allocation.podUid };
    const cleared: Attrs = { policy: allocation.policy, nodeName: '', podUid: '' };
    switch (action.kind) {
      case 'release':
        await this.store.release(allocation.ip, owner, decidedAt);
        return;
      case 'park':
        await this.store.rekey(allocation.ip, owner, action.to, cleared, decidedAt);
        return;
      case 'keep':
        if (allocation.nodeName !== '' || allocation.podUid !== '') {
          await this.store.update(allocation.ip, owner, cleared, decidedAt);
        }
        return;
    }
  }

  /** Counts an action, and audits a release like the REST API's (an Event and a log line). */
  private audited(
    allocation: Allocation,
    action: ReleaseAction,
    cause: 'pod-gone' | 'leak' | 'rollout' | 'ttl',
  ): void {
    this.observer.released?.(allocation, action, cause);
    if (action.kind !== 'release' || !this.audit) return;
    auditRelease(this.audit, {
      ip: allocation.ip,
      key: allocation.key,
      podUid: allocation.podUid,
      nodeName: allocation.nodeName,
      actor: 'floatip lifecycle',
      via: cause,
      reason: action.why,
    });
  }

  // ---- adoption (galaxy's syncPodIP)

  private adoptSoon(pod: V1Pod): void {
    if (pod.status?.phase !== 'Running') return;
    void this.adopt(pod).catch((err: unknown) =>
      this.log.warn(
        { pod: namespacedName(pod), err: (err as Error).message },
        'could not adopt the addresses of a running pod',
      ),
    );
  }

  /**
   * A running pod whose annotation names addresses floatip does not hold for it: take them for its
   * key if they are free (a restore after data loss, or galaxy's objects lost); warn when another
   * key holds one. A pod without the annotation has nothing to adopt (galaxy crashes, §12.11).
   */
  async adopt(pod: V1Pod): Promise<void> {
    const text = pod.metadata?.annotations?.[CNI_ARGS_ANNOTATION];
    if (!text) return;
    const ips = parseCniArgs(text).ipinfos.map(addressOf);
    if (ips.length === 0) return;
    const who = namespacedName(pod);
    await this.locks.pod(pod.metadata?.namespace ?? 'default', pod.metadata?.name ?? '', async () => {
      const key = keyOfPod(pod);
      for (const ip of ips) {
        const holder = this.allocator.get(ip);
        if (holder?.key === key.text) continue;
        if (holder) {
          this.log.warn(
            { pod: who, ip, key: key.text, holder: holder.key },
            `conflict ip ${ip} found for both ${key.text} and ${holder.key}`,
          );
          continue;
        }
        if (!this.allocator.isConfigured(ip)) {
          this.log.warn({ pod: who, ip, key: key.text }, `failed to find floating ip by ${ip} in cache`);
          continue;
        }
        const attrs: Attrs = {
          policy: policyOfPod(pod),
          nodeName: pod.spec?.nodeName ?? '',
          podUid: pod.metadata?.uid ?? '',
        };
        await this.store.allocateIP(ip, key.text, attrs);
        this.log.info({ pod: who, ip, key: key.text }, 'adopted the address of a running pod');
      }
    });
  }

  // ---- resync

  /** One resync pass (spec §7.3). Runs alone; a pass already running is awaited instead. */
  resync(): Promise<void> {
    this.resyncing ??= this.resyncPass().finally(() => (this.resyncing = undefined));
    return this.resyncing;
  }

  private async resyncPass(): Promise<void> {
    const seen = new Set<string>();
    for (const allocation of [...this.allocator.all()]) {
      try {
        const suspect = await this.checkLeak(allocation);
        if (suspect) seen.add(suspect);
      } catch (err) {
        this.log.warn(
          { ip: allocation.ip, key: allocation.key, err: (err as Error).message },
          'resync: could not check',
        );
      }
    }
    this.suspects = seen;
    for (const pod of this.cluster.pods.list()) {
      if (wantsFloatingIP(pod, this.options.resource) && pod.status?.phase === 'Running') {
        await this.adopt(pod).catch((err: unknown) =>
          this.log.warn({ pod: namespacedName(pod), err: (err as Error).message }, 'resync: could not adopt'),
        );
      }
    }
    if (this.options.parkedIpTtlMs > 0) await this.expireParked();
  }

  /** Returns the leak's identity when the allocation's pod is not running (and acts on a second sighting). */
  private async checkLeak(allocation: Allocation): Promise<string | undefined> {
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
    // The cache may lag either way, so a sighting is only a suspicion: act on the second one. A pod of
    // the same name with another UID at the API server itself is proof at once (names are unique, so
    // the address's incarnation is gone); the cache alone could still be showing an older one.
    const proven = reason.reincarnated && (await this.reincarnatedAtServer(key, allocation));
    if (!proven && !this.suspects.has(identity)) return identity;
    await this.locks.pod(key.namespace, key.podName, async () => {
      const now = this.allocator.get(allocation.ip);
      if (!now || now.key !== allocation.key || now.podUid !== allocation.podUid) return; // changed meanwhile
      this.log.warn(
        { ip: allocation.ip, key: allocation.key, reason: reason.text },
        'leak: releasing per the stored policy',
      );
      this.observer.leakFound?.(allocation, reason.text);
      await this.decideAndApply(key, allocation.policy, [now], 'leak');
    });
    if (reason.reincarnated) this.observer.settled?.(key.namespace, key.podName);
    return undefined;
  }

  /** Whether the API server now has a pod of the key's name with another UID than the address's. */
  private async reincarnatedAtServer(key: AllocationKey, allocation: Allocation): Promise<boolean> {
    try {
      const pod = await this.pods.fetch(key.namespace, key.podName);
      return pod !== undefined && (pod.metadata?.uid ?? '') !== allocation.podUid;
    } catch {
      return false; // unknown: the second sighting decides
    }
  }

  /**
   * Why the pod named by the key is not running, or undefined when it is (or may be); `reincarnated`
   * when a pod of that name exists with another UID than the address's.
   */
  private async notRunning(
    key: AllocationKey,
    allocation: Allocation,
  ): Promise<{ text: string; reincarnated?: boolean } | undefined> {
    let pod: V1Pod | undefined;
    try {
      pod = await this.pods.find(key.namespace, key.podName);
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

  /** Parked `never` addresses of workloads that no longer exist, older than the TTL, are released. */
  private async expireParked(): Promise<void> {
    const cutoff = Date.now() - this.options.parkedIpTtlMs;
    for (const allocation of [...this.allocator.all()]) {
      if (allocation.reserved || allocation.policy !== ReleasePolicy.Never || allocation.updateTime > cutoff)
        continue;
      if (allocation.nodeName || allocation.podUid) continue;
      const key = AllocationKey.parse(allocation.key);
      if (key.pool || !key.appName) continue; // pools are shared and sized by their object
      const facts = await this.workloads.factsFor(key, ReleasePolicy.PodDelete);
      if (facts.exists) continue;
      try {
        await this.store.release(
          allocation.ip,
          { key: allocation.key, podUid: '' },
          this.store.versionOf(allocation.ip),
        );
        const action: ReleaseAction = {
          kind: 'release',
          why: 'parked longer than --parked-ip-ttl; its workload is gone',
        };
        this.observer.released?.(allocation, action, 'ttl');
        this.log.info({ ip: allocation.ip, key: allocation.key }, action.why);
      } catch (err) {
        if (!(err instanceof IpamError))
          this.log.warn({ ip: allocation.ip, err: (err as Error).message }, 'TTL release failed');
      }
    }
  }

  // ---- rollouts

  /**
   * A rollout may leave its app holding more addresses than it had (surge pods took new ones while
   * old ones' addresses were parked); when it ends, parked surplus beyond what the app held before
   * (immutable: beyond replicas) is released, oldest parked first. Addresses of pods are never touched.
   */
  private onDeployment(deployment: V1Deployment, old: V1Deployment | undefined): void {
    if (!old) return;
    const was = rolloutOf(old).rolling;
    const now = rolloutOf(deployment);
    const namespace = deployment.metadata?.namespace ?? 'default';
    const name = deployment.metadata?.name ?? '';
    const prefix = AllocationKey.fromParts('dp_', namespace, name, '', '').text;
    // replicas or the rollout's surge allowance may have grown
    this.observer.appChanged?.(prefix);
    if (!was && now.rolling) {
      const held = this.allocator.byPrefix(prefix);
      this.beforeRollout.set(prefix, {
        4: held.filter((a) => familyOf(a.ip) === 4).length,
        6: held.filter((a) => familyOf(a.ip) === 6).length,
      });
    }
    if (was && !now.rolling) {
      const before = this.beforeRollout.get(prefix);
      this.beforeRollout.delete(prefix);
      void this.locks
        .app(prefix, () => this.trim(prefix, now.replicas, before))
        .then(() => this.observer.appChanged?.(prefix))
        .catch((err: unknown) =>
          this.log.warn({ app: prefix, err: (err as Error).message }, 'rollout trim failed'),
        );
    }
  }

  private async trim(
    prefix: string,
    replicas: number,
    before: Record<Family, number> | undefined,
  ): Promise<void> {
    const parked = this.allocator.byKey(prefix).filter((a) => !a.reserved);
    if (parked.length === 0) return;
    const immutable = parked.some((a) => a.policy === ReleasePolicy.Immutable);
    // a never app that was not seen starting its rollout keeps everything (galaxy's never)
    if (!immutable && before === undefined) return;
    for (const family of [4, 6] as const) {
      const ofFamily = (a: Allocation) => familyOf(a.ip) === family;
      const total = this.allocator.byPrefix(prefix).filter(ofFamily).length;
      const target = immutable ? replicas : Math.max(replicas, before![family]);
      const surplus = parked
        .filter(ofFamily)
        .sort((a, b) => a.updateTime - b.updateTime)
        .slice(0, Math.max(0, total - target));
      for (const allocation of surplus) {
        await this.store.release(
          allocation.ip,
          { key: prefix, podUid: '' },
          this.store.versionOf(allocation.ip),
        );
        const action: ReleaseAction = {
          kind: 'release',
          why: `rollout ended: ${total} addresses for ${target}`,
        };
        this.observer.released?.(allocation, action, 'rollout');
        this.log.info({ ip: allocation.ip, key: prefix }, action.why);
      }
    }
  }
}
