// The FloatingIP objects in the API server are the truth; the allocator is a cache of them. This
// store keeps it so:
// - at start it lists every object (paged) and restores the allocator from them;
// - it follows the watch, so objects created, edited or deleted by anyone (kubectl reservations)
//   take effect at once, and re-lists when the watch is lost or too old;
// - every decision is written first and applied to memory only once the write has succeeded, each
//   write conditional on the version the store last saw. A conflict means someone else changed the
//   object: the store re-reads it and the caller decides again. Nothing is overwritten blindly.
//
// Versions: the store remembers, per address, the resourceVersion memory reflects (also for
// deleted objects), and ignores any event or answer older than that. resourceVersions are compared
// as integers, as they are on every etcd-backed API server.
import {
  type AllocateRequest,
  type Allocation,
  type Allocator,
  AlreadyAllocatedError,
  type Attrs,
  type Family,
  NoParkedIPError,
  NotAllocatedError,
  OwnerConflictError,
  type Owner,
} from '../ipam/index.js';
import {
  type CustomResourceClient,
  KubeApiError,
  isAlreadyExists,
  isNotFound,
} from '../kube/custom-resources.js';
import type { Logger } from '../log.js';
import {
  type FloatingIPObject,
  fromFloatingIPObject,
  objectNameOf,
  toFloatingIPObject,
} from './floating-ip-object.js';
import { KeyedLock } from './keyed-lock.js';

/** Something wrong with an object that the store keeps (never deletes) and reports. */
export interface ObjectProblem {
  readonly name: string;
  readonly reason: string;
}

export interface StoreObserver {
  /** A FloatingIP object the store cannot use, or one outside the configuration. */
  objectProblem?(problem: ObjectProblem): void;
  /** A write that failed because someone else changed the object first. */
  writeConflict?(ip: string): void;
}

export interface StartReport {
  readonly objects: number;
  readonly loaded: number;
  readonly orphaned: readonly Allocation[];
  readonly problems: readonly ObjectProblem[];
}

const RELIST_BACKOFF_MS = [100, 500, 1000, 2000, 5000];
/** How often allocate tries again when an address it chose turns out to be taken already. */
const ALLOCATE_ATTEMPTS = 3;

export class FloatingIPStore {
  private readonly versions = new Map<string, bigint>();
  private readonly writing = new KeyedLock();
  private watch: { stop(): void } | undefined;
  private lastVersion = '';
  private stopped = false;
  private following: Promise<void> | undefined;

  constructor(
    private readonly api: CustomResourceClient,
    readonly allocator: Allocator,
    private readonly log: Logger,
    private readonly observer: StoreObserver = {},
  ) {}

  // ---- start, follow, stop

  /** Lists every object, restores the allocator, and starts following the watch. */
  async start(): Promise<StartReport> {
    const { items, resourceVersion } = await this.api.listAll();
    const problems: ObjectProblem[] = [];
    const records = [];
    for (const item of items) {
      const decoded = fromFloatingIPObject(item);
      const name = (item as FloatingIPObject).metadata?.name ?? '';
      if (!decoded.ok) {
        problems.push({ name, reason: decoded.reason });
        continue;
      }
      records.push(decoded.record);
      this.versions.set(decoded.record.ip, versionOf(item));
    }
    const report = this.allocator.restore(records);
    for (const { record, reason } of report.rejected)
      problems.push({ name: objectNameOf(record.ip), reason });
    for (const orphan of report.orphaned) {
      problems.push({
        name: objectNameOf(orphan.ip),
        reason: `${orphan.ip} is outside every configured range; kept`,
      });
    }
    for (const problem of problems) this.reportProblem(problem);
    this.lastVersion = resourceVersion;
    this.log.info(
      { objects: items.length, loaded: report.loaded, problems: problems.length },
      'floating IPs restored',
    );
    await this.startWatch();
    this.following = this.follow();
    return { objects: items.length, loaded: report.loaded, orphaned: report.orphaned, problems };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.watch?.stop();
    await this.following;
  }

  private watchDone: Promise<void> | undefined;

  private async startWatch(): Promise<void> {
    const handle = await this.api.watch(this.lastVersion, (type, object) => this.onEvent(type, object));
    this.watch = handle;
    this.watchDone = handle.done;
  }

  /** Keeps a watch open: resumes where it ended, re-lists when the history is gone or it failed. */
  private async follow(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        await this.watchDone;
        failures = 0;
      } catch (err) {
        if (this.stopped) return;
        failures++;
        const gone = err instanceof KubeApiError && err.status === 410;
        this.log.warn({ err: (err as Error).message, gone }, 'floating IP watch ended; re-listing');
        await sleep(RELIST_BACKOFF_MS[Math.min(failures, RELIST_BACKOFF_MS.length) - 1]!);
        if (this.stopped) return;
        try {
          await this.relist();
        } catch (relistErr) {
          this.log.warn({ err: (relistErr as Error).message }, 'floating IP re-list failed');
          continue;
        }
      }
      if (this.stopped) return;
      try {
        await this.startWatch();
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, 'floating IP watch could not start');
        this.watchDone = Promise.reject(err);
        this.watchDone.catch(() => undefined);
      }
    }
  }

  /** Brings memory to the listed truth without disturbing writes in flight. */
  private async relist(): Promise<void> {
    const { items, resourceVersion } = await this.api.listAll();
    const listed = BigInt(resourceVersion || '0');
    const present = new Set<string>();
    for (const item of items) {
      const decoded = fromFloatingIPObject(item);
      if (!decoded.ok) continue;
      present.add(decoded.record.ip);
      this.applyEvent(decoded.record.ip, versionOf(item), () => this.allocator.load(decoded.record));
    }
    for (const allocation of [...this.allocator.all()]) {
      const ip = allocation.ip;
      if (present.has(ip) || this.writing.isHeld(ip)) continue;
      // gone from the list, and nothing newer than the list has been seen for it
      if ((this.versions.get(ip) ?? 0n) <= listed) {
        this.versions.set(ip, listed);
        this.allocator.unload(ip);
      }
    }
    this.lastVersion = resourceVersion;
  }

  private onEvent(type: string, object: unknown): void {
    const version = (object as FloatingIPObject)?.metadata?.resourceVersion;
    if (version) this.lastVersion = version;
    if (type === 'BOOKMARK') return;
    const decoded = fromFloatingIPObject(object);
    if (!decoded.ok) {
      if (type !== 'DELETED')
        this.reportProblem({
          name: (object as FloatingIPObject)?.metadata?.name ?? '',
          reason: decoded.reason,
        });
      return;
    }
    const { record } = decoded;
    if (type === 'DELETED') {
      this.applyEvent(record.ip, versionOf(object), () => this.allocator.unload(record.ip));
      return;
    }
    this.applyEvent(record.ip, versionOf(object), () => {
      const loaded = this.allocator.load(record);
      if (!this.allocator.isConfigured(loaded.ip)) {
        this.reportProblem({
          name: objectNameOf(loaded.ip),
          reason: `${loaded.ip} is outside every configured range; kept`,
        });
      }
    });
  }

  /** Applies a watch event's change, unless memory already reflects something as new. */
  private applyEvent(ip: string, version: bigint, change: () => void): void {
    if (this.writing.isHeld(ip)) {
      const held = this.heldBack.get(ip);
      if (!held || held.version < version) this.heldBack.set(ip, { version, change });
      return;
    }
    this.apply(ip, version, change);
  }

  /** Runs `change` if `version` is newer than what memory reflects for `ip`. */
  private apply(ip: string, version: bigint, change: () => void): boolean {
    const known = this.versions.get(ip);
    if (known !== undefined && version <= known) return false;
    this.versions.set(ip, version);
    change();
    return true;
  }

  private reportProblem(problem: ObjectProblem): void {
    this.log.warn(
      { object: problem.name, reason: problem.reason },
      'FloatingIP object kept but not usable as is',
    );
    this.observer.objectProblem?.(problem);
  }

  // ---- decisions, persisted

  /** New addresses for a key (see Allocator.allocate), each recorded as a FloatingIP object. */
  async allocate(request: AllocateRequest): Promise<Allocation[]> {
    for (let attempt = 1; ; attempt++) {
      // the allocator takes the addresses at once, so no concurrent call can choose them
      const chosen = this.allocator.allocate(request);
      try {
        await this.createAll(chosen);
        return chosen;
      } catch (err) {
        if (err instanceof AlreadyAllocatedError && attempt < ALLOCATE_ATTEMPTS) continue;
        throw err;
      }
    }
  }

  /** A given address for a key. */
  async allocateIP(ip: string, key: string, attrs: Attrs): Promise<Allocation> {
    const chosen = this.allocator.allocateIP(ip, key, attrs);
    await this.createAll([chosen]);
    return chosen;
  }

  /** Takes back the most recently parked address of `parkedKey` for `newKey` (see Allocator.unpark). */
  async unpark(
    parkedKey: string,
    newKey: string,
    nodeSubnet: string,
    attrs: Attrs,
    family?: Family,
  ): Promise<Allocation> {
    for (let attempt = 1; ; attempt++) {
      // an address with a write in flight is not yet what memory says: leave it out
      const parked = this.allocator.chooseParked(parkedKey, nodeSubnet, {
        family,
        skip: (ip) => this.writing.isHeld(ip),
      });
      if (!parked) throw new NoParkedIPError(parkedKey, nodeSubnet);
      try {
        return await this.rekey(parked.ip, { key: parkedKey }, newKey, attrs);
      } catch (err) {
        // someone took it meanwhile: choose again
        if (
          (err instanceof OwnerConflictError || err instanceof NotAllocatedError) &&
          attempt < ALLOCATE_ATTEMPTS
        )
          continue;
        throw err;
      }
    }
  }

  /** Gives an address held by `expected` to `newKey` (parking it, or moving it). */
  rekey(ip: string, expected: Owner, newKey: string, attrs: Attrs): Promise<Allocation> {
    return this.withAddress(ip, () =>
      this.change(this.allocator.planChange(ip, expected, newKey, attrs), expected),
    );
  }

  /** Changes the policy, node and pod UID of an address held by `expected`. */
  update(ip: string, expected: Owner, attrs: Attrs): Promise<Allocation> {
    return this.withAddress(ip, () =>
      this.change(this.allocator.planChange(ip, expected, expected.key, attrs), expected),
    );
  }

  /** Frees an address if it still belongs to `expected`: its object is deleted, then memory follows. */
  release(ip: string, expected: Owner): Promise<Allocation> {
    return this.withAddress(ip, async () => {
      const current = this.allocator.checkOwner(ip, expected);
      const known = this.versions.get(current.ip);
      try {
        await this.api.delete(objectNameOf(current.ip), known !== undefined ? String(known) : undefined);
      } catch (err) {
        if (!isNotFound(err)) {
          await this.reread(current.ip, err);
          throw this.refusal(err, current.ip, expected);
        }
      }
      if (this.allocator.get(current.ip) === current) this.allocator.unload(current.ip);
      return current;
    });
  }

  // ---- writes

  /**
   * Records newly chosen addresses, all or nothing. On any failure the objects created are deleted
   * again and memory is brought to what the API server holds.
   */
  private async createAll(chosen: readonly Allocation[]): Promise<void> {
    const outcomes = await Promise.allSettled(
      chosen.map((a) =>
        this.withAddress(a.ip, async () => {
          const created = await this.api.create(toFloatingIPObject(a));
          const version = versionOf(created);
          if ((this.versions.get(a.ip) ?? -1n) < version) this.versions.set(a.ip, version);
          return version;
        }),
      ),
    );
    const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (!failure) return;
    await Promise.all(
      chosen.map((a, i) =>
        this.withAddress(a.ip, async () => {
          const outcome = outcomes[i]!;
          if (outcome.status === 'fulfilled') {
            try {
              await this.api.delete(objectNameOf(a.ip), String(outcome.value));
            } catch (err) {
              // the object stays, so memory keeps it for its key, which can use it or release it later
              this.log.error(
                { ip: a.ip, key: a.key, err: (err as Error).message },
                'could not undo a FloatingIP object',
              );
            }
          }
          await this.reread(a.ip, outcome.status === 'rejected' ? outcome.reason : undefined);
        }),
      ),
    );
    const taken = outcomes.findIndex((o) => o.status === 'rejected' && isAlreadyExists(o.reason));
    if (taken >= 0) {
      // memory thought the address free, but an object existed: memory now knows who holds it
      const ip = chosen[taken]!.ip;
      throw new AlreadyAllocatedError(ip, this.allocator.get(ip)?.key ?? 'an unreadable FloatingIP object');
    }
    throw failure.reason;
  }

  /** Writes a planned change of an existing object; applies it to memory once written. */
  private async change(planned: Allocation, expected: Owner): Promise<Allocation> {
    const ip = planned.ip;
    const known = this.versions.get(ip);
    // a merge patch keeps the object's labels; its resourceVersion makes it conditional
    const patch = {
      metadata: known !== undefined ? { resourceVersion: String(known) } : {},
      spec: toFloatingIPObject(planned).spec,
    };
    let written: unknown;
    try {
      written = await this.api.patch(objectNameOf(ip), patch);
    } catch (err) {
      await this.reread(ip, err);
      throw this.refusal(err, ip, expected);
    }
    this.apply(ip, versionOf(written), () => this.allocator.load(planned));
    return this.allocator.get(ip) ?? planned;
  }

  /**
   * Runs a write of one address, alone. Watch events for the address that arrive meanwhile are held
   * back and applied afterwards (if still newer), so that they cannot interleave with the write.
   */
  private async withAddress<T>(ip: string, write: () => Promise<T>): Promise<T> {
    return this.writing.run(ip, async () => {
      try {
        return await write();
      } finally {
        const held = this.heldBack.get(ip);
        if (held) {
          this.heldBack.delete(ip);
          this.apply(ip, held.version, held.change);
        }
      }
    });
  }

  private readonly heldBack = new Map<string, { version: bigint; change: () => void }>();

  /** After a failed write: the object as it is now, in memory. */
  private async reread(ip: string, cause: unknown): Promise<void> {
    if (cause instanceof KubeApiError && cause.status === 409) this.observer.writeConflict?.(ip);
    let object: unknown;
    try {
      object = await this.api.get(objectNameOf(ip));
    } catch (err) {
      // the server is unreachable: keep memory, the watch will bring the truth when it is back
      this.log.warn(
        { ip, err: (err as Error).message },
        'could not re-read a FloatingIP object after a failed write',
      );
      return;
    }
    if (object === undefined) {
      this.allocator.unload(ip);
      return;
    }
    const decoded = fromFloatingIPObject(object);
    if (!decoded.ok) return;
    const version = versionOf(object);
    if ((this.versions.get(ip) ?? -1n) < version) this.versions.set(ip, version);
    this.allocator.load(decoded.record);
  }

  /** The error a refused write gives its caller, in the core's terms where it is one. */
  private refusal(err: unknown, ip: string, expected: Owner): Error {
    if (err instanceof KubeApiError && (err.status === 409 || err.status === 404)) {
      const now = this.allocator.get(ip);
      return now ? new OwnerConflictError(ip, expected.key, now.key) : new NotAllocatedError(ip);
    }
    return err as Error;
  }
}

function versionOf(object: unknown): bigint {
  const text = (object as FloatingIPObject | undefined)?.metadata?.resourceVersion;
  try {
    return text ? BigInt(text) : 0n;
  } catch {
    return 0n;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
