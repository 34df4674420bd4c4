// Distinct choices for groups that may overlap: a maximum bipartite matching (Kuhn's augmenting
// paths). galaxy's greedy walk either fails or hands one address to two groups (docs/galaxy.md#overlapping-range-groups).

/**
 * For each group, one of its candidates, no candidate used twice, as many groups served as possible.
 * Candidates are tried in the order given, so earlier (lower) candidates win where there is a choice.
 */
export function matchDistinct<C>(
  candidates: readonly (readonly C[])[],
  id: (c: C) => string,
): (C | undefined)[] {
  const chosen: (C | undefined)[] = candidates.map(() => undefined);
  const holder = new Map<string, number>();
  const augment = (group: number, seen: Set<string>): boolean => {
    const options = candidates[group]!;
    // a free candidate first, so that groups keep the lowest address where nobody competes for it
    for (const c of options) {
      const cid = id(c);
      if (!seen.has(cid) && !holder.has(cid)) {
        seen.add(cid);
        holder.set(cid, group);
        chosen[group] = c;
        return true;
      }
    }
    for (const c of options) {
      const cid = id(c);
      if (seen.has(cid)) continue;
      seen.add(cid);
      if (augment(holder.get(cid)!, seen)) {
        holder.set(cid, group);
        chosen[group] = c;
        return true;
      }
    }
    return false;
  };
  candidates.forEach((_, group) => augment(group, new Set()));
  return chosen;
}
