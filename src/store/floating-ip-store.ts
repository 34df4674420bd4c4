// The FloatingIP objects in the API server are the truth; the allocator is a cache of them. This
// store keeps it so: every decision is written first and applied to memory only once the write has
// succeeded, each write conditional on the version the store last saw. A conflict means someone
// else changed the object: the store re-reads it and the caller decides again. Nothing is
// overwritten blindly.
//
// This module is the door the rest of floatip uses: it takes the decisions, tries them again while
// they still hold, and deletes the object of an address released. Creating, patching and re-reading
// the objects is floating-ip-writer.ts; following the objects others write (the list at start, then
// the watch) is floating-ip-follower.ts; the per-address versions, by which the store ignores any
// event or answer older than what memory reflects, and the holding back of events while an address
// is written, are address-versions.ts: both sides keep that one rule.
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
import type { KubeConfig } from '@kubernetes/client-node';
import { type CustomResourceClient, isConflict, isNotFound } from '../kube/custom-resources.js';
import type { Logger } from '../log.js';
import { AddressVersions } from './address-versions.js';
import { FloatingIPFollower, type StartReport } from './floating-ip-follower.js';
import { objectNameOf } from './floating-ip-object.js';
import { FloatingIPWriter, type StoreObserver, WRITE_ATTEMPTS } from './floating-ip-writer.js';
import { LateCreateError, StaleDecisionError } from './store-errors.js';

export type { ObjectProblem, StartReport } from './floating-ip-follower.js';
export { LateCreateError, StaleDecisionError } from './store-errors.js';

/** How often allocate tries again when an address it chose turns out to be taken already. */
const ALLOCATE_ATTEMPTS = 3;

export class FloatingIPStore {
  private readonly versions = new AddressVersions();
  private readonly follower: FloatingIPFollower;
  private readonly writer: FloatingIPWriter;

  constructor(
    private readonly api: CustomResourceClient,
    kubeConfig: KubeConfig,
    readonly allocator: Allocator,
    log: Logger,
    private readonly observer: StoreObserver = {},
    /** Called before every write; throws to refuse it (a replica that is not the leader). */
    private readonly guard: () => void = () => undefined,
  ) {
    this.follower = new FloatingIPFollower(
      api,
      kubeConfig,
      allocator,
      this.versions,
      log,
      observer,
      (a, over) => void this.writer.restore(a, over),
    );
    this.writer = new FloatingIPWriter(api, allocator, this.versions, this.follower, log, observer, guard);
  }

  // ---- start, follow, stop

  /** Lists every object into the allocator, and follows the watch from then on. */
  start(): Promise<StartReport> {
    return this.follower.start();
  }

  stop(): Promise<void> {
    return this.follower.stop();
  }

  /** Memory as the API server's objects are now, whatever the watch missed (Reflector.catchUp). */
  catchUp(): Promise<void> {
    return this.follower.catchUp();
  }

  /** Settles the deleted objects put off while the pod cache could not be trusted (FollowObserver.deferSettling). */
  settleDeferred(): void {
    this.follower.settleDeferred();
  }

  // ---- decisions, persisted

  /**
   * New addresses for a key (see Allocator.allocate), each recorded as a FloatingIP object. With
   * `timeLeft` (milliseconds, asked before each create), no create is started without time left
   * and none waits longer for its answer.
   */
  async allocate(request: AllocateRequest, timeLeft?: () => number): Promise<Allocation[]> {
    for (let attempt = 1; ; attempt++) {
      // the allocator takes the addresses at once, so no concurrent call can choose them
      const chosen = this.allocator.allocate(request);
      try {
        await this.writer.createAll(chosen, timeLeft);
        return chosen;
      } catch (err) {
        if (!(err instanceof AlreadyAllocatedError)) throw err;
        const holder = this.allocator.get(err.ip);
        // the object is this very pod's: an earlier create for it whose answer never came has
        // landed. Another address would leave the owner holding two of a family, one unused for as
        // long as the key lives; the caller's next try reuses this one instead.
        // A reserved one (or an object floatip cannot read, held aside) is nobody's to use, whatever
        // it names: another address, as for any other holder.
        if (
          request.attrs.podUid &&
          holder?.key === request.key &&
          holder.podUid === request.attrs.podUid &&
          !holder.reserved
        ) {
          throw new LateCreateError(err.ip, request.key);
        }
        if (attempt < ALLOCATE_ATTEMPTS) continue;
        throw err;
      }
    }
  }

  /** A given address for a key. */
  async allocateIP(
    ip: string,
    key: string,
    attrs: Attrs,
    options: { orphan?: boolean } = {},
  ): Promise<Allocation> {
    const chosen = this.allocator.allocateIP(ip, key, attrs, options);
    await this.writer.createAll([chosen]);
    return chosen;
  }

  /**
   * Takes back the most recently parked address of `parkedKey` for `newKey` (see Allocator.unpark);
   * with `timeLeft`, as a change below.
   */
  async unpark(
    parkedKey: string,
    newKey: string,
    nodeSubnet: string,
    attrs: Attrs,
    family?: Family,
    timeLeft?: () => number,
  ): Promise<Allocation> {
    for (let attempt = 1; ; attempt++) {
      // an address with a write in flight is not yet what memory says: leave it out
      const parked = this.allocator.chooseParked(parkedKey, nodeSubnet, {
        family,
        skip: (ip) => this.versions.isWriting(ip),
      });
      if (!parked) throw new NoParkedIPError(parkedKey, nodeSubnet);
      try {
        return await this.rekey(parked.ip, { key: parkedKey }, newKey, attrs, undefined, timeLeft);
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

  /**
   * The resourceVersion of the object memory reflects for an address. A caller that decides on
   * what it read can pass it back as `decidedAt`: the write then happens only if nothing changed
   * the object in between (ABA-safe), else StaleDecisionError and the caller decides again.
   */
  versionOf(ip: string): bigint | undefined {
    return this.versions.get(ip);
  }

  /**
   * Why floatip cannot read the FloatingIP object of an address memory holds aside (nobody's to be
   * given or released until the object is fixed or deleted); undefined for any other address.
   */
  unreadable(ip: string): string | undefined {
    return this.follower.unreadable(ip);
  }

  private checkDecision(ip: string, decidedAt: bigint | undefined): void {
    if (decidedAt !== undefined && this.versions.get(ip) !== decidedAt)
      throw new StaleDecisionError(ip, decidedAt);
  }

  /** Gives an address held by `expected` to `newKey` (parking it, or moving it). */
  rekey(
    ip: string,
    expected: Owner,
    newKey: string,
    attrs: Attrs,
    decidedAt?: bigint,
    timeLeft?: () => number,
  ): Promise<Allocation> {
    return this.versions.withAddress(ip, () =>
      this.writer.change(() => {
        this.checkDecision(ip, decidedAt);
        return this.allocator.planChange(ip, expected, newKey, attrs);
      }, timeLeft),
    );
  }

  /** Changes the policy, node and pod UID of an address held by `expected`. */
  update(
    ip: string,
    expected: Owner,
    attrs: Attrs,
    decidedAt?: bigint,
    timeLeft?: () => number,
  ): Promise<Allocation> {
    return this.versions.withAddress(ip, () =>
      this.writer.change(() => {
        this.checkDecision(ip, decidedAt);
        return this.allocator.planChange(ip, expected, expected.key, attrs);
      }, timeLeft),
    );
  }

  /**
   * Frees an address if it still belongs to `expected`: its object is deleted, then memory follows.
   * A conflict re-reads the object and tries again while `expected` still holds it.
   */
  release(ip: string, expected: Owner, decidedAt?: bigint): Promise<Allocation> {
    return this.versions.withAddress(ip, async () => {
      for (let attempt = 1; ; attempt++) {
        this.checkDecision(ip, decidedAt);
        const current = this.allocator.checkOwner(ip, expected);
        const known = this.versions.get(current.ip);
        // outside the try: a replica that does not lead sends nothing, so it has nothing to read back
        this.guard();
        try {
          await this.api.delete(
            objectNameOf(current.ip),
            known !== undefined ? String(known) : undefined,
            undefined,
            this.guard,
          );
        } catch (err) {
          if (isNotFound(err)) {
            // someone else deleted it first (kubectl delete floatingip), and memory may be stale (a
            // new leader whose watches were silent): the key is done with it, but a live pod may
            // run with the address, as the object someone deleted may have said
            if (this.allocator.get(current.ip) === current) this.follower.settleGone(current, false);
            return current;
          }
          // a delete whose answer was lost (the connection reset after the API server applied it)
          // is done all the same: the object read back gone is the release made
          if (!((await this.writer.reread(current.ip, err)) && !this.allocator.get(current.ip))) {
            if (isConflict(err) && attempt < WRITE_ATTEMPTS) continue;
            throw this.writer.refusal(err, current.ip);
          }
        }
        if (this.allocator.get(current.ip) === current) {
          this.allocator.unload(current.ip);
          this.observer.freed?.(current.ip);
        }
        return current;
      }
    });
  }
}
