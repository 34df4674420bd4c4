// The lifecycle controller (docs/galaxy.md#release-policies, docs/galaxy.md#pod-events-release-queue-and-resync): what happens after a pod is gone, wired to the caches.
// Pod deletions and finished phases go through the release queue to pod-gone; running pods are
// adopted; Deployment changes reach the rollout trim; a periodic resync finds what was missed
// (leaks), adopts, and expires parked addresses past --parked-ip-ttl. Nothing acts until start()
// (on becoming leader); pause() stops acting but keeps collecting.
import type { V1Pod } from '@kubernetes/client-node';
import { kindOf } from '../ipam/index.js';
import type { ClusterCache } from '../kube/cluster.js';
import { isFinished, namespacedName, wantsFloatingIP } from '../pods/pod-facts.js';
import { Adoption } from './adoption.js';
import { Leaks } from './leaks.js';
import type { LifecycleDeps } from './lifecycle-deps.js';
import { ParkedTtl } from './parked-ttl.js';
import { PodGone } from './pod-gone.js';
import { QUEUE_DEFAULTS, type QueueOptions, ReleaseQueue } from './release-queue.js';
import { RolloutTrim } from './rollout-trim.js';

export type { LifecycleDeps, LifecycleObserver } from './lifecycle-deps.js';

export interface LifecycleOptions {
  /** The extended resource that marks pods wanting a floating IP. */
  readonly resource: string;
  /** Period of the resync; 0 turns it off (tests run passes by hand). */
  readonly resyncIntervalMs: number;
  /** Parked `never` addresses of workloads that no longer exist are released after this long; 0 = never (galaxy). */
  readonly parkedIpTtlMs: number;
  readonly queue?: QueueOptions;
  /** Milliseconds since the epoch, for the TTL's cutoff; default Date.now (tests move it). */
  readonly clock?: () => number;
}

export class Lifecycle {
  readonly queue: ReleaseQueue<V1Pod>;
  private readonly podGone: PodGone;
  private readonly adoption: Adoption;
  private readonly leaks: Leaks;
  private readonly ttl: ParkedTtl;
  private readonly rollouts: RolloutTrim;
  private timer: NodeJS.Timeout | undefined;
  private resyncing: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly deps: LifecycleDeps & { readonly cluster: ClusterCache },
    private readonly options: LifecycleOptions,
  ) {
    this.podGone = new PodGone(deps);
    this.adoption = new Adoption(deps);
    this.leaks = new Leaks(deps, this.podGone);
    this.ttl = new ParkedTtl(deps, options.parkedIpTtlMs, options.clock ?? Date.now);
    this.rollouts = new RolloutTrim(deps);
    this.queue = new ReleaseQueue<V1Pod>(
      (pod, attempt) => {
        if (attempt > 1) deps.observer?.retried?.();
        return this.podGone.handle(pod);
      },
      (pod, err) =>
        deps.log.error(
          { pod: namespacedName(pod), err: (err as Error).message, kind: kindOf(err) },
          'abort unbind; the resync will find it',
        ),
      options.queue ?? QUEUE_DEFAULTS,
    );
    // nothing runs until start() (the leader's)
    this.queue.pause();
  }

  private wants(pod: V1Pod): boolean {
    return wantsFloatingIP(pod, this.options.resource);
  }

  /** Subscribes to the caches (before they start, so the first list is seen). */
  attach(): void {
    const { cluster } = this.deps;
    cluster.pods
      .on('add', (pod) => {
        if (this.wants(pod)) this.adoption.soon(pod);
      })
      .on('update', (pod, old) => {
        if (!this.wants(pod)) return;
        if (isFinished(pod) && !(old && isFinished(old))) this.enqueue(pod);
        else this.adoption.soon(pod);
      })
      .on('delete', (pod) => {
        if (this.wants(pod)) this.enqueue(pod);
      });
    cluster.deployments.on('update', (deployment, old) => void this.rollouts.onDeployment(deployment, old));
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

  /** Every bound pod's addresses taken for it if memory lacks them (before a new leader decides). */
  adoptPlaced(): Promise<void> {
    return this.adoption.sweep(this.deps.cluster.pods.list().filter((pod) => this.wants(pod)));
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

  /** One resync pass (docs/galaxy.md#resync-and-leaks): leaks, adoption, TTL. Runs alone; a pass already running is awaited instead. */
  resync(): Promise<void> {
    this.resyncing ??= this.resyncPass().finally(() => (this.resyncing = undefined));
    return this.resyncing;
  }

  private async resyncPass(): Promise<void> {
    let unchecked: number;
    try {
      // addresses another replica (or a leader before) parked under a non-default policy
      await this.deps.workloads.followFor(this.deps.store.allocator.all());
      unchecked = await this.leaks.sweep();
      await this.adoptPlaced();
      await this.ttl.expire();
    } catch (err) {
      this.deps.observer?.resynced?.('failure');
      throw err;
    }
    // a pass that could not check some allocations missed their leaks: counted as failing
    this.deps.observer?.resynced?.(unchecked === 0 ? 'success' : 'failure');
  }
}
