// JSON bodies as trees that can hold what JSON.stringify cannot write: duplicate keys, numbers out
// of range, lone surrogates, nesting thousands deep, strings of megabytes. A valid message is turned
// into a tree and mutated at any of its nodes: a hostile value put in, the key dropped, renamed to
// another case, or given twice, the value wrapped in a list or sent as a string.
import fc from 'fast-check';

export type Tree =
  | { readonly kind: 'object'; readonly entries: readonly (readonly [string, Tree])[] }
  | { readonly kind: 'array'; readonly items: readonly Tree[] }
  /** A leaf, as the JSON text to send (which may be deliberately odd). */
  | { readonly kind: 'text'; readonly json: string };

export const leaf = (json: string): Tree => ({ kind: 'text', json });

export function treeOf(value: unknown): Tree {
  if (Array.isArray(value)) return { kind: 'array', items: value.map(treeOf) };
  if (value !== null && typeof value === 'object')
    return { kind: 'object', entries: Object.entries(value).map(([k, v]) => [k, treeOf(v)] as const) };
  return leaf(JSON.stringify(value) ?? 'null');
}

export function serialize(tree: Tree): string {
  if (tree.kind === 'text') return tree.json;
  if (tree.kind === 'array') return `[${tree.items.map(serialize).join(',')}]`;
  return `{${tree.entries.map(([k, v]) => `${JSON.stringify(k)}:${serialize(v)}`).join(',')}}`;
}

/** The path of every node, root first: each step an index into entries or items. */
function pathsOf(tree: Tree, at: number[] = [], out: number[][] = []): number[][] {
  out.push(at);
  if (tree.kind === 'object') tree.entries.forEach(([, v], i) => pathsOf(v, [...at, i], out));
  if (tree.kind === 'array') tree.items.forEach((v, i) => pathsOf(v, [...at, i], out));
  return out;
}

/** Rebuilds `tree` with the node at `path` changed by `change`. */
function edit(tree: Tree, path: readonly number[], change: (node: Tree) => Tree): Tree {
  if (path.length === 0) return change(tree);
  const [step, ...rest] = path as [number, ...number[]];
  if (tree.kind === 'object') {
    const entries = tree.entries.map((e, i) =>
      i === step ? ([e[0], edit(e[1], rest, change)] as const) : e,
    );
    return { kind: 'object', entries };
  }
  if (tree.kind === 'array')
    return { kind: 'array', items: tree.items.map((v, i) => (i === step ? edit(v, rest, change) : v)) };
  return tree;
}

const nodeAt = (tree: Tree, path: readonly number[]): Tree =>
  path.reduce<Tree>(
    (t, i) => (t.kind === 'object' ? t.entries[i]![1] : t.kind === 'array' ? t.items[i]! : t),
    tree,
  );

export type Casing = 'upper' | 'lower' | 'swap-first' | 'random';

export function recase(key: string, casing: Casing, seed = 0): string {
  if (casing === 'upper') return key.toUpperCase();
  if (casing === 'lower') return key.toLowerCase();
  if (casing === 'swap-first') {
    const first = key.charAt(0);
    const swapped = first === first.toUpperCase() ? first.toLowerCase() : first.toUpperCase();
    return swapped + key.slice(1);
  }
  return [...key].map((c, i) => ((seed >> (i % 30)) & 1 ? c.toUpperCase() : c.toLowerCase())).join('');
}

interface Target {
  readonly depth: number;
  readonly at: number;
}

export type Mutation = Target &
  (
    | { readonly op: 'set'; readonly value: Tree }
    | { readonly op: 'delete' }
    | { readonly op: 'rename'; readonly casing: Casing; readonly seed: number }
    | { readonly op: 'rename-to'; readonly key: string }
    | { readonly op: 'duplicate'; readonly value: Tree; readonly before: boolean }
    | { readonly op: 'wrap' }
    | { readonly op: 'as-string' }
  );

/**
 * Applies `m` at a node: `m.depth` picks a level of the tree, `m.at` a node on it (both modulo
 * what there is), so that the few nodes near the top, which decoders look at, are hit as often as
 * the many deep inside a Node. A key edit at the root leaves the tree as it is.
 */
export function mutate(tree: Tree, m: Mutation): Tree {
  const levels: number[][][] = [];
  for (const p of pathsOf(tree)) (levels[p.length] ??= []).push(p);
  const level = levels[m.depth % levels.length]!;
  const path = level[m.at % level.length]!;
  const parentPath = path.slice(0, -1);
  const index = path[path.length - 1];
  const replace = (value: Tree) => edit(tree, path, () => value);
  switch (m.op) {
    case 'set':
      return replace(m.value);
    case 'wrap':
      return replace({ kind: 'array', items: [nodeAt(tree, path)] });
    case 'as-string':
      return replace(leaf(JSON.stringify(serialize(nodeAt(tree, path)))));
  }
  if (index === undefined) return tree;
  return edit(tree, parentPath, (container) => {
    if (container.kind === 'array') {
      const items = [...container.items];
      if (m.op === 'delete') items.splice(index, 1);
      if (m.op === 'duplicate') items.splice(m.before ? index : index + 1, 0, m.value);
      return { kind: 'array', items };
    }
    if (container.kind !== 'object') return container;
    const entries = [...container.entries];
    const [key, value] = entries[index]!;
    if (m.op === 'delete') entries.splice(index, 1);
    if (m.op === 'rename') entries[index] = [recase(key, m.casing, m.seed), value];
    if (m.op === 'rename-to') entries[index] = [m.key, value];
    if (m.op === 'duplicate') entries.splice(m.before ? index : index + 1, 0, [key, m.value]);
    return { kind: 'object', entries };
  });
}

// ---- hostile values

/** Nesting `depth` deep: `[[[...]]]` or `{"a":{"a":...}}`. */
export function deep(depth: number, brackets: 'array' | 'object'): Tree {
  return brackets === 'array'
    ? leaf('['.repeat(depth) + ']'.repeat(depth))
    : leaf('{"a":'.repeat(depth) + 'null' + '}'.repeat(depth));
}

const hugeString = (length: number) => leaf(`"${'x'.repeat(length)}"`);

/** Values of every JSON type, odd numbers and strings, and the names the world knows. */
export function hostileValue(names: readonly string[], { maxString = 2_000_000 } = {}): fc.Arbitrary<Tree> {
  const text = (s: string) => leaf(JSON.stringify(s));
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...names.map(text)) },
    { weight: 2, arbitrary: fc.string().map(text) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary' }).map(text) },
    {
      weight: 3,
      arbitrary: fc
        .constantFrom(
          ...[
            'null',
            'true',
            'false',
            '0',
            '-1',
            '1.5',
            '-0',
            '1e400',
            '-1e400',
            '123456789012345678901234567890',
          ],
          ...['""', '"\\ud800"', '"\\u0000"', '"a\\u0000b"', '"../.."', '"."', '"%2e"', '"*"'],
          ...['[]', '{}', '[null]', '["x"]', '[{}]', '[[]]', '{"":null}', '[1,"x",null,{}]'],
        )
        .map(leaf),
    },
    { weight: 1, arbitrary: fc.integer().map((n) => leaf(String(n))) },
    {
      weight: 1,
      arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => leaf(JSON.stringify(n))),
    },
    { weight: 1, arbitrary: fc.integer({ min: 1000, max: maxString }).map(hugeString) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.oneof(fc.integer({ min: 2, max: 30_000 }), fc.constantFrom(20_000, 100_000)),
          fc.constantFrom('array' as const, 'object' as const),
        )
        .map(([d, b]) => deep(d, b)),
    },
  );
}

/** Keys that objects already have (prototype names) and other unusual ones. */
const oddKey = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', '', ' ', 'metadata', 'items'),
  fc.string(),
);

export function mutationOf(value: fc.Arbitrary<Tree>): fc.Arbitrary<Mutation> {
  const at = fc.nat();
  const depth = fc.nat();
  return fc.oneof(
    { weight: 6, arbitrary: fc.record({ op: fc.constant('set' as const), depth, at, value }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), depth, at }) },
    {
      weight: 2,
      arbitrary: fc.record({
        op: fc.constant('rename' as const),
        depth,
        at,
        casing: fc.constantFrom<Casing>('upper', 'lower', 'swap-first', 'random'),
        seed: fc.nat(),
      }),
    },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('rename-to' as const), depth, at, key: oddKey }) },
    {
      weight: 2,
      arbitrary: fc.record({ op: fc.constant('duplicate' as const), depth, at, value, before: fc.boolean() }),
    },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('wrap' as const), depth, at }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('as-string' as const), depth, at }) },
  );
}

/** A valid message, mutated one to three times. */
export function mutated(valid: fc.Arbitrary<unknown>, value: fc.Arbitrary<Tree>): fc.Arbitrary<string> {
  return fc
    .tuple(valid, fc.array(mutationOf(value), { minLength: 1, maxLength: 3 }))
    .map(([message, mutations]) =>
      serialize(mutations.reduce(mutate, treeOf(JSON.parse(JSON.stringify(message))))),
    );
}
