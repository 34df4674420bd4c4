// What the allocator takes and gives: plain data, no behaviour. A store persists AllocationRecords;
// everything else sees Allocations.
import type { Family } from './address.js';
import type { ExclusionReason } from './entry-space.js';
import type { ReleasePolicy } from './policy.js';
import type { RangeGroup } from './range.js';

/** Who an address is for, besides its key. */
export interface Attrs {
  readonly policy: ReleasePolicy;
  /** "" when not bound to a node (parked, or not yet bound). */
  readonly nodeName: string;
  readonly podUid: string;
}

export interface Allocation extends Attrs {
  /** Canonical text: dotted quad, or RFC 5952 IPv6. */
  readonly ip: string;
  readonly family: Family;
  readonly key: string;
  /** Milliseconds since the epoch of the last change. */
  readonly updateTime: number;
  /** Set aside by an operator (a FloatingIP object labelled `reserved`); never handed out or released. */
  readonly reserved: boolean;
}

/**
 * What a store persists and gives back. The IP may be in any valid textual form; its family is
 * what the allocator reads from it when loading (a FloatingIP object has only its name).
 */
export type AllocationRecord = Omit<Allocation, 'family'>;

/** The owner a caller decided on; an operation refuses if the address has changed hands since. */
export interface Owner {
  readonly key: string;
  /** When given, the stored pod UID must match too. */
  readonly podUid?: string;
}

export interface AllocateRequest {
  readonly key: string;
  readonly nodeSubnet: string;
  readonly attrs: Attrs;
  /** `request_ip_range`: one distinct address per group. Without groups, one per address family. */
  readonly groups?: readonly RangeGroup[];
  /** Without groups: the families wanted; default every family serving the node subnet (dual stack). */
  readonly families?: readonly Family[];
}

export interface EntryStats {
  /** Position of the entry in the configuration. */
  readonly entry: number;
  readonly family: Family;
  readonly subnet: string;
  readonly firstIP: string;
  readonly total: bigint;
  /** Every address held by a key, parked and reserved ones included. */
  readonly allocated: number;
  readonly reserved: number;
  /** Addresses of the ranges never handed out: the network, broadcast and gateway addresses. */
  readonly excluded: number;
  readonly free: bigint;
}

/** The network an address belongs to: what a pod needs to configure it. */
export interface Network {
  /** Position of the entry in the configuration. */
  readonly entry: number;
  readonly family: Family;
  readonly prefix: number;
  readonly gateway: string;
  readonly vlan: number;
}

/** An allocation of an address no pod should get, and why it should not. */
export interface ExcludedInUse {
  readonly allocation: Allocation;
  /** Position of the entry in the configuration. */
  readonly entry: number;
  readonly why: ExclusionReason;
}

export interface RestoreReport {
  readonly loaded: number;
  /** Kept, but outside every configured range: nothing can be allocated over them. */
  readonly orphaned: readonly Allocation[];
  readonly rejected: readonly { readonly record: AllocationRecord; readonly reason: string }[];
}

export interface ReconfigureReport {
  /** Every allocation now outside the configuration: kept, and reported, never dropped. */
  readonly orphaned: readonly Allocation[];
}

export interface AllocatorOptions {
  /** Milliseconds since the epoch; injected so that tests control time. */
  readonly clock?: () => number;
}
