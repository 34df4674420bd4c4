// The IPAM core's whole public surface. Everything outside src/ipam/ imports from here only.
// Pure: no I/O, no timers, no Kubernetes types. See the README's "Invariants" for what it guarantees.
export {
  type Address,
  type Cidr,
  type Family,
  canonicalAddress,
  cidrContains,
  formatAddress,
  formatCidr,
  parseAddress,
  parseCidr,
} from './address.js';
export type {
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
export { Allocator } from './allocator.js';
export {
  EMPTY_CONFIG,
  type PoolConfig,
  type PoolEntry,
  entriesInGatewayOrder,
  parsePoolConfig,
  serializePoolConfig,
  serializePoolEntry,
} from './config.js';
export type { ExclusionReason } from './entry-space.js';
export * from './errors.js';
export {
  type FractionNumber,
  type GoFieldPath,
  type GoHeld,
  type JsonPath,
  goFieldKey,
  goFolded,
  goIntegersWithFraction,
  goStruct,
  jsonPathText,
  numbersWithFraction,
  repeatedGoKeys,
  writtenValues,
  type WrittenValue,
} from './go-json.js';
export {
  AllocationKey,
  BARE_POD_PREFIX,
  DEPLOYMENT_PREFIX,
  type OwnerReference,
  POOL_KEY_PREFIX,
  type PodIdentity,
  STATEFULSET_PREFIX,
  appTypeName,
  appTypePrefix,
  ordinalOf,
  typePrefixOfAppType,
} from './keys.js';
export { NodeSubnetIndex } from './node-subnet.js';
export { ofMainFamily } from './pool-holdings.js';
export { ReleasePolicy, isReleasePolicy, releasePolicyName, releasePolicyOf } from './policy.js';
export { type IPRange, type RangeGroup, formatRange, parseRange, rangeSize } from './range.js';
export {
  type AppFacts,
  type AppLimit,
  type PlacementRequest,
  type Rollout,
  allowedSubnets,
  appLimit,
  appUsage,
  checkAppLimit,
  checkNewAddresses,
  heldForNode,
  homeSubnets,
  parkedFor,
  reservationRefusal,
  sharesAppAddresses,
  subnetsServingAll,
  subnetsServingAny,
  usableHeld,
} from './placement.js';
export { type ReleaseAction, type WorkloadFacts, decideRelease } from './release-decision.js';
