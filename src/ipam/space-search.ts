// Where an address is, or goes, among entry spaces listed in gateway order (the order a node
// subnet's entries are tried in): which spaces serve each node subnet, the space an address lives
// in, the lowest free address of a family, and distinct free addresses for request_ip_range groups.
// Pure functions of the spaces; the Layout (layout.ts) keeps them.
import type { Family } from './address.js';
import type { EntrySpace, Ordinal } from './entry-space.js';
import { matchDistinct } from './matching.js';
import type { RangeGroup } from './range.js';

export interface Placed {
  readonly space: EntrySpace;
  readonly ordinal: Ordinal;
}

/** The spaces giving addresses to pods on nodes of one node subnet, in gateway order. */
export interface Served {
  readonly spaces: readonly EntrySpace[];
  /** Ascending. */
  readonly families: readonly Family[];
}

export const NOT_SERVED: Served = { spaces: [], families: [] };

interface Candidate extends Placed {
  readonly value: bigint;
  readonly id: string;
}

/** What serves each node subnet named by these spaces' entries. */
export function servedBy(spaces: readonly EntrySpace[]): Map<string, Served> {
  const served = new Map<string, { spaces: EntrySpace[]; families: Family[] }>();
  for (const space of spaces) {
    for (const subnet of space.entry.nodeSubnets) {
      let s = served.get(subnet);
      if (!s) served.set(subnet, (s = { spaces: [], families: [] }));
      s.spaces.push(space);
      if (!s.families.includes(space.family)) s.families.push(space.family);
    }
  }
  for (const s of served.values()) s.families.sort();
  return served;
}

/** The first space of that family holding the address. */
export function locate(spaces: readonly EntrySpace[], family: Family, value: bigint): Placed | undefined {
  for (const space of spaces) {
    if (space.family !== family) continue;
    const ordinal = space.ordinalOf(value);
    if (ordinal !== undefined) return { space, ordinal };
  }
  return undefined;
}

/** The lowest free address of the first space of that family that has one. */
export function lowestFree(spaces: readonly EntrySpace[], family: Family): Placed | undefined {
  for (const space of spaces) {
    if (space.family !== family) continue;
    const ordinal = space.lowestFree();
    if (ordinal !== undefined) return { space, ordinal };
  }
  return undefined;
}

/** One free address per group, none given twice, lower ones first; undefined for a group left without. */
export function distinctFree(
  groups: readonly RangeGroup[],
  spaces: readonly EntrySpace[],
): (Placed | undefined)[] {
  return matchDistinct(
    groups.map((group) => freeCandidates(group, spaces, groups.length)),
    (c) => c.id,
  );
}

/**
 * Up to `limit` free addresses of a group inside these spaces, lowest first. `limit` = the number
 * of groups is enough: a group with that many candidates can always be served whatever the others take.
 */
function freeCandidates(group: RangeGroup, spaces: readonly EntrySpace[], limit: number): Candidate[] {
  const found = new Map<string, Candidate>();
  for (const range of group) {
    for (const space of spaces) {
      if (space.family !== range.family) continue;
      for (const ordinal of space.freeBetween(range.first, range.last, limit)) {
        const id = `${space.rank}:${ordinal}`;
        found.set(id, { space, ordinal, value: space.valueOf(ordinal), id });
      }
    }
  }
  return [...found.values()]
    .sort((a, b) => a.space.family - b.space.family || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
    .slice(0, limit);
}
