// An allocation as the allocator holds it: the Allocation callers see, plus where it lives in the
// current Layout and its slot in the key index. There is one per allocated address (the bench keeps
// the allocator's own memory under 300 bytes an allocation), so what can be derived is a method,
// never a field.
//
// The owner's fields never change: a new key or new attributes make a successor, so an Allocation
// handed out stays what it was. Only the place changes, when reconfigure moves it to a new Layout.
import type { Family } from './address.js';
import type { Allocation, Attrs } from './allocation.js';
import type { EntrySpace, Ordinal } from './entry-space.js';
import type { KeyGroup } from './key-index.js';
import type { Place } from './layout.js';
import type { ReleasePolicy } from './policy.js';
import type { RangeGroup } from './range.js';

export class Held implements Allocation {
  constructor(
    readonly ip: string,
    readonly family: Family,
    readonly key: string,
    readonly policy: ReleasePolicy,
    readonly nodeName: string,
    readonly podUid: string,
    readonly updateTime: number,
    readonly reserved: boolean,
    // where it lives; undefined (and ordinal -1) for an orphan
    public space: EntrySpace | undefined,
    public ordinal: Ordinal,
    // the key index's slot, set when indexed
    public group: KeyGroup | undefined = undefined,
  ) {}

  /** A new allocation of the address at `place`. */
  static at(place: Place, key: string, attrs: Attrs, updateTime: number, reserved: boolean): Held {
    const { address, family, space, ordinal } = place;
    const { policy, nodeName, podUid } = attrs;
    return new Held(address, family, key, policy, nodeName, podUid, updateTime, reserved, space, ordinal);
  }

  /** The same address, reservation and place, with a new key and attributes, changed at `now`. */
  successor(key: string, { policy, nodeName, podUid }: Attrs, now: number): Held {
    const { ip, family, reserved, space, ordinal } = this;
    return new Held(ip, family, key, policy, nodeName, podUid, now, reserved, space, ordinal);
  }

  /** Whether the address lies in one of the group's ranges (an orphan's never does). */
  inGroup(group: RangeGroup): boolean {
    const space = this.space;
    if (!space) return false;
    const value = space.valueOf(this.ordinal);
    return group.some((r) => r.family === space.family && value >= r.first && value <= r.last);
  }

  /** Whether the address comes before another's in gateway order; both must have a place. */
  before(other: Held): boolean {
    if (this.space!.rank !== other.space!.rank) return this.space!.rank < other.space!.rank;
    return this.ordinal < other.ordinal;
  }
}
