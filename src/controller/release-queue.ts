// Work that must happen after a pod is gone, off the informer's path: at most one job per pod
// waits (a newer event replaces the older one's pod), a few run at once, failures are retried with
// backoff, by the error's kind. Enqueueing never blocks, whatever the backlog (galaxy's
// 50,000-slot channel blocks its informer when full, docs/galaxy.md#release-channel-blocks-the-informer); a job that keeps failing is dropped
// after its last try and left to the periodic resync, which finds what was not released.
import { type ErrorKind, kindOf } from '../ipam/index.js';

/**
 * Whether a failed job is tried again, by its error's kind (src/ipam/errors.ts), mapped here once:
 * a validation error stays wrong however often it is tried, so it is given up at once and left to
 * the resync; a conflict decides again on fresh facts; a wait, an unavailable replica or a
 * transient failure may pass. An error of no kind (a bug, or one nobody classified) is retried.
 */
const RETRY: Record<ErrorKind, boolean> = {
  validation: false,
  conflict: true,
  wait: true,
  unavailable: true,
  transient: true,
};

const retries = (err: unknown): boolean => {
  const kind = kindOf(err);
  return kind === undefined || RETRY[kind];
};

export interface QueueOptions {
  /** Jobs running at once. */
  readonly concurrency: number;
  /** Tries per job before it is left to the resync. */
  readonly attempts: number;
  /** Delay before the first retry; doubles each time, up to maxBackoffMs. */
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
}

export const QUEUE_DEFAULTS: QueueOptions = {
  concurrency: 4,
  attempts: 8,
  backoffMs: 100,
  maxBackoffMs: 10_000,
};

interface Entry<T> {
  item: T;
  attempts: number;
  enqueuedAt: number;
  /** Not before this time (ms). */
  due: number;
}

export class ReleaseQueue<T> {
  private readonly waiting = new Map<string, Entry<T>>();
  private readonly running = new Set<string>();
  /** Items that arrived while their key was running: they run after it. */
  private readonly next = new Map<string, T>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** A follower keeps collecting jobs but runs none until it leads (the jobs decide when they run). */
  private paused = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly work: (item: T, attempt: number) => Promise<void>,
    private readonly onGiveUp: (item: T, err: unknown) => void,
    private readonly options: QueueOptions = QUEUE_DEFAULTS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Waiting and running jobs. */
  get depth(): number {
    return this.waiting.size + this.running.size + this.next.size;
  }

  /** Age in ms of the oldest waiting job (0 when none waits). */
  get oldestAgeMs(): number {
    let oldest = Infinity;
    for (const e of this.waiting.values()) oldest = Math.min(oldest, e.enqueuedAt);
    return oldest === Infinity ? 0 : this.now() - oldest;
  }

  add(key: string, item: T): void {
    if (this.stopped) return;
    if (this.running.has(key)) {
      this.next.set(key, item);
      return;
    }
    const existing = this.waiting.get(key);
    if (existing) existing.item = item;
    else this.waiting.set(key, { item, attempts: 0, enqueuedAt: this.now(), due: this.now() });
    this.pump();
  }

  /** Resolves when nothing waits or runs (tests, shutdown). */
  idle(): Promise<void> {
    if (this.depth === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  pause(): void {
    this.paused = true;
    clearTimeout(this.timer);
  }

  resume(): void {
    this.paused = false;
    this.pump();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.waiting.clear();
    this.next.clear();
    this.settleIdle();
  }

  private pump(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopped || this.paused) return;
    const now = this.now();
    let soonest = Infinity;
    for (const [key, entry] of this.waiting) {
      if (this.running.size >= this.options.concurrency) break;
      if (entry.due > now) {
        soonest = Math.min(soonest, entry.due);
        continue;
      }
      this.waiting.delete(key);
      this.start(key, entry);
    }
    if (soonest !== Infinity && this.running.size < this.options.concurrency) {
      this.timer = setTimeout(() => this.pump(), Math.max(0, soonest - now));
    }
  }

  private start(key: string, entry: Entry<T>): void {
    this.running.add(key);
    entry.attempts++;
    this.work(entry.item, entry.attempts)
      .then(
        () => undefined,
        (err: unknown) => {
          if (this.stopped) return;
          if (entry.attempts >= this.options.attempts || !retries(err)) {
            this.onGiveUp(entry.item, err);
            return;
          }
          const backoff = Math.min(
            this.options.maxBackoffMs,
            this.options.backoffMs * 2 ** (entry.attempts - 1),
          );
          // a newer event for the pod takes the place of the retry
          if (!this.next.has(key)) this.waiting.set(key, { ...entry, due: this.now() + backoff });
        },
      )
      .finally(() => {
        this.running.delete(key);
        const newer = this.next.get(key);
        if (newer !== undefined) {
          this.next.delete(key);
          this.waiting.set(key, { item: newer, attempts: 0, enqueuedAt: this.now(), due: this.now() });
        }
        this.pump();
        this.settleIdle();
      });
  }

  private settleIdle(): void {
    if (this.depth > 0) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
