// The election's machinery: a loop that reads and writes the Lease (lease.ts says what each write puts
// in it) and a term that ends, synchronously, at the renew deadline. leader-election.ts says why this
// is safe.
import type { V1Lease, V1LeaseSpec } from '@kubernetes/client-node';
import { isConflict, isNotFound } from './custom-resources.js';
import {
  type Clock,
  type ElectionLogger,
  electionSettings,
  type LeaderCallbacks,
  type LeaderElectorOptions,
  NotLeaderError,
} from './leadership.js';
import {
  claimedLease,
  freshLease,
  LeaseClient,
  leaseAddress,
  type LeaseHolder,
  leaseExpired,
  releasedLease,
  renewedLease,
} from './lease.js';

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export class LeaderElector {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;

  private readonly api: LeaseClient;
  private readonly log: ElectionLogger;
  private readonly clock: Clock;
  /** Who this replica writes into the Lease as, and for how long others must then wait. */
  private readonly holder: LeaseHolder;

  private running = false;
  private stopping: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The election step in flight; at most one at a time. */
  private step: Promise<void> | undefined;

  private leading = false;
  private epoch = 0;
  /** The renewTime of our last successful acquire or renew: when it was sent, so latency counts against us. */
  private renewedAt = 0;
  private deadlineTimer: NodeJS.Timeout | undefined;
  /** The Lease as we last wrote or read it: its resourceVersion is what our next write is conditional on. */
  private lease: V1Lease | undefined;
  private observedLeader: string | undefined;
  /** The address the observed leader published on the Lease. */
  private observedAddress: string | undefined;

  constructor(
    options: LeaderElectorOptions,
    private readonly callbacks: LeaderCallbacks = {},
  ) {
    const settings = electionSettings(options);
    this.namespace = settings.namespace;
    this.name = settings.name;
    this.identity = settings.identity;
    this.leaseDurationMs = settings.leaseDurationMs;
    this.renewDeadlineMs = settings.renewDeadlineMs;
    this.retryPeriodMs = settings.retryPeriodMs;
    this.log = settings.log;
    this.clock = settings.clock;
    this.holder = {
      identity: this.identity,
      leaseDurationSeconds: settings.leaseDurationSeconds,
      ...(options.address ? { address: options.address } : {}),
    };
    // a call answered after the renew deadline is of no use to a leader
    this.api = new LeaseClient(
      options.kubeConfig,
      this.namespace,
      this.name,
      this.identity,
      this.renewDeadlineMs,
    );
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

  /**
   * Where the leader last seen answers (the address it published on the Lease), this replica's own
   * included; undefined while no leader is known or it published none. Seen at most a retry period ago.
   */
  leaderAddress(): string | undefined {
    return this.observedLeader === undefined ? undefined : this.observedAddress;
  }

  /**
   * Reads the Lease once, outside the loop (a stopped elector too), so that `leader()` and
   * `leaderAddress()` say who leads now: a caller waiting on a leader change need not wait for the
   * loop's next read. A failed read changes nothing.
   */
  async refreshLeader(): Promise<void> {
    if (this.isLeader()) return;
    try {
      this.observe(await this.api.read(), this.clock.now());
    } catch {
      // the loop's next read, or the caller's next try
    }
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
    this.api.abortAll();
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
      this.log.warn(this.failure(err), 'leader election step failed');
    }
  }

  // ---- candidate ----

  private async tryAcquire(): Promise<void> {
    let current: V1Lease | undefined;
    try {
      current = await this.api.read();
    } catch (err) {
      if (!isNotFound(err)) {
        this.log.warn(this.failure(err), 'could not read the Lease; retrying');
        return;
      }
    }
    if (!this.running) return;
    const now = this.clock.now();
    if (!current) {
      await this.claim(
        () => this.api.create(freshLease(this.namespace, this.name, this.holder, now)),
        now,
        'created the Lease',
      );
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
    const how = holder === '' ? 'took over the released Lease' : `took over the expired Lease from ${holder}`;
    await this.claim(() => this.api.replace(claimedLease(current, this.holder, now)), now, how);
  }

  private async claim(write: () => Promise<V1Lease>, now: number, how: string): Promise<void> {
    let written: V1Lease;
    try {
      written = await write();
    } catch (err) {
      if (isConflict(err)) {
        this.log.info(this.failure(err), 'another candidate acquired the Lease first');
      } else {
        this.log.warn(this.failure(err), 'could not acquire the Lease; retrying');
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
      written = await this.api.replace(renewedLease(lease, this.holder, now));
    } catch (err) {
      if (!this.stillLeading(epoch)) return;
      if (isConflict(err)) await this.reread(epoch);
      else if (isNotFound(err)) this.stopLeading('the Lease was deleted');
      else this.log.warn(this.failure(err), 'could not renew the Lease; retrying');
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
      current = await this.api.read();
    } catch (err) {
      if (!this.stillLeading(epoch)) return;
      if (isNotFound(err)) this.stopLeading('the Lease was deleted');
      else this.log.warn(this.failure(err), 'could not read the Lease; retrying');
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
    this.observedAddress = this.holder.address;
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
        this.lease = await this.api.replace(releasedLease(lease, now));
        this.log.info(this.fields(), 'released the Lease');
        return;
      } catch (err) {
        if (!isConflict(err)) {
          this.log.warn(this.failure(err), 'could not release the Lease; it will expire');
          return;
        }
      }
      // 409: a renew aborted by stop() may have landed after all; if the Lease is still ours, retry on it.
      try {
        this.lease = await this.api.read();
      } catch (err) {
        this.log.warn(this.failure(err), 'could not release the Lease; it will expire');
        return;
      }
    }
  }

  // ---- observation ----

  private expired(spec: V1LeaseSpec, now: number): boolean {
    return leaseExpired(spec, now, this.holder.leaseDurationSeconds);
  }

  private observe(lease: V1Lease, now: number): void {
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    // Our own name on a Lease we do not lead by is a term that has ended, not a leader.
    if (holder === '' || (holder === this.identity && !this.leading) || this.expired(spec, now)) {
      this.observedLeader = undefined;
      return;
    }
    this.observedAddress = leaseAddress(lease);
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

  private notLeader(detail: string): NotLeaderError {
    return new NotLeaderError(`${this.namespace}/${this.name}`, this.identity, this.observedLeader, detail);
  }

  private describe(): string {
    return `Lease ${this.namespace}/${this.name}`;
  }

  private fields(): { lease: string; identity: string } {
    return { lease: `${this.namespace}/${this.name}`, identity: this.identity };
  }

  /** The log fields of a failed call: the Lease, this replica, and why. */
  private failure(err: unknown): { lease: string; identity: string; err: string } {
    return { ...this.fields(), err: messageOf(err) };
  }
}
