// The key index against a brute-force scan: random keys (with and without `_`, sharing prefixes
// often), records added and removed until groups empty and are pruned, and every answer checked
// for prefixes that are group names, that end inside a pod name, that match nothing, and ''.
import { KeyGroup, KeyIndex } from '../../../src/ipam/key-index.js';

interface Rec {
  readonly key: string;
  readonly id: number;
  group: KeyGroup | undefined;
}

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

test('byKey, byPrefix and both counts agree with a scan of every record', () => {
  const rnd = random(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  // a small alphabet, so that keys share prefixes and groups; `_` splits a key into groups
  const word = (max: number): string =>
    Array.from({ length: Math.floor(rnd() * max) }, () => pick(['a', 'b', '-', '1'])).join('');
  const newKey = (): string => {
    const parts = Array.from({ length: Math.floor(rnd() * 4) }, () => word(3));
    return [...parts, word(4)].join('_');
  };

  const index = new KeyIndex<Rec>();
  const live: Rec[] = [];
  const keys: string[] = [];
  let id = 0;
  const scan = (prefix: string): Rec[] => live.filter((r) => r.key.startsWith(prefix));
  const ids = (records: readonly Rec[]): number[] => records.map((r) => r.id).sort((a, b) => a - b);
  const prefixesToAsk = (): string[] => {
    const key = live.length > 0 ? pick(live).key : newKey();
    const cut = key.slice(0, Math.floor(rnd() * (key.length + 1)));
    const lastUnderscore = key.lastIndexOf('_');
    return [
      '',
      cut, // anywhere: often inside a pod name
      key.slice(0, lastUnderscore + 1), // the key's group
      key.slice(0, lastUnderscore + 1 + Math.floor(rnd() * (key.length - lastUnderscore))), // inside its pod name
      key,
      `${key}a`, // longer than any matching key, unless one extends it
      newKey(),
    ];
  };

  for (let step = 0; step < 12_000; step++) {
    // phases: grow to many groups, shrink until most groups are empty, then churn a few keys
    const phase = Math.floor(step / 2000) % 3;
    const grow = phase === 0 ? 0.7 : phase === 1 ? 0.2 : 0.5;
    if (live.length === 0 || rnd() < grow) {
      let key = phase === 2 && keys.length > 0 && rnd() < 0.8 ? pick(keys.slice(-20)) : newKey();
      if (rnd() < 0.3 && live.length > 0) key = pick(live).key; // a second address for a key
      const record: Rec = { key, id: id++, group: undefined };
      index.add(record);
      live.push(record);
      keys.push(key);
    } else {
      const i = Math.floor(rnd() * live.length);
      index.remove(live[i]!);
      live.splice(i, 1);
    }

    const context = `step ${step}`;
    same(context, 'size', index.size, live.length);
    same(context, 'keyCount', index.keyCount, new Set(live.map((r) => r.key)).size);
    for (const prefix of prefixesToAsk()) {
      const expected = scan(prefix);
      const what = (answer: string) => `${answer}(${JSON.stringify(prefix)})`;
      same(context, what('byPrefix'), ids(index.byPrefix(prefix)), ids(expected));
      same(context, what('countByPrefix'), index.countByPrefix(prefix), expected.length);
      same(
        context,
        what('countKeysByPrefix'),
        index.countKeysByPrefix(prefix),
        new Set(expected.map((r) => r.key)).size,
      );
      same(context, what('byKey'), ids(index.byKey(prefix)), ids(live.filter((r) => r.key === prefix)));
    }
  }
  // the walk met keys without `_` (group '') and hundreds of groups, enough to be pruned
  expect(keys.some((k) => !k.includes('_'))).toBe(true);
  expect(new Set(keys.map((k) => k.slice(0, k.lastIndexOf('_') + 1))).size).toBeGreaterThan(200);
});

// jest's expect costs microseconds a call; these checks run hundreds of thousands of times
function same(context: string, what: string, got: unknown, expected: unknown): void {
  const a = JSON.stringify(got);
  const b = JSON.stringify(expected);
  if (a !== b) throw new Error(`${context}: ${what} is ${a}, expected ${b}`);
}

test('a key keeps its records in the order they were added', () => {
  const index = new KeyIndex<Rec>();
  const records = [0, 1, 2].map((id) => ({ key: 'sts_ns_web_web-0', id, group: undefined }));
  for (const r of records) index.add(r);
  index.remove(records[1]!);
  expect(index.byKey('sts_ns_web_web-0').map((r) => r.id)).toEqual([0, 2]);
  index.remove(records[0]!);
  expect(index.byKey('sts_ns_web_web-0').map((r) => r.id)).toEqual([2]);
  index.remove(records[2]!);
  expect(index.byKey('sts_ns_web_web-0')).toEqual([]);
  expect(index.countKeysByPrefix('sts_')).toBe(0);
});
