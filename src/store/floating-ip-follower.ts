// Brings memory to the FloatingIP objects others wrote: at start every object (listed, paged) into the
// allocator, then the watch, so that objects created, edited or deleted by anyone (kubectl
// reservations) take effect at once; a lost watch is resumed or re-listed (src/kube/reflector.ts).
// Apart from the writes (floating-ip-store.ts, floating-ip-writer.ts) because it decides nothing: it
// only applies what the API server says, through the version rule both share (address-versions.ts),
// but for one thing: an object deleted or given another key by someone else while a live pod holds
// its address keeps the address held for that pod (FollowObserver.stillHeld, verifyHeld), and the
// store writes the object again.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Allocation, AllocationRecord, Allocator, Attrs } from '../ipam/index.js';
import type { CustomResourceClient } from '../kube/custom-resources.js';
import { Reflector } from '../kube/reflector.js';
import { watchPacing } from '../kube/watch-pacing.js';
import type { Logger } from '../log.js';
import { type AddressVersions, versionOf } from './address-versions.js';
import {
  type FloatingIPObject,
  fromFloatingIPObject,
  ipOfCanonicalName,
  objectNameOf,
} from './floating-ip-object.js';

/** Something wrong with an object that the store keeps (never deletes) and reports. */
export interface ObjectProblem {
  readonly name: string;
  readonly reason: string;
}

/** What following the objects reports (the store's observer, see StoreObserver). */
export interface FollowObserver {
  /** A FloatingIP object the store cannot use, or one outside the configuration. */
  objectProblem?(problem: ObjectProblem): void;
  /** An address became free: released here, or its object deleted by someone else. */
  freed?(ip: string): void;
  /**
   * The live pod that still holds `a`'s address, deleted by someone else (the incarnation its pod
   * UID names, or a pod whose annotation names the address), as the key and attributes it holds
   * it under: memory keeps the address for it and its object is written again, instead of
   * freeing an address that pod runs with. Undefined: the address is free.
   */
  stillHeld?(a: Allocation): Holder | undefined;
  /**
   * The same question asked of the API server, for an address of a pod that `stillHeld` could not
   * vouch for (a pod cache lagging behind a re-created pod): memory keeps the address meanwhile.
   * Rejects when the API server cannot say; the address is then kept.
   */
  verifyHeld?(a: Allocation): Promise<Holder | undefined>;
  /**
   * Whether the pod cache stillHeld reads may show pods long gone (a new leader whose watches were
   * silent, before it has read the pods again): a deleted object's address then stays as memory has
   * it, and is settled by settleDeferred once the cache can be trusted.
   */
  deferSettling?(): boolean;
}

/** Who holds an address: its key, policy, node and pod UID. */
export interface Holder {
  readonly key: string;
  readonly attrs: Attrs;
  /** Why a pod that is not on a node yet holds it (its binding may still land); the log says so. */
  readonly why?: string;
}

export interface StartReport {
  readonly objects: number;
  readonly loaded: number;
  readonly orphaned: readonly Allocation[];
  readonly problems: readonly ObjectProblem[];
}

/**
 * The FloatingIP objects as the API server has them, listed in pages and watched, keeping only each
 * one's name and version (the allocator holds the rest: 100,000 objects are not worth holding twice).
 */
export function floatingIPReflector(
  api: CustomResourceClient,
  kubeConfig: KubeConfig,
  log: Logger,
): Reflector<FloatingIPObject> {
  return new Reflector<FloatingIPObject>({
    name: 'floatingips',
    path: api.path,
    list: (page) => api.reflectorPage<FloatingIPObject>(page),
    kubeConfig,
    log,
    keep: 'versions',
    pacing: watchPacing,
  });
}

export class FloatingIPFollower {
  private readonly reflector: Reflector<FloatingIPObject>;
  private starting: ObjectProblem[] | undefined;
  /** Deleted objects' addresses put off while the pod cache could not be trusted (deferSettling). */
  private readonly deferred = new Map<string, { held: Allocation; verify: boolean }>();
  /**
   * Why an address is held aside (its object cannot be read), for as long as memory still holds it
   * so: an entry whose allocation memory has since replaced or freed says nothing, and goes when
   * asked. At most one per address.
   */
  private readonly asideWhy = new Map<string, { held: Allocation; reason: string }>();

  constructor(
    api: CustomResourceClient,
    kubeConfig: KubeConfig,
    private readonly allocator: Allocator,
    private readonly versions: AddressVersions,
    private readonly log: Logger,
    private readonly observer: FollowObserver,
    /**
     * Writes the object of an allocation memory keeps again (the store's, on the leader): created
     * again, or written over someone else's edit.
     */
    private readonly restore: (a: Allocation, over?: 'edited') => void = () => undefined,
  ) {
    this.reflector = floatingIPReflector(api, kubeConfig, log)
      .on('add', (o) => this.onObject(o))
      .on('update', (o) => this.onObject(o))
      .on('delete', (o) => this.onDeleted(o));
  }

  /** Lists every object into the allocator, and follows the watch from then on. */
  async start(): Promise<StartReport> {
    this.starting = [];
    await this.reflector.start();
    const problems = this.starting;
    this.starting = undefined;
    const orphaned = this.allocator.orphaned();
    this.log.info(
      {
        objects: this.reflector.size,
        loaded: this.allocator.size,
        orphaned: orphaned.length,
        problems: problems.length,
      },
      'floating IPs restored',
    );
    return { objects: this.reflector.size, loaded: this.allocator.size, orphaned, problems };
  }

  stop(): Promise<void> {
    return this.reflector.stop();
  }

  /**
   * Memory as the API server's objects are now (Reflector.catchUp), on a replica that has just taken
   * the Lease. An address memory kept for a live pod when its object was deleted while no replica
   * could write it again (both following: settle, whose restore a follower does not do) has no
   * object, and the list shows no change for it: it is judged again now, as a deletion seen by the
   * leader is, and its object written again or the address freed.
   */
  async catchUp(): Promise<void> {
    await this.reflector.catchUp();
    const unwritten = [...this.allocator.all()].filter((held) => !this.reflector.get(objectNameOf(held.ip)));
    for (const held of unwritten) if (this.allocator.get(held.ip) === held) this.settleGone(held);
  }

  private onObject(object: FloatingIPObject): void {
    const decoded = fromFloatingIPObject(object);
    if (!decoded.ok) {
      this.reportProblem({ name: object.metadata?.name ?? '', reason: decoded.reason });
      // its address is taken all the same (a create of its name is refused): thought free, it
      // was chosen, its create refused, and memory kept it for a key the API server never gave it
      const { aside, reason } = decoded;
      if (aside) this.versions.applyEvent(aside.ip, versionOf(object), () => this.holdAside(aside, reason));
      return;
    }
    const { record } = decoded;
    this.versions.applyEvent(record.ip, versionOf(object), () => {
      const before = this.allocator.get(record.ip);
      const loaded = this.allocator.load(record);
      if (!this.allocator.isConfigured(record.ip)) {
        this.reportProblem({
          name: objectNameOf(record.ip),
          reason: `${record.ip} is outside every configured range; kept`,
        });
      }
      if (before && before.key !== loaded.key) this.rekeyed(loaded, before.key);
    });
  }

  /**
   * Someone else gave the object of an address memory held another `spec.key` (an edit by hand:
   * floatip's own writes are not seen again). A live pod that runs with the address under another
   * key keeps it, and the object is written again for it: taken as truth, the edit would let the
   * address be unparked or released for the next pod while this one runs with it. A reservation
   * is taken as it comes (nothing is handed a reserved address), and so is a key no live pod
   * contradicts (an operator moving a parked address to another app).
   */
  private rekeyed(loaded: Allocation, was: string): void {
    if (loaded.reserved || this.observer.deferSettling?.()) return;
    const holder = this.observer.stillHeld?.(loaded);
    if (!holder || holder.key === loaded.key) return;
    const kept = this.keep(loaded, holder);
    if (!kept) return;
    this.log.warn(
      { ip: loaded.ip, key: kept.key, podUid: kept.podUid, node: kept.nodeName, edited: loaded.key, was },
      `FloatingIP ${objectNameOf(loaded.ip)}'s spec.key was changed to ${loaded.key} while pod ${kept.key} (uid ${kept.podUid}) runs with ${loaded.ip}; it stays held for that pod and its object is written again`,
    );
    this.restore(kept, 'edited');
  }

  /** Puts in memory the record that holds aside the address of an object it cannot read (Decoded). */
  holdAside(aside: AllocationRecord, reason: string): void {
    const held = this.allocator.load(aside);
    this.asideWhy.set(held.ip, { held, reason });
  }

  /** Why floatip cannot read the object of an address memory holds aside; undefined for any other. */
  unreadable(ip: string): string | undefined {
    const held = this.allocator.get(ip);
    const noted = held && this.asideWhy.get(held.ip);
    if (noted && noted.held === held) return noted.reason;
    this.asideWhy.delete(held?.ip ?? ip);
    return undefined;
  }

  private onDeleted(object: FloatingIPObject): void {
    // an object under another name than its address's was never loaded (onObject): its deletion
    // must not free the address the canonical object still holds
    const ip = ipOfCanonicalName(object.metadata?.name ?? '');
    if (ip === undefined) return;
    this.versions.applyEvent(ip, versionOf(object), () => {
      const held = this.allocator.get(ip);
      if (held) this.settleGone(held);
    });
  }

  /**
   * The object of memory's allocation `held` is gone (deleted by someone else: a watch event, or a
   * write of the store's own that found it gone). The address stays held for a live pod that holds
   * it (the allocation's own incarnation, or a bound pod whose annotation names it) and its object
   * is written again; otherwise it is free. Memory may be stale here (a new leader whose watches
   * were silent): what memory thought held the address matters less than who runs with it.
   * `verify`: when the pod cache cannot vouch for the allocation's own pod, keep the address while
   * the API server is asked (a release that found the object gone already knows its pod is done).
   */
  settleGone(held: Allocation, verify = true): void {
    if (this.observer.deferSettling?.()) {
      // a stale cache would vouch for a pod long gone, and the object be written again for it
      // while another pod runs with the address (the soak): memory keeps it as it is meanwhile
      this.deferred.set(held.ip, { held, verify });
      return;
    }
    const holder = this.observer.stillHeld?.(held);
    if (!holder && verify && !held.reserved && held.podUid !== '' && this.observer.verifyHeld) {
      // memory keeps it while the API server says whether its pod lives
      void this.verify(held);
      return;
    }
    this.settle(held, holder);
  }

  /** Settles the deleted objects put off by deferSettling whose addresses memory still has as then. */
  settleDeferred(): void {
    const waiting = [...this.deferred.values()];
    this.deferred.clear();
    for (const { held, verify } of waiting)
      if (this.allocator.get(held.ip) === held) this.settleGone(held, verify);
  }

  /** Asks the API server whether `held`'s pod lives: kept and written again, or freed. */
  private async verify(held: Allocation): Promise<void> {
    let holder: Holder | undefined;
    try {
      holder = await this.observer.verifyHeld!(held);
    } catch (err) {
      this.log.warn(
        { ip: held.ip, key: held.key, podUid: held.podUid, err: (err as Error).message },
        `FloatingIP ${held.ip} was deleted and whether pod ${held.key} (uid ${held.podUid}) still holds it cannot be told; it stays held`,
      );
      return;
    }
    if (this.allocator.get(held.ip) !== held) return; // changed meanwhile (written again, taken)
    this.settle(held, holder);
  }

  /**
   * Kept for `holder` with its object written again, or freed: `kubectl delete floatingip` of a
   * running pod's address (or of a reservation made over it) must not hand the pod's address to
   * the next pod while this one runs with it.
   */
  private settle(held: Allocation, holder: Holder | undefined): void {
    const kept = holder ? this.keep(held, holder) : undefined;
    if (kept) {
      const name = objectNameOf(held.ip);
      const who = `pod ${kept.key} (uid ${kept.podUid})`;
      this.log.warn(
        { ip: held.ip, key: kept.key, podUid: kept.podUid, node: kept.nodeName, was: held.key },
        holder?.why === undefined
          ? `FloatingIP ${name} was deleted while ${who} still holds ${held.ip}; it stays held and its object is written again`
          : `FloatingIP ${name} was deleted while ${who} may hold ${held.ip}: ${holder.why}; it stays held and its object is written again`,
      );
      this.restore(kept);
      return;
    }
    if (this.allocator.unload(held.ip)) this.observer.freed?.(held.ip);
  }

  /** `held` as memory keeps it for its live holder (another key than the deleted object's too). */
  private keep(held: Allocation, holder: Holder): Allocation | undefined {
    if (held.key === holder.key && held.podUid === holder.attrs.podUid && !held.reserved) return held;
    this.allocator.unload(held.ip);
    // outside the configuration now, it is held all the same: its range may come back
    return this.allocator.allocateIP(held.ip, holder.key, holder.attrs, { orphan: true });
  }

  private reportProblem(problem: ObjectProblem): void {
    this.starting?.push(problem);
    this.log.warn(
      { object: problem.name, reason: problem.reason },
      'FloatingIP object kept but not usable as is',
    );
    this.observer.objectProblem?.(problem);
  }
}
