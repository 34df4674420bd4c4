// Which positions ("ordinals") of an entry's address space are taken. Finding the lowest free
// position never scans the space: the dense set walks a bitmap hierarchy, the sparse set
// binary-searches its sorted members.

/**
 * A bitmap with summary levels: bit i of level k+1 is set when word i of level k is full. Finding
 * the first free bit at or after a position touches one word per level. Bits past the end are set,
 * so they are never found free. For address spaces up to DENSE_LIMIT.
 */
export class DenseOrdinalSet {
  private readonly levels: Uint32Array[] = [];
  private members = 0;

  constructor(readonly size: number) {
    let bits = size;
    do {
      const words = Math.max(1, Math.ceil(bits / 32));
      const level = new Uint32Array(words);
      // mark the padding past the last real bit as taken
      for (let b = bits; b < words * 32; b++) level[b >>> 5]! |= 1 << (b & 31);
      this.levels.push(level);
      bits = words;
    } while (bits > 1);
    // propagate the padding: words that are full because of it are full in the level above
    for (let k = 0; k + 1 < this.levels.length; k++) {
      const level = this.levels[k]!;
      for (let w = 0; w < level.length; w++) if (level[w] === 0xffffffff) this.setBit(k + 1, w);
    }
  }

  get count(): number {
    return this.members;
  }

  has(ordinal: number): boolean {
    return (this.levels[0]![ordinal >>> 5]! & (1 << (ordinal & 31))) !== 0;
  }

  add(ordinal: number): void {
    if (this.has(ordinal)) return;
    this.members++;
    let index = ordinal;
    for (let k = 0; k < this.levels.length; k++) {
      const level = this.levels[k]!;
      const w = index >>> 5;
      level[w]! |= 1 << (index & 31);
      if (level[w] !== 0xffffffff) return;
      index = w;
    }
  }

  delete(ordinal: number): void {
    if (!this.has(ordinal)) return;
    this.members--;
    let index = ordinal;
    for (let k = 0; k < this.levels.length; k++) {
      const level = this.levels[k]!;
      const w = index >>> 5;
      const wasFull = level[w] === 0xffffffff;
      level[w]! &= ~(1 << (index & 31));
      if (!wasFull) return;
      index = w;
    }
  }

  /** The lowest free ordinal >= from, or -1. */
  firstFree(from = 0): number {
    if (from >= this.size) return -1;
    return this.findZero(0, from);
  }

  private findZero(k: number, from: number): number {
    const level = this.levels[k]!;
    let w = from >>> 5;
    if (w >= level.length) return -1;
    const bits = ~level[w]! & (0xffffffff << (from & 31));
    if (bits !== 0) return (w << 5) + ctz(bits);
    if (k + 1 === this.levels.length) return -1;
    w = this.findZero(k + 1, w + 1);
    if (w < 0) return -1;
    return (w << 5) + ctz(~level[w]!);
  }

  private setBit(k: number, index: number): void {
    const level = this.levels[k]!;
    const w = index >>> 5;
    level[w]! |= 1 << (index & 31);
    if (level[w] === 0xffffffff && k + 1 < this.levels.length) this.setBit(k + 1, w);
  }
}

const ctz = (x: number): number => 31 - Math.clz32(x & -x);

/**
 * Sorted distinct members, for address spaces too large for a bitmap (an IPv6 /64 has 2^64
 * positions). Memory and time grow with the members, never with the space.
 */
export class SparseOrdinalSet {
  private readonly members: bigint[] = [];

  constructor(readonly size: bigint) {}

  get count(): number {
    return this.members.length;
  }

  has(ordinal: bigint): boolean {
    const i = this.lowerBound(ordinal);
    return this.members[i] === ordinal;
  }

  add(ordinal: bigint): void {
    const i = this.lowerBound(ordinal);
    if (this.members[i] !== ordinal) this.members.splice(i, 0, ordinal);
  }

  delete(ordinal: bigint): void {
    const i = this.lowerBound(ordinal);
    if (this.members[i] === ordinal) this.members.splice(i, 1);
  }

  /** The lowest free ordinal >= from, or -1n. */
  firstFree(from = 0n): bigint {
    const m = this.members;
    const start = this.lowerBound(from);
    if (m[start] !== from) return from < this.size ? from : -1n;
    // members[start..] is a run from `from` up to the first i where members[i] - i jumps; members[i] - i
    // never decreases, so the end of the run is found by binary search.
    const base = from - BigInt(start);
    let lo = start;
    let hi = m.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (m[mid]! - BigInt(mid) === base) lo = mid + 1;
      else hi = mid;
    }
    const free = base + BigInt(lo);
    return free < this.size ? free : -1n;
  }

  private lowerBound(ordinal: bigint): number {
    let lo = 0;
    let hi = this.members.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.members[mid]! < ordinal) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
