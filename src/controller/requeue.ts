// kube-scheduler v1.20 puts a pod whose bind the extender refused (or whose extender call failed) in
// its unschedulable queue, where it waits up to 60 s (flushed every 30 s) unless the pod itself or
// the cluster changes. Four such waits are floatip's own to end: the UID rule (a re-created pod
// waits until its previous incarnation's deletion has been processed), an app at its limit (a
// Deployment or Pool pod waits until the app gives an address back), node subnets out of addresses
// (until one is freed), and floatip being away (restarting, or no leader). Refused pods are
// remembered and touched (an annotation with the time) once what refused them has changed; pods put
// aside while floatip was away are touched when it takes over. A touch sends the pod back to the
// scheduler's active queue at once.
import type { V1Pod } from '@kubernetes/client-node';
import { AllocationKey } from '../ipam/index.js';
import { awaitsScheduler, wantsFloatingIP } from '../pods/pod-facts.js';
import type { Logger } from '../log.js';

/** Set on a pod floatip sent back to the scheduler; the value is when (RFC 3339). */
export const REQUEUED_ANNOTATION = 'floatip.io/requeued-at';

/** Touches in flight when many pods wait: enough to be quick, few enough not to crowd the API server. */
const TOUCH_CONCURRENCY = 4;

/** Writes annotations on the pod, only while it is still the incarnation `uid`. */
export type AnnotatePod = (
  namespace: string,
  name: string,
  uid: string,
  annotations: Record<string, string>,
) => Promise<void>;

/** What held a pod back: the UID rule, its app's limit, no free address, floatip away. */
export type RequeueReason = 'uid-rule' | 'app-limit' | 'no-free-ip' | 'floatip-away';

export interface PodRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** Pods that want an address and that kube-scheduler put aside (not bound, PodScheduled False). */
export function putAsidePods(pods: readonly V1Pod[], resource: string): PodRef[] {
  return pods
    .filter((pod) => wantsFloatingIP(pod, resource) && awaitsScheduler(pod))
    .map((pod) => ({
      namespace: pod.metadata?.namespace ?? 'default',
      name: pod.metadata?.name ?? '',
      uid: pod.metadata?.uid ?? '',
    }));
}

export interface RequeueOptions {
  /** Pods kube-scheduler put aside (not bound, PodScheduled False) that want an address. */
  readonly putAside: () => readonly PodRef[];
  /** Whether this replica answers the scheduler now. */
  readonly serving: () => boolean;
  /** Counts the pods touched (metrics). */
  readonly counted?: (why: RequeueReason, pods: number) => void;
  /**
   * How long after it starts serving the pods put aside are sent back once more (0: not): binds the
   * previous leader was still deciding fail within their budget, after the first sweep, and
   * kube-scheduler v1.20 would otherwise retry such a pod only after its 60 s flush.
   */
  readonly lateSweepMs?: number;
}

export class Requeue {
  /** By "namespace/name": pods the UID rule refused. */
  private readonly waitingForUid = new Map<string, PodRef>();
  /** By an app's count prefix, then "namespace/name": pods refused because the app was at its limit. */
  private readonly appWaiting = new Map<string, Map<string, PodRef>>();
  /** By "namespace/name", oldest first: pods no node could take for want of a free address. */
  private readonly subnetWaiting = new Map<string, { pod: PodRef; subnets: ReadonlySet<string> }>();

  /** Whether the extender listens, and whether pods put aside are to be sent back at the next call. */
  private listening = false;
  private armed = false;
  private late: NodeJS.Timeout | undefined;

  constructor(
    private readonly annotate: AnnotatePod,
    private readonly log: Logger,
    private readonly options: RequeueOptions,
  ) {}

  // ---- floatip away: pods put aside while nobody answered the scheduler

  /** The extender listens now. */
  startedListening(): void {
    this.listening = true;
    this.maybeStartedServing();
  }

  /**
   * Leadership or the configuration changed: if this replica now answers the scheduler, pods put
   * aside meanwhile are sent back, now and again at the first call that reaches it (a Service in
   * front of the replicas may route to a new leader only after its next readiness probe).
   */
  maybeStartedServing(): void {
    if (!this.listening || !this.options.serving()) return;
    void this.kick(this.options.putAside());
    this.armed = true;
    const lateMs = this.options.lateSweepMs ?? 0;
    if (lateMs > 0) {
      clearTimeout(this.late);
      this.late = setTimeout(() => {
        if (this.options.serving()) void this.kick(this.options.putAside());
      }, lateMs);
      this.late.unref();
    }
  }

  /** No later sweep is pending (shutdown). */
  stop(): void {
    clearTimeout(this.late);
  }

  /** A call from the scheduler reached this replica. */
  called(): void {
    if (!this.armed) return;
    this.armed = false;
    void this.kick(this.options.putAside());
  }

  /** How many pods are remembered as waiting (for tests). */
  get waiting(): number {
    let n = this.waitingForUid.size + this.subnetWaiting.size;
    for (const pods of this.appWaiting.values()) n += pods.size;
    return n;
  }

  /** A bind of this pod was refused until its previous incarnation is dealt with. */
  refused(namespace: string, name: string, uid: string): void {
    if (uid) this.waitingForUid.set(whoOf(namespace, name), { namespace, name, uid });
  }

  /** A pod of an app at its limit was refused (filter or bind). */
  refusedForApp(countPrefix: string, namespace: string, name: string, uid: string): void {
    if (!uid) return;
    let pods = this.appWaiting.get(countPrefix);
    if (!pods) this.appWaiting.set(countPrefix, (pods = new Map()));
    pods.set(whoOf(namespace, name), { namespace, name, uid });
  }

  /** No node could take the pod: these node subnets had no free address for it. */
  refusedForSubnets(namespace: string, name: string, uid: string, subnets: ReadonlySet<string>): void {
    if (!uid || subnets.size === 0) return;
    // a pod refused again keeps its place in the line
    this.subnetWaiting.set(whoOf(namespace, name), { pod: { namespace, name, uid }, subnets });
  }

  /** The pod was bound after all: nothing to do for it any more. */
  bound(namespace: string, name: string): void {
    const who = whoOf(namespace, name);
    this.waitingForUid.delete(who);
    this.forgetWaits(who);
  }

  /**
   * An address of these node subnets became free: the pod waiting longest for one of them is
   * touched (one per address, so that a freed address does not send every waiting pod back).
   */
  async addressFreed(subnets: readonly string[]): Promise<void> {
    for (const [who, waiter] of this.subnetWaiting) {
      if (!subnets.some((s) => waiter.subnets.has(s))) continue;
      this.subnetWaiting.delete(who);
      await this.touch(
        [waiter.pod],
        'no-free-ip',
        'sent a pod waiting for a free address back to the scheduler',
      );
      return;
    }
  }

  /**
   * The configuration changed (ranges grown, a subnet added): every pod waiting for a free address
   * is touched, since where addresses are now is for filter to say again.
   */
  async configChanged(): Promise<void> {
    const due = [...this.subnetWaiting.values()].map((w) => w.pod);
    this.subnetWaiting.clear();
    if (due.length > 0)
      await this.touch(due, 'no-free-ip', 'sent pods waiting for a free address back to the scheduler');
  }

  /** An incarnation of namespace/name has been dealt with: one refused by the UID rule is touched. */
  async settled(namespace: string, name: string): Promise<void> {
    // a pod gone while waiting for its app or a free address needs nothing any more
    this.forgetWaits(whoOf(namespace, name));
    await this.touchRefusedByUidRule(namespace, name);
  }

  /**
   * An address under this key was released or parked, or the app's limit may have changed: pods
   * refused for an app counting this key are touched, to be filtered again.
   */
  async appChanged(key: string): Promise<void> {
    const due: PodRef[] = [];
    for (const [prefix, pods] of this.appWaiting) {
      if (!key.startsWith(prefix)) continue;
      this.appWaiting.delete(prefix);
      due.push(...pods.values());
    }
    if (due.length > 0)
      await this.touch(due, 'app-limit', 'sent pods refused for their app’s limit back to the scheduler');
  }

  /**
   * An address of this key was released by hand (the REST API): a pod of that name refused by the
   * UID rule, or pods refused for the key's app, may go on.
   */
  async released(key: string): Promise<void> {
    let parsed: AllocationKey | undefined;
    try {
      parsed = AllocationKey.parse(key);
    } catch {
      parsed = undefined;
    }
    if (parsed?.podName) await this.touchRefusedByUidRule(parsed.namespace, parsed.podName);
    await this.appChanged(key);
  }

  /**
   * Touches these pods: floatip has just started serving the scheduler, and they were put aside
   * while it could not. Resolves with how many were touched.
   */
  kick(pods: readonly PodRef[]): Promise<number> {
    return this.touch(
      pods,
      'floatip-away',
      'sent pods put aside while floatip was away back to the scheduler',
    );
  }

  private async touchRefusedByUidRule(namespace: string, name: string): Promise<void> {
    const who = whoOf(namespace, name);
    const pod = this.waitingForUid.get(who);
    if (!pod) return;
    this.waitingForUid.delete(who);
    await this.touch([pod], 'uid-rule', 'sent a pod refused by the UID rule back to the scheduler');
  }

  private forgetWaits(who: string): void {
    this.subnetWaiting.delete(who);
    for (const [prefix, pods] of this.appWaiting) {
      pods.delete(who);
      if (pods.size === 0) this.appWaiting.delete(prefix);
    }
  }

  /** Touches these pods, a few at a time; logs `what` with the counts. Resolves with how many. */
  private async touch(pods: readonly PodRef[], why: RequeueReason, what: string): Promise<number> {
    let next = 0;
    let touched = 0;
    const at = new Date().toISOString();
    const worker = async () => {
      while (next < pods.length) {
        const { namespace, name, uid } = pods[next++]!;
        try {
          await this.annotate(namespace, name, uid, { [REQUEUED_ANNOTATION]: at });
          touched++;
        } catch (err) {
          // gone or re-created since: the scheduler has that pod's successor to schedule anyway
          this.log.info(
            { pod: `${namespace}/${name}`, uid, err: (err as Error).message },
            'could not touch a pod',
          );
        }
      }
    };
    await Promise.all(Array.from({ length: TOUCH_CONCURRENCY }, worker));
    if (touched > 0) this.options.counted?.(why, touched);
    if (pods.length > 0) this.log.info({ touched, of: pods.length, why }, what);
    return touched;
  }
}

const whoOf = (namespace: string, name: string) => `${namespace}/${name}`;
