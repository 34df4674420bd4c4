// The allocator: which address belongs to which key, and every decision about it. Plain data in,
// plain data out; synchronous, so each operation is atomic with respect to every other one.
// Where addresses are and what is free is the Layout's (layout.ts); who holds what is kept here:
// the allocations by address, the key index, the orphans (allocations outside the configuration).
//
// Callers that persist (src/store) follow decide -> write -> (on failure) undo: an operation
// changes memory at once, so no concurrent call can pick the same address, and a failed write is
// undone with load(before) or unload(ip).
import type { Family } from './address.js';
import type {
  AllocateRequest,
  Allocation,
  AllocationRecord,
  AllocatorOptions,
  Attrs,
  EntryStats,
  ExcludedInUse,
  Network,
  Owner,
  ReconfigureReport,
  RestoreReport,
} from './allocation.js';
import { EMPTY_CONFIG, type PoolConfig } from './config.js';
import { ChurnSafeMap } from './churn-safe-map.js';
import {
  AlreadyAllocatedError,
  InvalidAddressError,
  IpamError,
  NoParkedIPError,
  NotAllocatedError,
  NotInConfigError,
  OwnerConflictError,
  ReservedIPError,
} from './errors.js';
import type { EntrySpace } from './entry-space.js';
import { FreeSince } from './free-since.js';
import { Held } from './held.js';
import { KeyIndex } from './key-index.js';
import { AllocationKey, POOL_KEY_PREFIX } from './keys.js';
import { Layout, networkOf } from './layout.js';
import { matchDistinct } from './matching.js';
import { isReleasePolicy } from './policy.js';
import type { RangeGroup } from './range.js';

export class Allocator {
  private layout = new Layout(EMPTY_CONFIG);
  private readonly byIp = new ChurnSafeMap<string, Held>();
  private readonly keyIndex = new KeyIndex<Held>();
  private orphanCount = 0;
  private readonly clock: () => number;
  private readonly freeSince = new FreeSince();

  constructor(config: PoolConfig = EMPTY_CONFIG, options: AllocatorOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.reconfigure(config);
  }

  // ---- configuration

  get configuration(): PoolConfig {
    return this.layout.config;
  }

  /**
   * Applies a new configuration. Allocations move with their addresses; those that fall outside it
   * are kept as orphans and reported (galaxy deletes them, docs/galaxy.md#reconfiguring-deletes-objects-in-use).
   */
  reconfigure(config: PoolConfig): ReconfigureReport {
    const layout = new Layout(config);
    const orphaned: Allocation[] = [];
    for (const held of this.byIp.values()) if (!layout.settle(held)) orphaned.push(held);
    this.layout = layout;
    this.orphanCount = orphaned.length;
    this.freeSince.configured(this.clock());
    return { orphaned };
  }

  /** The node subnet of a node with these InternalIPs, in the node's order (throws NodeSubnetError). */
  nodeSubnetOf(internalIPs: readonly string[]): string {
    return this.layout.nodeSubnetOf(internalIPs);
  }

  /** The entries (as configured) that give addresses to pods on nodes of this node subnet, in gateway order. */
  entriesServing(nodeSubnet: string): number[] {
    return this.layout.entriesServing(nodeSubnet);
  }

  // ---- decisions

  /**
   * New addresses for a key on a node of `nodeSubnet`, all or nothing. Without groups: the lowest
   * free address of the first entry (in gateway order) of each family. With groups: one distinct
   * address per group, preferring lower addresses.
   */
  allocate(request: AllocateRequest): Allocation[] {
    const picks = this.layout.pick(request);
    const now = this.clock();
    const { key } = request;
    const { policy, nodeName, podUid } = request.attrs;
    const allocations: Allocation[] = [];
    for (const { space, ordinal } of picks) {
      const ip = space.ipOf(ordinal);
      const held = new Held(ip, space.family, key, policy, nodeName, podUid, now, false, space, ordinal);
      allocations.push(this.insert(held));
    }
    return allocations;
  }

  /**
   * A given address for a key; `reserved` marks it set aside by an operator. `orphan`: one outside
   * the configuration is taken too, kept as an orphan (a running pod's address, which must stay
   * held should its range come back).
   */
  allocateIP(
    ip: string,
    key: string,
    attrs: Attrs,
    options: { reserved?: boolean; orphan?: boolean } = {},
  ): Allocation {
    const place = this.layout.place(ip);
    if (!place.space && !options.orphan) throw new NotInConfigError(place.address);
    const holder = this.byIp.get(place.address);
    if (holder) throw new AlreadyAllocatedError(place.address, holder.key);
    return this.insert(Held.at(place, key, attrs, this.clock(), options.reserved ?? false));
  }

  /**
   * Takes back the most recently parked address of `parkedKey` that can serve `nodeSubnet` (of
   * `family`, when given) and gives it to `newKey`. Ties go to the lowest address.
   */
  unpark(parkedKey: string, newKey: string, nodeSubnet: string, attrs: Attrs, family?: Family): Allocation {
    const parked = this.chooseParked(parkedKey, nodeSubnet, { family });
    if (!parked) throw new NoParkedIPError(parkedKey, nodeSubnet);
    return this.replace(parked as Held, newKey, attrs);
  }

  /**
   * The address unpark would take, changing nothing. `skip` leaves out addresses the caller cannot
   * use now (a store skips those with a write in flight).
   */
  chooseParked(
    parkedKey: string,
    nodeSubnet: string,
    options: { family?: Family | undefined; skip?: (ip: string) => boolean } = {},
  ): Allocation | undefined {
    let best: Held | undefined;
    for (const held of this.keyIndex.byKey(parkedKey)) {
      const space = held.space;
      if (held.reserved || !space || !space.nodeSubnets.has(nodeSubnet)) continue;
      if (options.family !== undefined && space.family !== options.family) continue;
      if (options.skip?.(held.ip)) continue;
      if (!best || preferred(held, best)) best = held;
    }
    return best;
  }

  /**
   * What rekey (or update, with the same key) would make of an address, changing nothing; throws
   * as they would. A store writes this first and loads it once the write has succeeded.
   */
  planChange(ip: string, expected: Owner, key: string, attrs: Attrs): Allocation {
    return this.owned(ip, expected).successor(key, attrs, this.clock());
  }

  /** The allocation release would free, changing nothing; throws as release would. */
  checkOwner(ip: string, expected: Owner): Allocation {
    return this.owned(ip, expected);
  }

  /** Gives an address to another key (parks it at a prefix, or moves it between keys). */
  rekey(ip: string, expected: Owner, newKey: string, attrs: Attrs): Allocation {
    return this.replace(this.owned(ip, expected), newKey, attrs);
  }

  /** Changes the attributes (policy, node, pod UID) of an address, keeping its key. */
  update(ip: string, expected: Owner, attrs: Attrs): Allocation {
    const held = this.owned(ip, expected);
    return this.replace(held, held.key, attrs);
  }

  /** Frees an address, if it still belongs to `expected`. Returns what was released. */
  release(ip: string, expected: Owner): Allocation {
    const held = this.owned(ip, expected);
    this.remove(held);
    return held;
  }

  // ---- following the persisted truth

  /**
   * Puts a persisted allocation in place, replacing whatever memory had for that address.
   * An address outside the configuration is kept as an orphan.
   */
  load(record: AllocationRecord): Allocation {
    return this.put(record, true);
  }

  /** Forgets an address (its object was deleted). Returns what was there. */
  unload(ip: string): Allocation | undefined {
    const held = this.byIp.get(this.layout.place(ip).address);
    if (held) this.remove(held);
    return held;
  }

  /** Replaces all allocations with these records. Malformed records and duplicates are rejected. */
  restore(records: Iterable<AllocationRecord>): RestoreReport {
    for (const held of [...this.byIp.values()]) this.remove(held);
    let loaded = 0;
    const orphaned: Allocation[] = [];
    const rejected: { record: AllocationRecord; reason: string }[] = [];
    for (const record of records) {
      try {
        const held = this.put(record, false);
        loaded++;
        if (!held.space) orphaned.push(held);
      } catch (err) {
        if (!(err instanceof IpamError)) throw err;
        rejected.push({ record, reason: err.message });
      }
    }
    return { loaded, orphaned, rejected };
  }

  // ---- queries

  get size(): number {
    return this.byIp.size;
  }

  /** The allocation of an address (any textual form), if any. */
  get(ip: string): Allocation | undefined {
    return this.byIp.get(ip) ?? this.byIp.get(this.layout.place(ip).address);
  }

  /** The configured network of an address, or undefined when no entry has it. */
  networkOf(ip: string): Network | undefined {
    const space = this.spaceOf(ip);
    return space && networkOf(space);
  }

  /** The node subnets whose nodes may use an address ([] outside the configuration). */
  nodeSubnetsServing(ip: string): readonly string[] {
    return this.spaceOf(ip)?.entry.nodeSubnets ?? [];
  }

  /** The address families entries give to pods on nodes of this node subnet (ascending). */
  familiesServing(nodeSubnet: string): readonly Family[] {
    return this.layout.familiesServing(nodeSubnet);
  }

  /** How many more pods this node subnet can serve without request_ip_range (0n when none is served). */
  freeFor(nodeSubnet: string): bigint {
    return this.layout.freeFor(nodeSubnet);
  }

  /**
   * When a free configured address became free (ms since the epoch): released, or free since the
   * configuration in force was applied. What galaxy's REST list shows as its `updateTime`.
   */
  freeSinceOf(ip: string): number {
    return this.freeSince.of(this.layout.place(ip).address);
  }

  /** Whether an address is in the configuration (whatever its state). */
  isConfigured(ip: string): boolean {
    return this.layout.place(ip).space !== undefined;
  }

  byKey(key: string): Allocation[] {
    return this.keyIndex.byKey(key).slice();
  }

  /** Every allocation whose key starts with `prefix`; "" gives all. */
  byPrefix(prefix: string): Allocation[] {
    return this.keyIndex.byPrefix(prefix);
  }

  /**
   * A Pool's allocations, parked and in use. Not all of `pool__<name>_`'s: that is also the prefix
   * of every key of a pool whose name extends this one after `_` (`my` and `my_pool`).
   */
  byPool(name: string): Allocation[] {
    return this.byPrefix(`${POOL_KEY_PREFIX}${name}_`).filter(
      (a) => AllocationKey.parse(a.key).pool === name,
    );
  }

  /** How many addresses keys starting with `prefix` hold. For a group name, O(groups matched). */
  countByPrefix(prefix: string): number {
    return this.keyIndex.countByPrefix(prefix);
  }

  /** How many keys starting with `prefix` hold addresses. For a group name, O(groups matched). */
  countKeysByPrefix(prefix: string, inGroup?: (groupName: string) => boolean): number {
    return this.keyIndex.countKeysByPrefix(prefix, inGroup);
  }

  /** Allocations whose key contains `keyword` (case-sensitive), as galaxy's fuzzy search. */
  byKeyword(keyword: string): Allocation[] {
    return this.keyIndex.byKeyword(keyword);
  }

  all(): IterableIterator<Allocation> {
    return this.byIp.values();
  }

  orphaned(): Allocation[] {
    if (this.orphanCount === 0) return [];
    return [...this.byIp.values()].filter((held) => !held.space);
  }

  /**
   * Which of the key's addresses already satisfy which groups: a distinct address per group where
   * possible. A reserved address is nobody's to use, whatever its key.
   */
  matchHeld(key: string, groups: readonly RangeGroup[]): (Allocation | undefined)[] {
    const held = this.keyIndex.byKey(key).filter((h) => !h.reserved);
    return matchDistinct(
      groups.map((group) => held.filter((h) => h.inGroup(group))),
      (h) => h.ip,
    );
  }

  /**
   * The node subnets that can still serve a request (galaxy's NodeSubnetsByIPRanges,
   * docs/galaxy.md#how-galaxy-picks-addresses, but with distinct addresses for overlapping groups).
   */
  nodeSubnetsFor(groups: readonly RangeGroup[] = [], families?: readonly Family[]): Set<string> {
    return this.layout.nodeSubnetsFor(groups, families);
  }

  /** Per configured entry, in configuration order. The one source of these numbers. */
  stats(): EntryStats[] {
    return this.layout.stats();
  }

  /**
   * Allocations of addresses that are never handed out (a network, broadcast or gateway address
   * that galaxy gave a pod, or an adopted one): kept for their keys, and worth a warning.
   */
  excludedInUse(): ExcludedInUse[] {
    return this.layout.excludedInUse((ip) => this.byIp.get(ip));
  }

  /**
   * The addresses this configuration never hands out that `holderOf` says are held: what another
   * allocator's allocations would be under this configuration (a change judged before it is made).
   */
  excludedHeldBy(holderOf: (ip: string) => Allocation | undefined): ExcludedInUse[] {
    return this.layout.excludedInUse(holderOf);
  }

  get orphanedCount(): number {
    return this.orphanCount;
  }

  // ---- internals

  // a held address's place is at hand; any other needs parsing
  private spaceOf(ip: string): EntrySpace | undefined {
    return (this.byIp.get(ip) ?? this.layout.place(ip)).space;
  }

  private owned(ip: string, expected: Owner): Held {
    const held = this.byIp.get(ip) ?? this.byIp.get(this.layout.place(ip).address);
    if (!held) throw new NotAllocatedError(ip);
    if (held.reserved) throw new ReservedIPError(held.ip, held.key);
    if (held.key !== expected.key) throw new OwnerConflictError(held.ip, expected.key, held.key);
    if (expected.podUid !== undefined && held.podUid !== expected.podUid) {
      throw new OwnerConflictError(
        held.ip,
        `${expected.key} (pod uid ${expected.podUid})`,
        `${held.key} (pod uid ${held.podUid})`,
      );
    }
    return held;
  }

  private replace(held: Held, key: string, attrs: Attrs): Held {
    this.remove(held);
    return this.insert(held.successor(key, attrs, this.clock()));
  }

  private put(record: AllocationRecord, replace: boolean): Held {
    if (!isReleasePolicy(record.policy)) {
      throw new InvalidAddressError(String(record.policy), `invalid release policy for ${record.ip}`);
    }
    const place = this.layout.place(record.ip);
    const previous = this.byIp.get(place.address);
    if (previous) {
      if (!replace) throw new AlreadyAllocatedError(place.address, previous.key);
      this.remove(previous);
    }
    return this.insert(Held.at(place, record.key, record, record.updateTime, record.reserved));
  }

  // callers remove whatever held the address before, so it is never live in byIp here
  private insert(held: Held): Held {
    this.byIp.add(held.ip, held);
    if (held.space) held.space.take(held.ordinal, held.reserved);
    else this.orphanCount++;
    this.keyIndex.add(held);
    this.freeSince.taken(held.ip);
    return held;
  }

  private remove(held: Held): void {
    this.byIp.delete(held.ip);
    if (held.space) held.space.give(held.ordinal, held.reserved);
    else this.orphanCount--;
    this.keyIndex.remove(held);
    this.freeSince.freed(held.ip, this.clock());
  }
}

/** Which parked address unpark takes: the most recently parked, then the first in gateway order. */
const preferred = (a: Held, b: Held): boolean =>
  a.updateTime !== b.updateTime ? a.updateTime > b.updateTime : a.before(b);
