// A bounded window of recent changes, like etcd's history before compaction: a watch may resume from any
// revision still in the window; older ones get 410 Gone and the client must re-list.
import type { StoredObject } from './store.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: EventType;
  /** The revision this change created; equals the object's resourceVersion. */
  revision: number;
  storageKey: string;
  object: StoredObject;
  /** The object before a MODIFIED or DELETED change, so selector watches can turn it into ADDED/DELETED. */
  previous?: StoredObject;
}

export class EventHistory {
  private readonly ring: (StoreEvent | undefined)[];
  private start = 0;
  private length = 0;
  /** Every revision at or below this one has left the window. */
  private compacted: number;

  constructor(
    private readonly capacity: number,
    startRevision: number,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new Error(`history capacity must be ≥ 1, got ${capacity}`);
    this.ring = new Array<StoreEvent | undefined>(capacity);
    this.compacted = startRevision;
  }

  get compactedRevision(): number {
    return this.compacted;
  }

  append(event: StoreEvent): void {
    if (this.length === this.capacity) {
      const evicted = this.ring[this.start];
      if (evicted) this.compacted = evicted.revision;
      this.ring[this.start] = event;
      this.start = (this.start + 1) % this.capacity;
    } else {
      this.ring[(this.start + this.length) % this.capacity] = event;
      this.length++;
    }
  }

  /** Forgets everything up to `revision`, as an etcd compaction would. */
  compact(revision: number): void {
    while (this.length > 0) {
      const first = this.ring[this.start];
      if (!first || first.revision > revision) break;
      this.ring[this.start] = undefined;
      this.start = (this.start + 1) % this.capacity;
      this.length--;
    }
    this.compacted = Math.max(this.compacted, revision);
  }

  /** Events after `revision`, oldest first; undefined if some of them have left the window. */
  since(revision: number): StoreEvent[] | undefined {
    if (revision < this.compacted) return undefined;
    // Binary search for the first event newer than `revision`: revisions in the ring are increasing.
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const event = this.ring[(this.start + mid) % this.capacity];
      if (event && event.revision <= revision) lo = mid + 1;
      else hi = mid;
    }
    const out: StoreEvent[] = [];
    for (let i = lo; i < this.length; i++) {
      const event = this.ring[(this.start + i) % this.capacity];
      if (event) out.push(event);
    }
    return out;
  }
}
