import { ChurnSafeMap } from '../../../src/ipam/churn-safe-map.js';

test('behaves as a Map through heavy delete-and-re-add churn, compactions included', () => {
  const map = new ChurnSafeMap<string, number>();
  const model = new Map<string, number>();
  let s = 12345;
  const rnd = () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
  for (let step = 0; step < 20000; step++) {
    const key = `k${Math.floor(rnd() * (step < 10000 ? 500 : 20))}`;
    const r = rnd();
    if (r < 0.4) {
      map.set(key, step);
      model.set(key, step);
    } else if (r < 0.5 && !model.has(key)) {
      map.add(key, step);
      model.set(key, step);
    } else {
      expect(map.delete(key)).toBe(model.delete(key));
    }
    expect(map.size).toBe(model.size);
    expect(map.get(key)).toBe(model.get(key));
    expect(map.has(key)).toBe(model.has(key));
  }
  expect([...map.entries()].sort()).toEqual([...model.entries()].sort());
  expect([...map.keys()].sort()).toEqual([...model.keys()].sort());
  expect([...map.values()].sort()).toEqual([...model.values()].sort());
});
