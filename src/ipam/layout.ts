// One configuration laid out for allocation: an EntrySpace per entry, in gateway order, what serves
// each node subnet, and the node-subnet index. It answers every question that depends only on the
// configuration and on which addresses are taken (where an address lives, what is free where, the
// per-entry numbers), so the allocator can keep to who holds what and to its decisions.
//
// A layout belongs to one configuration: reconfiguring builds a new one, and the allocator moves
// its allocations into it. The spaces are its mutable part (their taken sets and reserved counts);
// the allocator takes and gives their ordinals as allocations come and go.
import { type Family, formatAddress, formatCidr, parseAddress } from './address.js';
import type { AllocateRequest, Allocation, EntryStats, ExcludedInUse, Network } from './allocation.js';
import { type PoolConfig, entriesInGatewayOrder } from './config.js';
import { EntrySpace, type Ordinal } from './entry-space.js';
import { NoFreeIPError } from './errors.js';
import { NodeSubnetIndex } from './node-subnet.js';
import { formatRange, type RangeGroup } from './range.js';
import {
  NOT_SERVED,
  type Placed,
  type Served,
  distinctFree,
  locate,
  lowestFree,
  servedBy,
} from './space-search.js';

/** An address as the layout sees it: its canonical text, family, and space (none outside the configuration). */
export interface Place {
  readonly address: string;
  readonly family: Family;
  readonly space: EntrySpace | undefined;
  /** -1 outside the configuration. */
  readonly ordinal: Ordinal;
}

/** An allocation as settle sees it: its address, and the place settle rewrites. */
export interface Resident {
  readonly ip: string;
  readonly family: Family;
  readonly reserved: boolean;
  space: EntrySpace | undefined;
  ordinal: Ordinal;
}

export class Layout {
  private readonly spaces: readonly EntrySpace[];
  private readonly served: ReadonlyMap<string, Served>;
  private readonly nodeSubnetIndex: NodeSubnetIndex;

  constructor(readonly config: PoolConfig) {
    this.spaces = entriesInGatewayOrder(config).map((entry, rank) => new EntrySpace(entry, rank));
    this.served = servedBy(this.spaces);
    this.nodeSubnetIndex = new NodeSubnetIndex(config);
  }

  /** Where an address (any textual form) lives; throws InvalidAddressError for one that is not an address. */
  place(ip: string): Place {
    const { family, value } = parseAddress(ip);
    const home = locate(this.spaces, family, value);
    const address = home ? home.space.ipOf(home.ordinal) : formatAddress(family, value);
    return { address, family, space: home?.space, ordinal: home?.ordinal ?? -1 };
  }

  /**
   * Moves an allocation (placed in another layout, or an orphan) into this one: rewrites its place
   * and takes it there, or leaves it without one when no entry has its address. Returns whether it
   * has a place here.
   */
  settle(resident: Resident): boolean {
    const { space, ordinal } = resident;
    const value = space ? space.valueOf(ordinal) : parseAddress(resident.ip).value;
    const home = locate(this.spaces, resident.family, value);
    resident.space = home?.space;
    resident.ordinal = home?.ordinal ?? -1;
    if (home) home.space.take(home.ordinal, resident.reserved);
    return home !== undefined;
  }

  nodeSubnetOf(internalIPs: readonly string[]): string {
    return this.nodeSubnetIndex.of(internalIPs);
  }

  entriesServing(nodeSubnet: string): number[] {
    return this.servedFor(nodeSubnet).spaces.map((s) => s.entry.index);
  }

  familiesServing(nodeSubnet: string): readonly Family[] {
    return this.servedFor(nodeSubnet).families;
  }

  /**
   * The free addresses allocate gives a request, all or none (throws NoFreeIPError naming the key,
   * the node subnet and what is missing). Without groups: the lowest free address of the first
   * entry (in gateway order) of each family. With groups: one distinct address per group, lower first.
   */
  pick(request: AllocateRequest): Placed[] {
    const { key, nodeSubnet, groups } = request;
    const served = this.servedFor(nodeSubnet);
    const picks: Placed[] = [];
    if (!groups || groups.length === 0) {
      const families = request.families ?? served.families;
      if (families.length === 0) throw new NoFreeIPError(key, nodeSubnet, 'no configured entry serves it');
      for (const family of families) {
        const pick = lowestFree(served.spaces, family);
        if (!pick) throw new NoFreeIPError(key, nodeSubnet, `no free IPv${family} address`);
        picks.push(pick);
      }
    } else {
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
    return picks;
  }

  /** The smallest, over the families serving a node subnet, of its free addresses of that family. */
  freeFor(nodeSubnet: string): bigint {
    const served = this.servedFor(nodeSubnet);
    let least: bigint | undefined;
    for (const family of served.families) {
      let free = 0n;
      for (const space of served.spaces) if (space.family === family) free += space.free;
      if (least === undefined || free < least) least = free;
    }
    return least ?? 0n;
  }

  /**
   * The node subnets for which pick would succeed now: without groups, those with a free address
   * in each wanted family; with groups, those where every group can get an address of its own
   * (galaxy's may count one address for two overlapping groups).
   */
  nodeSubnetsFor(groups: readonly RangeGroup[], families: readonly Family[] | undefined): Set<string> {
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

  /** Per configured entry, in configuration order, as its space counts them. */
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

  /** The allocations `holderOf` reports for the addresses never handed out, in gateway order. */
  excludedInUse(holderOf: (ip: string) => Allocation | undefined): ExcludedInUse[] {
    const out: ExcludedInUse[] = [];
    for (const space of this.spaces) {
      space.excluded.forEach((ordinal, i) => {
        const allocation = holderOf(space.ipOf(ordinal));
        if (allocation) out.push({ allocation, entry: space.entry.index, why: space.excludedWhy[i]! });
      });
    }
    return out;
  }

  private servedFor(nodeSubnet: string): Served {
    return this.served.get(nodeSubnet) ?? NOT_SERVED;
  }
}

/** What a pod needs to configure an address of this space. */
export function networkOf(space: EntrySpace): Network {
  const { index, family, subnet, gateway, vlan } = space.entry;
  return { entry: index, family, prefix: subnet.prefix, gateway: formatAddress(family, gateway), vlan };
}
