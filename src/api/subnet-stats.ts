// GET /v1/subnets: per configured entry, the allocator's own statistics (the one source of these
// numbers, shared with the metrics) plus the orphans: allocations outside every configured range,
// kept and never handed out. An orphan counts for the first entry (in configuration order) whose
// pod subnet holds it, so an address taken out of a range still shows beside its old entry.
// Totals and free counts are decimal strings: an IPv6 entry can hold more addresses than a JSON
// number keeps exactly (2^53), and a client should not have to guess which ones are exact.
import { type Allocator, type Family, cidrContains, parseAddress, parseCidr } from '../ipam/index.js';
import { compareOrders, ipOrder } from './ip-order.js';

export interface EntryStatsJson {
  entry: number;
  family: Family;
  subnet: string;
  firstIP: string;
  nodeSubnets: string[];
  total: string;
  allocated: number;
  reserved: number;
  excluded: number;
  free: string;
  orphaned: number;
}

export interface SubnetsJson {
  entries: EntryStatsJson[];
  orphaned: number;
  orphans: string[];
}

export function subnetStats(allocator: Allocator): SubnetsJson {
  const stats = allocator.stats();
  const nodeSubnets = new Map(allocator.configuration.entries.map((e) => [e.index, e.nodeSubnets]));
  const cidrs = stats.map((s) => parseCidr(s.subnet));
  const orphanedBy = new Array<number>(stats.length).fill(0);
  const orphans = allocator.orphaned().map((a) => a.ip);
  for (const ip of orphans) {
    const address = parseAddress(ip);
    const home = cidrs.findIndex((cidr) => cidrContains(cidr, address));
    if (home >= 0) orphanedBy[home]!++;
  }
  return {
    entries: stats.map((s, i) => ({
      entry: s.entry,
      family: s.family,
      subnet: s.subnet,
      firstIP: s.firstIP,
      nodeSubnets: [...(nodeSubnets.get(s.entry) ?? [])],
      total: s.total.toString(),
      allocated: s.allocated,
      reserved: s.reserved,
      excluded: s.excluded,
      free: s.free.toString(),
      orphaned: orphanedBy[i]!,
    })),
    orphaned: orphans.length,
    orphans: orphans
      .map((ip) => ({ ip, order: ipOrder(ip) }))
      .sort((a, b) => compareOrders(a.order, b.order))
      .map((o) => o.ip),
  };
}
