// Leader election on a coordination.k8s.io/v1 Lease, with client-go's leaderelection semantics: the lock
// keeps galaxy-ipam's name and place (`kube-system/galaxy-ipam` by default), and operators read the
// Lease as they would any client-go controller's.
//
// Why it is safe: every write carries the resourceVersion it was decided on, so of two candidates
// racing for an expired Lease exactly one write succeeds (the other gets 409). A leader stops
// believing it leads once its last successful renew is older than the renew deadline, which is
// shorter than the lease duration after which others may take over; the gap (5 s by default)
// must cover request latency and the clock skew between replicas, because a candidate judges
// expiry from the Lease's renewTime by its own clock. (client-go instead times from when it last saw
// the record change: immune to skew, but a fresh candidate then waits a full duration even on a
// Lease that died long ago.)
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  type ConfigurationOptions,
  CoordinationV1Api,
  type KubeConfig,
  Observable,
  type ObservableMiddleware,
  type V1Lease,
  type V1LeaseSpec,
  V1MicroTime,
} from '@kubernetes/client-node';
import { KubeApiError, isConflict, isNotFound, kubeError } from './custom-resources.js';

/** galaxy-ipam's defaults (its --leader-elect-* flags). */
export const LEADER_ELECTION_DEFAULTS = {
  namespace: 'kube-system',
  name: 'galaxy-ipam',
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
} as const;

/** `<hostname>_<uuid>`, as galaxy-ipam names itself: unique per process, readable per host. */
export const defaultIdentity = (): string => `${hostname()}_${randomUUID()}`;

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The subset of a pino logger the elector uses. */
export interface ElectionLogger {
  debug?(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface LeaderElectorOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace?: string;
  readonly name?: string;
  readonly identity?: string;
  /** How long others wait after the last renew before taking over. Written as whole seconds, rounded up. */
  readonly leaseDurationMs?: number;
  /** How long the leader keeps leading without a successful renew. */
  readonly renewDeadlineMs?: number;
  /** How often the leader renews and candidates try to acquire. */
  readonly retryPeriodMs?: number;
  readonly log?: ElectionLogger;
  readonly clock?: Clock;
}

/**
 * Called on the elector's own transitions. A callback that throws or rejects is logged, never
 * propagated: election goes on regardless.
 */
export interface LeaderCallbacks {
  /** This replica now leads; `epoch` identifies this term (see `assertLeader`). */
  onStartedLeading?(epoch: number): void | Promise<void>;
  /** This replica no longer leads; `isLeader()` is already false when this runs. */
  onStoppedLeading?(): void | Promise<void>;
  /** The Lease is held, unexpired, by another identity than before (this replica's own included). */
  onNewLeader?(identity: string): void | Promise<void>;
}

/** A write was refused because this replica does not lead (any more, or not in the term the caller started in). */
export class NotLeaderError extends Error {
  /** This replica cannot act; the leader can (a kind of src/ipam/errors.ts). */
  readonly kind = 'unavailable';

  constructor(
    /** `namespace/name` of the Lease. */
    readonly lease: string,
    readonly identity: string,
    /** The leader this replica last saw, if any. */
    readonly leader: string | undefined,
    detail: string,
  ) {
    super(
      `not the leader of Lease ${lease} (this replica is ${identity}, ` +
        `${leader ? `the leader is ${leader}` : 'no leader is known'}): ${detail}`,
    );
  }
  override get name(): string {
    return 'NotLeaderError';
  }
}

const noLog: ElectionLogger = { info: () => undefined, warn: () => undefined };
const systemClock: Clock = { now: () => Date.now() };
const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** A timestamp as Kubernetes writes it (MicroTime: RFC 3339 with six fractional digits). */
const microTime = (ms: number): V1MicroTime => new V1MicroTime(ms);

/**
 * client-node does not deserialize MicroTime (it is not in its type map), so a Lease read back holds
 * strings where its types say V1MicroTime; accept both.
 */
function timeOf(value: unknown): number | undefined {
  if (value instanceof Date) return value.getTime();
  if (typeof value !== 'string' || value === '') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Request options that attach `signal` to the HTTP request (client-node has no per-call timeout). */
function withSignal(signal: AbortSignal): ConfigurationOptions {
  const middleware: ObservableMiddleware = {
    pre: (request) => {
      request.setSignal(signal);
      return new Observable(Promise.resolve(request));
    },
    post: (response) => new Observable(Promise.resolve(response)),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}

export class LeaderElector {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;

  private readonly api: CoordinationV1Api;
  private readonly log: ElectionLogger;
  private readonly clock: Clock;
  private readonly leaseDurationSeconds: number;

  private running = false;
  private stopping: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The election step in flight; at most one at a time. */
  private step: Promise<void> | undefined;
  private readonly requests = new Set<AbortController>();

  private leading = false;
  private epoch = 0;
  /** The renewTime of our last successful acquire or renew: when it was sent, so latency counts against us. */
  private renewedAt = 0;
  private deadlineTimer: NodeJS.Timeout | undefined;
  /** The Lease as we last wrote or read it: its resourceVersion is what our next write is conditional on. */
  private lease: V1Lease | undefined;
  private observedLeader: string | undefined;

  constructor(
    options: LeaderElectorOptions,
    private readonly callbacks: LeaderCallbacks = {},
  ) {
    this.namespace = options.namespace ?? LEADER_ELECTION_DEFAULTS.namespace;
    this.name = options.name ?? LEADER_ELECTION_DEFAULTS.name;
    this.identity = options.identity ?? defaultIdentity();
    this.leaseDurationMs = options.leaseDurationMs ?? LEADER_ELECTION_DEFAULTS.leaseDurationMs;
    this.renewDeadlineMs = options.renewDeadlineMs ?? LEADER_ELECTION_DEFAULTS.renewDeadlineMs;
    this.retryPeriodMs = options.retryPeriodMs ?? LEADER_ELECTION_DEFAULTS.retryPeriodMs;
    this.log = options.log ?? noLog;
    this.clock = options.clock ?? systemClock;
    // client-go's checks: a leader must give up before others may take over, and must get more than
    // one renew attempt in before it does.
    const lease = `Lease ${this.namespace}/${this.name}`;
    if (!this.identity) throw new Error(`leader election on ${lease}: the identity must not be empty`);
    if (!(this.retryPeriodMs > 0)) {
      throw new Error(`leader election on ${lease}: retry period ${this.retryPeriodMs} ms must be > 0`);
    }
    if (!(this.renewDeadlineMs > 1.2 * this.retryPeriodMs)) {
      throw new Error(
        `leader election on ${lease}: renew deadline ${this.renewDeadlineMs} ms must exceed ` +
          `1.2 × the retry period (${this.retryPeriodMs} ms)`,
      );
    }
    if (!(this.leaseDurationMs > this.renewDeadlineMs)) {
      throw new Error(
        `leader election on ${lease}: lease duration ${this.leaseDurationMs} ms must exceed ` +
          `the renew deadline (${this.renewDeadlineMs} ms)`,
      );
    }
    // The field is whole seconds; rounding down would eat into the margin that keeps two leaders apart.
    this.leaseDurationSeconds = Math.ceil(this.leaseDurationMs / 1000);
    this.api = options.kubeConfig.makeApiClient(CoordinationV1Api);
  }

  /** True only while this replica holds the Lease and its last successful renew is within the renew deadline. */
  isLeader(): boolean {
    return this.leading && !this.deadlinePassed();
  }

  /** The current term while leading, else undefined. Terms count up from 1 per elector. */
  leadership(): number | undefined {
    return this.isLeader() ? this.epoch : undefined;
  }

  /**
   * Call right before a write: throws NotLeaderError unless this replica leads (and, given `epoch`,
   * still in that term, so work begun in a lost term is not finished in the next). Returns the term.
   */
  assertLeader(epoch?: number): number {
    if (!this.isLeader()) throw this.notLeader('this replica does not hold the Lease');
    if (epoch !== undefined && epoch !== this.epoch) {
      throw this.notLeader(`leadership term ${epoch} has ended (now in term ${this.epoch})`);
    }
    return this.epoch;
  }

  /** The identity holding the Lease as last seen (unexpired), this replica's own included. */
  leader(): string | undefined {
    return this.observedLeader;
  }

  /** Starts trying to acquire the Lease; a replica that loses it becomes a candidate again. */
  start(): void {
    if (this.stopping)
      throw new Error(`leader election on ${this.describe()}: start() before stop() finished`);
    if (this.running) return;
    this.running = true;
    this.log.info(this.fields(), 'leader election started');
    this.schedule(0);
  }

  /**
   * Stops the election. With `release` (the default, client-go's ReleaseOnCancel) a held Lease is
   * handed back so another replica takes over at once; without it the Lease simply expires, as
   * after a crash. Leadership ends before this returns its promise; the promise settles when
   * nothing is left in flight.
   */
  stop({ release = true }: { release?: boolean } = {}): Promise<void> {
    if (!this.running) return this.stopping ?? Promise.resolve();
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.stopLeading('the elector was stopped');
    for (const request of this.requests) request.abort();
    this.stopping = (async () => {
      await this.step;
      if (release) await this.release();
      this.log.info(this.fields(), 'leader election stopped');
    })().finally(() => {
      this.stopping = undefined;
    });
    return this.stopping;
  }

  // ---- the loop ----

  private schedule(delayMs: number): void {
    if (!this.running || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.step) return; // the step in flight schedules the next when it ends
      this.step = this.runStep().finally(() => {
        this.step = undefined;
        this.schedule(this.retryPeriodMs);
      });
    }, delayMs);
  }

  private async runStep(): Promise<void> {
    try {
      if (this.leading) await this.renew();
      else await this.tryAcquire();
    } catch (err) {
      // Expected failures are handled where they happen; this only keeps a bug from stopping the loop.
      this.log.warn({ ...this.fields(), err: messageOf(err) }, 'leader election step failed');
    }
  }

  // ---- candidate ----

  private async tryAcquire(): Promise<void> {
    let current: V1Lease | undefined;
    try {
      current = await this.read();
    } catch (err) {
      if (!isNotFound(err)) {
        this.log.warn({ ...this.fields(), err: messageOf(err) }, 'could not read the Lease; retrying');
        return;
      }
    }
    if (!this.running) return;
    const now = this.clock.now();
    if (!current) {
      await this.claim(() => this.create(this.fresh(now)), now, 'created the Lease');
      return;
    }
    this.lease = current;
    this.observe(current, now);
    const spec: V1LeaseSpec = current.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    // Our own unexpired record (a term lost at the renew deadline) waits like anyone's: whatever we
    // did in that term is over, and others have been told to wait exactly this long.
    if (holder !== '' && !this.expired(spec, now)) {
      this.log.debug?.({ ...this.fields(), holder }, 'the Lease is held; waiting');
      return;
    }
    const body: V1Lease = {
      ...current,
      metadata: { ...current.metadata },
      spec: {
        ...spec,
        holderIdentity: this.identity,
        leaseDurationSeconds: this.leaseDurationSeconds,
        acquireTime: microTime(now),
        renewTime: microTime(now),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === this.identity ? 0 : 1),
      },
    };
    const how = holder === '' ? 'took over the released Lease' : `took over the expired Lease from ${holder}`;
    await this.claim(() => this.replace(body), now, how);
  }

  private async claim(write: () => Promise<V1Lease>, now: number, how: string): Promise<void> {
    let written: V1Lease;
    try {
      written = await write();
    } catch (err) {
      if (isConflict(err)) {
        this.log.info(
          { ...this.fields(), err: messageOf(err) },
          'another candidate acquired the Lease first',
        );
      } else {
        this.log.warn({ ...this.fields(), err: messageOf(err) }, 'could not acquire the Lease; retrying');
      }
      return;
    }
    // Kept even when stopped meanwhile, so that stop() can release what we now hold.
    this.lease = written;
    if (!this.running) return;
    if (this.clock.now() >= now + this.renewDeadlineMs) {
      // The write took longer than a leader may go unrenewed: others may already count it as stale.
      this.log.warn(this.fields(), 'acquired the Lease too late to lead on it; waiting for it to expire');
      return;
    }
    this.startLeading(now, how);
  }

  // ---- leader ----

  private async renew(): Promise<void> {
    const epoch = this.epoch;
    if (this.deadlinePassed()) {
      this.stopLeading(`no successful renew within the renew deadline (${this.renewDeadlineMs} ms)`);
      return;
    }
    const lease = this.lease as V1Lease;
    const now = this.clock.now();
    let written: V1Lease;
    try {
      written = await this.replace({
        ...lease,
        metadata: { ...lease.metadata },
        spec: {
          ...lease.spec,
          holderIdentity: this.identity,
          leaseDurationSeconds: this.leaseDurationSeconds,
          renewTime: microTime(now),
        },
      });
    } catch (err) {
      if (!this.stillLeading(epoch)) return;
      if (isConflict(err)) await this.reread(epoch);
      else if (isNotFound(err)) this.stopLeading('the Lease was deleted');
      else this.log.warn({ ...this.fields(), err: messageOf(err) }, 'could not renew the Lease; retrying');
      return;
    }
    if (!this.stillLeading(epoch)) return;
    // A renew that answers after the deadline does not revive a term that has already ended.
    if (this.deadlinePassed()) {
      this.stopLeading(`no successful renew within the renew deadline (${this.renewDeadlineMs} ms)`);
      return;
    }
    this.lease = written;
    this.renewedAt = now;
    this.armDeadline();
  }

  /** After a 409 on renew: someone else wrote the Lease. Stop at once if it is no longer ours. */
  private async reread(epoch: number): Promise<void> {
    let current: V1Lease;
    try {
      current = await this.read();
    } catch (err) {
      if (!this.stillLeading(epoch)) return;
      if (isNotFound(err)) this.stopLeading('the Lease was deleted');
      else this.log.warn({ ...this.fields(), err: messageOf(err) }, 'could not read the Lease; retrying');
      return;
    }
    if (!this.stillLeading(epoch)) return;
    this.lease = current;
    const holder = current.spec?.holderIdentity ?? '';
    if (holder !== this.identity) {
      this.stopLeading(
        holder ? `the Lease is now held by ${holder}` : 'the Lease was released by someone else',
      );
      this.observe(current, this.clock.now());
      return;
    }
    // Still ours (someone changed, say, its labels): the next renew is conditional on this version.
    this.log.info(this.fields(), 'the Lease changed under us but is still ours');
  }

  private startLeading(now: number, how: string): void {
    this.leading = true;
    this.epoch++;
    this.renewedAt = now;
    this.armDeadline();
    this.log.info({ ...this.fields(), epoch: this.epoch }, `became the leader: ${how}`);
    this.noteLeader(this.identity);
    this.notify('onStartedLeading', () => this.callbacks.onStartedLeading?.(this.epoch));
  }

  /** Leadership ends here, synchronously: isLeader() is false before the callback or anything else runs. */
  private stopLeading(reason: string): void {
    if (!this.leading) return;
    this.leading = false;
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    if (this.observedLeader === this.identity) this.observedLeader = undefined;
    this.log.info({ ...this.fields(), epoch: this.epoch }, `stopped leading: ${reason}`);
    this.notify('onStoppedLeading', () => this.callbacks.onStoppedLeading?.());
  }

  /** Ends the term at the renew deadline even while a renew is still waiting for its answer. */
  private armDeadline(): void {
    clearTimeout(this.deadlineTimer);
    const epoch = this.epoch;
    const wait = Math.max(0, this.renewedAt + this.renewDeadlineMs - this.clock.now());
    this.deadlineTimer = setTimeout(() => {
      this.deadlineTimer = undefined;
      if (!this.stillLeading(epoch)) return;
      if (this.deadlinePassed()) {
        this.stopLeading(`no successful renew within the renew deadline (${this.renewDeadlineMs} ms)`);
      } else {
        this.armDeadline(); // an injected clock runs behind the timers
      }
    }, wait);
  }

  private deadlinePassed(): boolean {
    return this.clock.now() >= this.renewedAt + this.renewDeadlineMs;
  }

  private stillLeading(epoch: number): boolean {
    return this.leading && this.epoch === epoch;
  }

  /** client-go's ReleaseOnCancel: an empty holder and a 1 s duration, conditional on the version we hold. */
  private async release(): Promise<void> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const lease = this.lease;
      if (!lease || lease.spec?.holderIdentity !== this.identity) return;
      const now = this.clock.now();
      try {
        this.lease = await this.replace({
          ...lease,
          metadata: { ...lease.metadata },
          spec: {
            ...lease.spec,
            holderIdentity: '',
            leaseDurationSeconds: 1,
            acquireTime: microTime(now),
            renewTime: microTime(now),
          },
        });
        this.log.info(this.fields(), 'released the Lease');
        return;
      } catch (err) {
        if (!isConflict(err)) {
          this.log.warn(
            { ...this.fields(), err: messageOf(err) },
            'could not release the Lease; it will expire',
          );
          return;
        }
      }
      // 409: a renew aborted by stop() may have landed after all; if the Lease is still ours, retry on it.
      try {
        this.lease = await this.read();
      } catch (err) {
        this.log.warn(
          { ...this.fields(), err: messageOf(err) },
          'could not release the Lease; it will expire',
        );
        return;
      }
    }
  }

  // ---- observation ----

  private expired(spec: V1LeaseSpec, now: number): boolean {
    const renewed = timeOf(spec.renewTime) ?? timeOf(spec.acquireTime);
    if (renewed === undefined) return true; // nothing in it says the holder is alive
    const seconds = spec.leaseDurationSeconds ?? this.leaseDurationSeconds;
    return renewed + seconds * 1000 <= now;
  }

  private observe(lease: V1Lease, now: number): void {
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    // Our own name on a Lease we do not lead by is a term that has ended, not a leader.
    if (holder === '' || (holder === this.identity && !this.leading) || this.expired(spec, now)) {
      this.observedLeader = undefined;
      return;
    }
    this.noteLeader(holder);
  }

  private noteLeader(identity: string): void {
    if (identity === this.observedLeader) return;
    this.observedLeader = identity;
    this.log.info({ ...this.fields(), leader: identity }, 'new leader');
    this.notify('onNewLeader', () => this.callbacks.onNewLeader?.(identity));
  }

  private notify(callback: keyof LeaderCallbacks, call: () => void | Promise<void> | undefined): void {
    const failed = (err: unknown): void =>
      this.log.warn({ ...this.fields(), callback, err: messageOf(err) }, 'leader election callback failed');
    try {
      const result = call();
      if (result instanceof Promise) result.catch(failed);
    } catch (err) {
      failed(err);
    }
  }

  // ---- the API ----

  private fresh(now: number): V1Lease {
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.name, namespace: this.namespace },
      spec: {
        holderIdentity: this.identity,
        leaseDurationSeconds: this.leaseDurationSeconds,
        acquireTime: microTime(now),
        renewTime: microTime(now),
        leaseTransitions: 0,
      },
    };
  }

  private read(): Promise<V1Lease> {
    return this.request('get', (options) =>
      this.api.readNamespacedLease({ name: this.name, namespace: this.namespace }, options),
    );
  }

  private create(body: V1Lease): Promise<V1Lease> {
    return this.request('create', (options) =>
      this.api.createNamespacedLease({ namespace: this.namespace, body }, options),
    );
  }

  /** Always conditional: `body.metadata.resourceVersion` is the version the write was decided on. */
  private replace(body: V1Lease): Promise<V1Lease> {
    return this.request('update', (options) =>
      this.api.replaceNamespacedLease({ name: this.name, namespace: this.namespace, body }, options),
    );
  }

  /**
   * One API call, bounded by the renew deadline (an answer later than that is of no use to a leader)
   * and aborted by stop(); failures become KubeApiError naming the Lease and the identity.
   */
  private async request<T>(verb: string, call: (options: ConfigurationOptions) => Promise<T>): Promise<T> {
    const what = `${verb} ${this.describe()} as ${this.identity}`;
    const controller = new AbortController();
    let timedOut = false;
    const timeout = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.renewDeadlineMs);
    this.requests.add(controller);
    try {
      return await call(withSignal(controller.signal));
    } catch (err) {
      if (timedOut)
        throw new KubeApiError(0, 'Timeout', `${what}: no answer within ${this.renewDeadlineMs} ms`);
      throw kubeError(err, what);
    } finally {
      clearTimeout(timeout);
      this.requests.delete(controller);
    }
  }

  private notLeader(detail: string): NotLeaderError {
    return new NotLeaderError(`${this.namespace}/${this.name}`, this.identity, this.observedLeader, detail);
  }

  private describe(): string {
    return `Lease ${this.namespace}/${this.name}`;
  }

  private fields(): { lease: string; identity: string } {
    return { lease: `${this.namespace}/${this.name}`, identity: this.identity };
  }
}
