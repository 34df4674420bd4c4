import { DenseOrdinalSet, SparseOrdinalSet } from '../../../src/ipam/ordinal-set.js';

/** A tiny deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function firstFreeModel(members: Set<number>, size: number, from: number): number {
  for (let i = from; i < size; i++) if (!members.has(i)) return i;
  return -1;
}

describe.each([1, 31, 32, 33, 1000, 1024, 65536, 70001])('dense set of size %i', (size) => {
  test('agrees with a plain Set under random adds, deletes and searches', () => {
    const set = new DenseOrdinalSet(size);
    const model = new Set<number>();
    const rnd = random(size);
    for (let step = 0; step < 4000; step++) {
      const o = Math.floor(rnd() * size);
      if (rnd() < 0.6) {
        set.add(o);
        model.add(o);
      } else {
        set.delete(o);
        model.delete(o);
      }
      const from = Math.floor(rnd() * size);
      expect(set.firstFree(from)).toBe(firstFreeModel(model, size, from));
      expect(set.count).toBe(model.size);
    }
  });

  test('fills completely, then reports no free position', () => {
    const set = new DenseOrdinalSet(size);
    for (let i = 0; i < size; i++) {
      expect(set.firstFree()).toBe(i);
      set.add(i);
    }
    expect(set.firstFree()).toBe(-1);
    set.delete(size - 1);
    expect(set.firstFree()).toBe(size - 1);
  });
});

test('a sparse set agrees with a plain Set, and finds gaps past long runs', () => {
  const size = 2n ** 64n;
  const set = new SparseOrdinalSet(size);
  const model = new Set<number>();
  const rnd = random(7);
  for (let step = 0; step < 5000; step++) {
    const o = Math.floor(rnd() * 300);
    if (rnd() < 0.7) {
      set.add(BigInt(o));
      model.add(o);
    } else {
      set.delete(BigInt(o));
      model.delete(o);
    }
    const from = Math.floor(rnd() * 300);
    expect(set.firstFree(BigInt(from))).toBe(BigInt(firstFreeModel(model, 1000, from)));
    expect(set.has(BigInt(from))).toBe(model.has(from));
  }
});

test('a sparse set at the top of its space reports no free position', () => {
  const set = new SparseOrdinalSet(3n);
  set.add(1n);
  set.add(2n);
  expect(set.firstFree(1n)).toBe(-1n);
  expect(set.firstFree(0n)).toBe(0n);
});
