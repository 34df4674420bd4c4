// The allocator's index of records by key, and of keys by group: the key text up to its last `_`
// (an app, a pool, a parking key). With the group names kept sorted, a prefix query looks only at
// the groups it matches, never at unrelated allocations, and counts come from per-group totals.
//
// One pod coming and going (a key added and removed again and again) must cost no tree update
// and no Map growth: a group that empties is kept, and pruned only once empty groups are many,
// and the maps that churn are ChurnSafeMaps (see churn-safe-map.ts).
import BTreeModule from 'sorted-btree';
import { ChurnSafeMap } from './churn-safe-map.js';

// sorted-btree is CommonJS: under Node's ESM loader its class is the module's `default` property
const BTree = BTreeModule.default;

/** The keys sharing a group name, and how many records they hold. */
export class KeyGroup {
  readonly keys = new ChurnSafeMap<string, true>();
  records = 0;
}

/** What the index holds. `group` is the index's own slot: add sets it, so remove needs no lookup. */
export interface Keyed {
  readonly key: string;
  group: KeyGroup | undefined;
}

const NONE: readonly never[] = [];

const groupOf = (key: string): string => key.slice(0, key.lastIndexOf('_') + 1);

export class KeyIndex<T extends Keyed> {
  // one record per key is the common case: stored bare, an array only for a second one
  private readonly records = new ChurnSafeMap<string, T | T[]>();
  private readonly groups = new Map<string, KeyGroup>();
  private readonly groupNames = new BTree<string, undefined>();
  private emptyGroups = 0;
  private total = 0;

  /** How many records. */
  get size(): number {
    return this.total;
  }

  /** How many keys hold records. */
  get keyCount(): number {
    return this.records.size;
  }

  /** The key's records, oldest first; the caller must not change the array. */
  byKey(key: string): readonly T[] {
    const entry = this.records.get(key);
    return entry === undefined ? NONE : Array.isArray(entry) ? entry : [entry];
  }

  /** Every record whose key contains `keyword` (case-sensitive). */
  byKeyword(keyword: string): T[] {
    const out: T[] = [];
    for (const key of this.records.keys()) if (key.includes(keyword)) out.push(...this.byKey(key));
    return out;
  }

  /** Indexes a record under its key; the caller ensures it is not indexed already. */
  add(record: T): void {
    this.total++;
    const current = this.records.get(record.key);
    if (current === undefined) {
      this.records.add(record.key, record);
      const name = groupOf(record.key);
      let group = this.groups.get(name);
      if (!group) {
        this.groups.set(name, (group = new KeyGroup()));
        this.groupNames.set(name, undefined);
      } else if (group.records === 0) {
        this.emptyGroups--;
      }
      group.keys.add(record.key, true);
      record.group = group;
    } else if (Array.isArray(current)) {
      current.push(record);
      record.group = current[0]!.group;
    } else {
      this.records.set(record.key, [current, record]);
      record.group = current.group;
    }
    record.group!.records++;
  }

  /** Forgets a record added before. */
  remove(record: T): void {
    this.total--;
    const group = record.group!;
    group.records--;
    const current = this.records.get(record.key);
    if (current === record) {
      this.records.delete(record.key);
      group.keys.delete(record.key);
      if (group.records === 0 && ++this.emptyGroups > 64 && this.emptyGroups > this.groups.size / 2) {
        this.pruneEmptyGroups();
      }
    } else if (Array.isArray(current)) {
      current.splice(current.indexOf(record), 1);
      if (current.length === 1) this.records.set(record.key, current[0]!);
    }
  }

  /** Every record whose key starts with `prefix`; "" gives all. */
  byPrefix(prefix: string): T[] {
    const out: T[] = [];
    const visitKey = (key: string): void => {
      for (const record of this.byKey(key)) out.push(record);
    };
    this.walk(prefix, visitKey, (group) => {
      for (const key of group.keys.keys()) visitKey(key);
    });
    return out;
  }

  /** How many records keys starting with `prefix` hold: O(groups matched), or of one group's keys. */
  countByPrefix(prefix: string): number {
    if (prefix === '') return this.total;
    let n = 0;
    this.walk(
      prefix,
      (key) => (n += this.byKey(key).length),
      (group) => (n += group.records),
    );
    return n;
  }

  /**
   * How many keys starting with `prefix` hold records: O(groups matched), or of one group's keys.
   * `inGroup`, if given, keeps only the keys of the groups (key text up to its last `_`) it accepts.
   */
  countKeysByPrefix(prefix: string, inGroup?: (groupName: string) => boolean): number {
    if (prefix === '' && !inGroup) return this.records.size;
    let n = 0;
    this.walk(
      prefix,
      (key) => (!inGroup || inGroup(groupOf(key)) ? n++ : undefined),
      (group, name) => (!inGroup || inGroup(name) ? (n += group.keys.size) : undefined),
    );
    return n;
  }

  /**
   * The one prefix walk. A prefix that ends inside a key's last part (part of a pod name) matches
   * some keys of one group: those are visited one by one. Every group whose name extends the prefix
   * matches whole, and is visited as a group so that counting need not look at its keys.
   */
  private walk(
    prefix: string,
    visitKey: (key: string) => void,
    visitGroup: (group: KeyGroup, name: string) => void,
  ): void {
    const own = groupOf(prefix);
    if (own !== prefix) {
      const group = this.groups.get(own);
      if (group) for (const key of group.keys.keys()) if (key.startsWith(prefix)) visitKey(key);
    }
    // the sorted names starting with the prefix are the run from the prefix itself on
    for (const name of this.groupNames.keys(prefix)) {
      if (!name.startsWith(prefix)) break;
      visitGroup(this.groups.get(name)!, name);
    }
  }

  private pruneEmptyGroups(): void {
    for (const [name, group] of this.groups) {
      if (group.records > 0) continue;
      this.groups.delete(name);
      this.groupNames.delete(name);
    }
    this.emptyGroups = 0;
  }
}
