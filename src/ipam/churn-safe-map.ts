// V8's Map keeps a deleted entry in its bucket's chain until the next rehash, so deleting and
// re-adding the same key over and over (the lowest free address, handed out and released again
// and again; a StatefulSet pod's key) makes that chain grow with every round: measured here,
// 18 µs per set+delete at 30,000 entries instead of 0.1 µs. This map never deletes: it marks the
// entry as a hole and overwrites it on the next set, and it rebuilds itself once the holes
// outnumber the entries, so each operation stays O(1) amortised and memory at most doubles.

const HOLE: unique symbol = Symbol('hole');

export class ChurnSafeMap<K, V> {
  private map = new Map<K, V | typeof HOLE>();
  private live = 0;

  get size(): number {
    return this.live;
  }

  get(key: K): V | undefined {
    const value = this.map.get(key);
    return value === HOLE ? undefined : value;
  }

  has(key: K): boolean {
    const value = this.map.get(key);
    return value !== undefined && value !== HOLE;
  }

  set(key: K, value: V): void {
    if (!this.has(key)) this.live++;
    this.map.set(key, value);
  }

  /** set() for a key the caller knows is absent: one hash lookup instead of two. */
  add(key: K, value: V): void {
    this.live++;
    this.map.set(key, value);
  }

  delete(key: K): boolean {
    const value = this.map.get(key);
    if (value === undefined || value === HOLE) return false;
    this.map.set(key, HOLE);
    this.live--;
    const holes = this.map.size - this.live;
    if (holes > 64 && holes > this.live) this.compact();
    return true;
  }

  *keys(): IterableIterator<K> {
    for (const [key, value] of this.map) if (value !== HOLE) yield key;
  }

  *values(): IterableIterator<V> {
    for (const value of this.map.values()) if (value !== HOLE) yield value;
  }

  *entries(): IterableIterator<[K, V]> {
    for (const [key, value] of this.map) if (value !== HOLE) yield [key, value];
  }

  private compact(): void {
    const live = new Map<K, V | typeof HOLE>();
    for (const [key, value] of this.map) if (value !== HOLE) live.set(key, value);
    this.map = live;
  }
}
