// How the store's decisions (floating-ip-store.ts) reach the API server: the objects of newly chosen
// addresses created all or nothing, an object's change patched on the version memory reflects, and
// the object of an address a live pod still holds written again after someone deleted it. After a
// failed write the object is read again, so that memory holds what the API server holds before the
// caller decides again; a patch whose answer was lost but which landed counts as made. Each write is
// refused first by the store's guard on a replica that does not lead.
import { type Allocation, type Allocator, AlreadyAllocatedError, NotAllocatedError } from '../ipam/index.js';
import {
  type CustomResourceClient,
  KubeApiError,
  isAlreadyExists,
  isConflict,
  isNotFound,
} from '../kube/custom-resources.js';
import { NotLeaderError } from '../kube/leadership.js';
import type { Logger } from '../log.js';
import { type AddressVersions, versionOf } from './address-versions.js';
import type { FloatingIPFollower, FollowObserver } from './floating-ip-follower.js';
import { fromFloatingIPObject, objectNameOf, ownedLabels, toFloatingIPObject } from './floating-ip-object.js';

/** What the store reports: what following the objects finds, and the writes' conflicts. */
export interface StoreObserver extends FollowObserver {
  /** A write that failed because someone else changed the object first. */
  writeConflict?(ip: string): void;
}

/** How often a write is planned again after a conflict while the caller's decision still holds. */
export const WRITE_ATTEMPTS = 3;
/** A bind's failed creates are undone and re-read within this past its time for creates. */
const CLEANUP_MIN_MS = 250;

export class FloatingIPWriter {
  constructor(
    private readonly api: CustomResourceClient,
    private readonly allocator: Allocator,
    private readonly versions: AddressVersions,
    private readonly follower: FloatingIPFollower,
    private readonly log: Logger,
    private readonly observer: StoreObserver,
    /** Called before every write; throws to refuse it (a replica that is not the leader). */
    private readonly guard: () => void,
  ) {}

  /**
   * Writes again the object of an address memory keeps for a live pod after someone else deleted
   * it, or (`over: 'edited'`) gave it another key (FollowObserver.stillHeld). A replica that does
   * not lead writes nothing (the leader does); an object that exists again meanwhile is read
   * instead.
   */
  async restore(a: Allocation, over?: 'edited'): Promise<void> {
    try {
      await this.versions.withAddress(a.ip, async () => {
        if (this.allocator.get(a.ip) !== a) return; // changed meanwhile: nothing to restore
        this.guard();
        const written =
          over === 'edited'
            ? await this.api.patch(objectNameOf(a.ip), patchOf(a, this.versions.get(a.ip)), this.guard)
            : await this.api.create(toFloatingIPObject(a), undefined, this.guard);
        this.versions.raise(a.ip, versionOf(written));
        this.log.info({ ip: a.ip, key: a.key, podUid: a.podUid }, 'FloatingIP object written again');
      });
    } catch (err) {
      if (isAlreadyExists(err)) {
        await this.reread(a.ip, err);
        return;
      }
      // edited again meanwhile: that edit's watch event is judged as this one was
      if (over === 'edited' && isConflict(err)) return;
      // a follower keeps the address too; the leader writes the object
      if (err instanceof NotLeaderError) return;
      this.log.warn(
        { ip: a.ip, key: a.key, podUid: a.podUid, err: (err as Error).message },
        `could not write again the deleted FloatingIP object of ${a.ip} held by ${a.key}`,
      );
    }
  }

  /**
   * Records newly chosen addresses, all or nothing. On any failure the objects created are deleted
   * again and memory is brought to what the API server holds.
   */
  async createAll(chosen: readonly Allocation[], timeLeft?: () => number): Promise<void> {
    const outcomes = await Promise.allSettled(
      chosen.map((a) =>
        this.versions.withAddress(a.ip, async () => {
          this.guard();
          const left = timeLeft?.();
          if (left !== undefined && left <= 0) {
            throw new Error(`no time left to create FloatingIP ${objectNameOf(a.ip)} for ${a.key}`);
          }
          const created = await this.api.create(toFloatingIPObject(a), left, this.guard);
          const version = versionOf(created);
          this.versions.raise(a.ip, version);
          return version;
        }),
      ),
    );
    const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (!failure) return;
    // a bind's cleanup shares its deadline: the creates gave up in time, and undoing them on a
    // stalled API server must not keep the scheduler's answer waiting for the stall to end
    const left = timeLeft?.();
    const cleanupEnd = left === undefined ? undefined : Date.now() + Math.max(0, left) + CLEANUP_MIN_MS;
    const within = () => (cleanupEnd === undefined ? undefined : cleanupEnd - Date.now());
    await Promise.all(
      chosen.map((a, i) =>
        this.versions.withAddress(a.ip, async () => {
          const outcome = outcomes[i]!;
          if (outcome.status === 'fulfilled') {
            try {
              // only while leading: once the Lease is lost, the next leader may have bound the pod
              // with this very object, reused as it was (same key and pod UID, so its version is
              // unchanged and the precondition would not stop the delete). Left, the object names
              // the pod: its next bind reuses it, its deletion releases it by its policy.
              this.guard();
              await this.api.delete(objectNameOf(a.ip), String(outcome.value), within(), this.guard);
            } catch (err) {
              // the object stays, so memory keeps it for its key, which can use it or release it later
              this.log.error(
                { ip: a.ip, key: a.key, err: (err as Error).message },
                'could not undo a FloatingIP object',
              );
            }
          }
          const cause = outcome.status === 'rejected' ? outcome.reason : undefined;
          if (
            !(await this.reread(a.ip, cause, within())) &&
            cause !== undefined &&
            this.allocator.get(a.ip) === a
          ) {
            // memory took the address before its create, and neither the create nor a re-read
            // answered: an object that was never made would hold it in memory for ever, since no
            // watch event comes for it. One that was made arrives by the watch; a create of it
            // meanwhile is refused (AlreadyExists), so freeing it here hands it to nobody else.
            this.allocator.unload(a.ip);
            this.observer.freed?.(a.ip);
          }
        }),
      ),
    );
    const taken = outcomes.findIndex((o) => o.status === 'rejected' && isAlreadyExists(o.reason));
    if (taken >= 0) {
      // memory thought the address free, but an object existed: memory now knows who holds it
      // (aside, when floatip cannot read the object), unless it could not be read back
      const ip = chosen[taken]!.ip;
      const holder = this.allocator.get(ip);
      throw new AlreadyAllocatedError(
        ip,
        holder
          ? holder.key || `FloatingIP ${objectNameOf(ip)}, which names no key`
          : `FloatingIP ${objectNameOf(ip)}, which could not be read back`,
      );
    }
    throw failure.reason;
  }

  /**
   * Writes a planned change of an existing object and applies it to memory once written. On a
   * conflict the object is re-read and the change planned again (which refuses if the address
   * changed hands), a few times at most. With `timeLeft` (a bind's budget, as for a create), no patch
   * is started without time left and none waits longer for its answer; the re-read after a failure
   * waits at most CLEANUP_MIN_MS past that. A patch whose answer did not come in time may still
   * land: the watch then brings it, and its resourceVersion precondition makes any other write of
   * the address, planned on the object before it, a conflict.
   */
  async change(plan: () => Allocation, timeLeft?: () => number): Promise<Allocation> {
    for (let attempt = 1; ; attempt++) {
      const planned = plan();
      const ip = planned.ip;
      const left = timeLeft?.();
      if (left !== undefined && left <= 0) {
        throw new Error(`no time left to change FloatingIP ${objectNameOf(ip)} for ${planned.key}`);
      }
      let written: unknown;
      this.guard();
      try {
        written = await this.api.patch(
          objectNameOf(ip),
          patchOf(planned, this.versions.get(ip)),
          this.guard,
          left,
        );
      } catch (err) {
        const rereadMs = timeLeft && Math.max(0, timeLeft()) + CLEANUP_MIN_MS;
        const now = (await this.reread(ip, err, rereadMs)) ? this.allocator.get(ip) : undefined;
        // a patch whose answer was lost (the connection reset after the API server applied it) is
        // done all the same: the object read back as planned is the change made
        if (now && sameHolding(now, planned)) return now;
        if (isConflict(err) && attempt < WRITE_ATTEMPTS) continue;
        throw this.refusal(err, ip);
      }
      this.versions.apply(ip, versionOf(written), () => this.allocator.load(planned));
      return this.allocator.get(ip) ?? planned;
    }
  }

  /** After a failed write: the object as it is now, in memory. False when it could not be read. */
  async reread(ip: string, cause: unknown, timeoutMs?: number): Promise<boolean> {
    if (cause instanceof KubeApiError && cause.status === 409) this.observer.writeConflict?.(ip);
    let object: unknown;
    try {
      object = await this.api.get(objectNameOf(ip), timeoutMs);
    } catch (err) {
      // the server is unreachable: keep memory, the watch will bring the truth when it is back
      this.log.warn(
        { ip, err: (err as Error).message },
        'could not re-read a FloatingIP object after a failed write',
      );
      return false;
    }
    if (object === undefined) {
      // deleted by someone else meanwhile: free now, and its later watch event will find it gone
      if (this.allocator.unload(ip)) this.observer.freed?.(ip);
      return true;
    }
    const decoded = fromFloatingIPObject(object);
    // an object floatip cannot read still takes its address: memory holds it aside, never for
    // the key whose write was refused
    const record = decoded.ok ? decoded.record : decoded.aside;
    if (!record) return true;
    this.versions.raise(ip, versionOf(object));
    if (decoded.ok) this.allocator.load(record);
    else this.follower.holdAside(record, decoded.reason);
    return true;
  }

  /** The error a refused write gives its caller, in the core's terms where it is one. */
  refusal(err: unknown, ip: string): Error {
    if (isNotFound(err) && !this.allocator.get(ip)) return new NotAllocatedError(ip);
    return err as Error;
  }
}

/**
 * The merge patch that writes `a` over its object: it changes only floatip's labels (null removes
 * one) and keeps the others; the resourceVersion memory reflects makes it conditional.
 */
const patchOf = (a: Allocation, known: bigint | undefined) => ({
  metadata: {
    labels: ownedLabels(a),
    ...(known !== undefined ? { resourceVersion: String(known) } : {}),
  },
  spec: toFloatingIPObject(a).spec,
});

/** Whether two records of an address give it to the same owner on the same terms. */
const sameHolding = (a: Allocation, b: Allocation): boolean =>
  a.key === b.key && a.podUid === b.podUid && a.nodeName === b.nodeName && a.policy === b.policy;
