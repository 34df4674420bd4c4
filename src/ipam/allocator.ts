// The allocator: which address belongs to which key, and every decision about it. Plain data in,
// plain data out; synchronous, so each operation is atomic with respect to every other one.
//
// Callers that persist (src/store) follow decide -> write -> (on failure) undo: an operation
// changes memory at once, so no concurrent call can pick the same address, and a failed write is
// undone with load(before) or unload(ip).
import { type Family, formatAddress, formatCidr, parseAddress } from './address.js';
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
import { EMPTY_CONFIG, type PoolConfig, entriesInGatewayOrder } from './config.js';
import { ChurnSafeMap } from './churn-safe-map.js';
import { EntrySpace, type Ordinal } from './entry-space.js';
import {
  AlreadyAllocatedError,
  InvalidAddressError,
  IpamError,
  NoFreeIPError,
  NoParkedIPError,
  NotAllocatedError,
  NotInConfigError,
  OwnerConflictError,
  ReservedIPError,
} from './errors.js';
import { type KeyGroup, KeyIndex } from './key-index.js';
import { matchDistinct } from './matching.js';
import { NodeSubnetIndex } from './node-subnet.js';
import {
  NOT_SERVED,
  type Placed,
  type Served,
  distinctFree,
  locate,
  lowestFree,
  servedBy,
} from './space-search.js';
import { type ReleasePolicy, isReleasePolicy } from './policy.js';
import { type RangeGroup, formatRange } from './range.js';

class Held implements Allocation {
  constructor(
    readonly ip: string,
    readonly family: Family,
    readonly key: string,
    readonly policy: ReleasePolicy,
    readonly nodeName: string,
    readonly podUid: string,
    readonly updateTime: number,
    readonly reserved: boolean,
    // where it lives; undefined for an orphan. Internal, and rewritten by reconfigure.
    public space: EntrySpace | undefined,
    public ordinal: Ordinal,
    // the key index's slot, set when indexed
    public group: KeyGroup | undefined = undefined,
  ) {}
}

export class Allocator {
  private config: PoolConfig = EMPTY_CONFIG;
  private spaces: EntrySpace[] = [];
  private served = new Map<string, Served>();
  private nodeSubnetIndex = new NodeSubnetIndex(EMPTY_CONFIG);
  private readonly byIp = new ChurnSafeMap<string, Held>();
  private readonly keyIndex = new KeyIndex<Held>();
  private orphanCount = 0;
  private readonly clock: () => number;

  constructor(config: PoolConfig = EMPTY_CONFIG, options: AllocatorOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.reconfigure(config);
  }

  // ---- configuration

  get configuration(): PoolConfig {
    return this.config;
  }

  /**
   * Applies a new configuration. Allocations move with their addresses; those that fall outside it
   * are kept as orphans and reported (galaxy deletes them, docs/galaxy.md#reconfiguring-deletes-objects-in-use).
   */
  reconfigure(config: PoolConfig): ReconfigureReport {
    const spaces = entriesInGatewayOrder(config).map((entry, rank) => new EntrySpace(entry, rank));
    const served = servedBy(spaces);
    const orphaned: Allocation[] = [];
    let orphanCount = 0;
    for (const held of this.byIp.values()) {
      const value = held.space ? held.space.valueOf(held.ordinal) : parseAddress(held.ip).value;
      const home = locate(spaces, held.family, value);
      held.space = home?.space;
      held.ordinal = home?.ordinal ?? -1;
      if (home) {
        home.space.take(home.ordinal);
        if (held.reserved) home.space.reserved++;
      } else {
        orphanCount++;
        orphaned.push(held);
      }
    }
    this.config = config;
    this.spaces = spaces;
    this.served = served;
    this.nodeSubnetIndex = new NodeSubnetIndex(config);
    this.orphanCount = orphanCount;
    return { orphaned };
  }

  /** The node subnet of a node with these InternalIPs, in the node's order (throws NodeSubnetError). */
  nodeSubnetOf(internalIPs: readonly string[]): string {
    return this.nodeSubnetIndex.of(internalIPs);
  }

  /** The entries (as configured) that give addresses to pods on nodes of this node subnet, in gateway order. */
  entriesServing(nodeSubnet: string): number[] {
    return (this.served.get(nodeSubnet) ?? NOT_SERVED).spaces.map((s) => s.entry.index);
  }

  // ---- decisions

  /**
   * New addresses for a key on a node of `nodeSubnet`, all or nothing. Without groups: the lowest
   * free address of the first entry (in gateway order) of each family. With groups: one distinct
   * address per group, preferring lower addresses.
   */
  allocate(request: AllocateRequest): Allocation[] {
    const { key, nodeSubnet, attrs } = request;
    const served = this.served.get(nodeSubnet) ?? NOT_SERVED;
    const picks: Placed[] = [];
    if (!request.groups || request.groups.length === 0) {
      const families = request.families ?? served.families;
      if (families.length === 0) throw new NoFreeIPError(key, nodeSubnet, 'no configured entry serves it');
      for (const family of families) {
        const pick = lowestFree(served.spaces, family);
        if (!pick) throw new NoFreeIPError(key, nodeSubnet, `no free IPv${family} address`);
        picks.push(pick);
      }
    } else {
      const groups = request.groups;
      distinctFree(groups, served.spaces).forEach((pick, i) => {
        if (!pick) {
          const ranges = groups[i]!.map(formatRange).join(',');
          throw new NoFreeIPError(
            key,
            nodeSubnet,
            `no free address in request_ip_range group ${i} [${ranges}]`,
          );
        }
        picks.push(pick);
      });
    }
    const now = this.clock();
    const { policy, nodeName, podUid } = attrs;
    const allocations: Allocation[] = [];
    for (const { space, ordinal } of picks) {
      const ip = space.ipOf(ordinal);
      allocations.push(
        this.insert(new Held(ip, space.family, key, policy, nodeName, podUid, now, false, space, ordinal)),
      );
    }
    return allocations;
  }

  /** A given address for a key; `reserved` marks it set aside by an operator. */
  allocateIP(ip: string, key: string, attrs: Attrs, options: { reserved?: boolean } = {}): Allocation {
    const { address, family, space, ordinal } = this.place(ip);
    if (!space) throw new NotInConfigError(address);
    const holder = this.byIp.get(address);
    if (holder) throw new AlreadyAllocatedError(address, holder.key);
    const held = new Held(
      address,
      family,
      key,
      attrs.policy,
      attrs.nodeName,
      attrs.podUid,
      this.clock(),
      options.reserved ?? false,
      space,
      ordinal,
    );
    return this.insert(held);
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
      if (
        !best ||
        held.updateTime > best.updateTime ||
        (held.updateTime === best.updateTime && lower(held, best))
      ) {
        best = held;
      }
    }
    return best;
  }

  /**
   * What rekey (or update, with the same key) would make of an address, changing nothing; throws
   * as they would. A store writes this first and loads it once the write has succeeded.
   */
  planChange(ip: string, expected: Owner, key: string, attrs: Attrs): Allocation {
    return this.successor(this.owned(ip, expected), key, attrs);
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
    const held = this.byIp.get(this.place(ip).address);
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
    return this.byIp.get(ip) ?? this.byIp.get(this.place(ip).address);
  }

  /** The configured network of an address, or undefined when no entry has it. */
  networkOf(ip: string): Network | undefined {
    const space = (this.byIp.get(ip) ?? this.place(ip)).space;
    if (!space) return undefined;
    const { index, family, subnet, gateway, vlan } = space.entry;
    return { entry: index, family, prefix: subnet.prefix, gateway: formatAddress(family, gateway), vlan };
  }

  /** The node subnets whose nodes may use an address ([] outside the configuration). */
  nodeSubnetsServing(ip: string): readonly string[] {
    const space = (this.byIp.get(ip) ?? this.place(ip)).space;
    return space ? space.entry.nodeSubnets : [];
  }

  /** The address families entries give to pods on nodes of this node subnet (ascending). */
  familiesServing(nodeSubnet: string): readonly Family[] {
    return (this.served.get(nodeSubnet) ?? NOT_SERVED).families;
  }

  /**
   * How many more pods this node subnet can serve without request_ip_range: the smallest, over the
   * families it serves, of the free addresses of that family (0n when it serves none).
   */
  freeFor(nodeSubnet: string): bigint {
    const served = this.served.get(nodeSubnet) ?? NOT_SERVED;
    let least: bigint | undefined;
    for (const family of served.families) {
      let free = 0n;
      for (const space of served.spaces) if (space.family === family) free += space.free;
      if (least === undefined || free < least) least = free;
    }
    return least ?? 0n;
  }

  /** Whether an address is in the configuration (whatever its state). */
  isConfigured(ip: string): boolean {
    return this.place(ip).space !== undefined;
  }

  byKey(key: string): Allocation[] {
    return this.keyIndex.byKey(key).slice();
  }

  /** Every allocation whose key starts with `prefix`; "" gives all. */
  byPrefix(prefix: string): Allocation[] {
    return this.keyIndex.byPrefix(prefix);
  }

  /** How many addresses keys starting with `prefix` hold. For a group name, O(groups matched). */
  countByPrefix(prefix: string): number {
    return this.keyIndex.countByPrefix(prefix);
  }

  /** How many keys starting with `prefix` hold addresses. For a group name, O(groups matched). */
  countKeysByPrefix(prefix: string): number {
    return this.keyIndex.countKeysByPrefix(prefix);
  }

  /** Allocations whose key contains `keyword` (case-sensitive), as galaxy's fuzzy search. */
  byKeyword(keyword: string): Allocation[] {
    const out: Allocation[] = [];
    for (const key of this.keyIndex.keys()) if (key.includes(keyword)) out.push(...this.keyIndex.byKey(key));
    return out;
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
   * possible. Without groups, every address the key holds.
   */
  matchHeld(key: string, groups: readonly RangeGroup[]): (Allocation | undefined)[] {
    const held = [...this.keyIndex.byKey(key)];
    const candidates = groups.map((group) =>
      held.filter((h) => {
        const space = h.space;
        if (!space) return false;
        const value = space.valueOf(h.ordinal);
        return group.some((r) => r.family === space.family && value >= r.first && value <= r.last);
      }),
    );
    return matchDistinct(candidates, (h) => h.ip);
  }

  /**
   * The node subnets that can still serve a request (docs/galaxy.md#how-galaxy-picks-addresses NodeSubnetsByIPRanges, but with
   * distinct addresses for overlapping groups): without groups, those with a free address in each
   * wanted family; with groups, those where every group can get an address of its own.
   */
  nodeSubnetsFor(groups: readonly RangeGroup[] = [], families?: readonly Family[]): Set<string> {
    const out = new Set<string>();
    for (const [subnet, served] of this.served) {
      if (groups.length === 0) {
        const wanted = families ?? served.families;
        if (
          wanted.length > 0 &&
          wanted.every((f) => served.spaces.some((s) => s.family === f && s.free > 0n))
        ) {
          out.add(subnet);
        }
      } else if (distinctFree(groups, served.spaces).every((m) => m !== undefined)) {
        out.add(subnet);
      }
    }
    return out;
  }

  /** Per configured entry, in configuration order. The one source of these numbers. */
  stats(): EntryStats[] {
    return [...this.spaces]
      .sort((a, b) => a.entry.index - b.entry.index)
      .map((space) => ({
        entry: space.entry.index,
        family: space.family,
        subnet: formatCidr(space.entry.subnet),
        firstIP: space.entry.ranges[0] ? formatAddress(space.family, space.entry.ranges[0].first) : '',
        total: space.total,
        allocated: space.allocated,
        reserved: space.reserved,
        excluded: space.excluded.length,
        free: space.free,
      }));
  }

  /**
   * Allocations of addresses that are never handed out (a network, broadcast or gateway address
   * that galaxy gave a pod, or an adopted one): kept for their keys, and worth a warning.
   */
  excludedInUse(): ExcludedInUse[] {
    const out: ExcludedInUse[] = [];
    for (const space of this.spaces) {
      space.excluded.forEach((ordinal, i) => {
        const allocation = this.byIp.get(space.ipOf(ordinal));
        if (allocation) out.push({ allocation, entry: space.entry.index, why: space.excludedWhy[i]! });
      });
    }
    return out;
  }

  get orphanedCount(): number {
    return this.orphanCount;
  }

  // ---- internals

  /** The canonical text of an address, its family, and where it lives in the configuration. */
  private place(ip: string): {
    address: string;
    family: Family;
    space: EntrySpace | undefined;
    ordinal: Ordinal;
  } {
    const { family, value } = parseAddress(ip);
    const home = locate(this.spaces, family, value);
    const address = home ? home.space.ipOf(home.ordinal) : formatAddress(family, value);
    return { address, family, space: home?.space, ordinal: home?.ordinal ?? -1 };
  }

  private owned(ip: string, expected: Owner): Held {
    const held = this.byIp.get(ip) ?? this.byIp.get(this.place(ip).address);
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
    return this.insert(this.successor(held, key, attrs));
  }

  /** The same address, reservation and place, with a new key and attributes, changed now. */
  private successor(held: Held, key: string, attrs: Attrs): Held {
    const { policy, nodeName, podUid } = attrs;
    return new Held(
      held.ip,
      held.family,
      key,
      policy,
      nodeName,
      podUid,
      this.clock(),
      held.reserved,
      held.space,
      held.ordinal,
    );
  }

  private put(record: AllocationRecord, replace: boolean): Held {
    if (!isReleasePolicy(record.policy)) {
      throw new InvalidAddressError(String(record.policy), `invalid release policy for ${record.ip}`);
    }
    const { address, family, space, ordinal } = this.place(record.ip);
    const previous = this.byIp.get(address);
    if (previous) {
      if (!replace) throw new AlreadyAllocatedError(address, previous.key);
      this.remove(previous);
    }
    const { key, policy, nodeName, podUid, updateTime, reserved } = record;
    return this.insert(
      new Held(address, family, key, policy, nodeName, podUid, updateTime, reserved, space, ordinal),
    );
  }

  // callers remove whatever held the address before, so it is never live in byIp here
  private insert(held: Held): Held {
    this.byIp.add(held.ip, held);
    const space = held.space;
    if (space) {
      space.take(held.ordinal);
      if (held.reserved) space.reserved++;
    } else {
      this.orphanCount++;
    }
    this.keyIndex.add(held);
    return held;
  }

  private remove(held: Held): void {
    this.byIp.delete(held.ip);
    const space = held.space;
    if (space) {
      space.give(held.ordinal);
      if (held.reserved) space.reserved--;
    } else {
      this.orphanCount--;
    }
    this.keyIndex.remove(held);
  }
}

function lower(a: Held, b: Held): boolean {
  if (a.space!.rank !== b.space!.rank) return a.space!.rank < b.space!.rank;
  return a.ordinal < b.ordinal;
}
