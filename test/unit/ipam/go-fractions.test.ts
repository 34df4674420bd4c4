// Where a JSON text writes a number with a fraction or an exponent: the REST API refuses such a
// number where the document says integer, as galaxy's Go decoder did (JSON.parse cannot tell 1.0
// from 1). A property checks the scanner against JSON.parse's own reading of generated documents.
import fc from 'fast-check';
import {
  goIntegersWithFraction,
  jsonPathText,
  numbersWithFraction,
  writtenValues,
} from '../../../src/ipam/index.js';

const scan = (text: string) => [...numbersWithFraction(text)];
const integers = (text: string, fields: string[][]) => [...goIntegersWithFraction(text, fields)];

describe('numbersWithFraction', () => {
  test('paths of objects and arrays, nested; the number as written', () => {
    expect(scan('{"a":1,"b":[2,3.5,{"c":1e3}],"d":{"e":-0.0E+1}}')).toEqual([
      { path: ['b', 1], written: '3.5' },
      { path: ['b', 2, 'c'], written: '1e3' },
      { path: ['d', 'e'], written: '-0.0E+1' },
    ]);
  });

  test('integers, and numbers inside strings or keys, are not reported', () => {
    expect(scan('{"1.5":"2.0","ip":"10.0.0.1","n":-12,"z":0,"t":true,"f":false,"x":null}')).toEqual([]);
  });

  test('a key is read as JSON.parse reads it: escapes, quotes and non-ASCII', () => {
    expect(scan('{"\\u0073ize":1.0,"a\\"b":2.0,"é\\\\":[3.0],"😀":4e0}')).toEqual([
      { path: ['size'], written: '1.0' },
      { path: ['a"b'], written: '2.0' },
      { path: ['é\\', 0], written: '3.0' },
      { path: ['😀'], written: '4e0' },
    ]);
  });

  test('only numbers within maxDepth are reported', () => {
    expect([...numbersWithFraction('{"a":[[1.0],2.0],"b":3.0}', 2)]).toEqual([
      { path: ['a', 1], written: '2.0' },
      { path: ['b'], written: '3.0' },
    ]);
  });

  test('a repeated key is reported each time; the root and white space', () => {
    expect(scan(' { "s" : 1.0 ,\n"s" :\t2.0 } ')).toEqual([
      { path: ['s'], written: '1.0' },
      { path: ['s'], written: '2.0' },
    ]);
    expect(scan('1.0')).toEqual([{ path: [], written: '1.0' }]);
    expect(scan('[[],[1.0],{}]')).toEqual([{ path: [1, 0], written: '1.0' }]);
  });

  test('every number of any JSON document is found at the path JSON.parse puts it', () => {
    // doubles print as 1.5, 1e+21 or 5e-324; integers as digits: the scanner must report exactly
    // the non-integer-looking ones, at the paths where the parsed document holds them
    const paths = (value: unknown, at: (string | number)[] = []): [(string | number)[], number][] => {
      if (typeof value === 'number') return /[.eE]/.test(JSON.stringify(value)) ? [[at, value]] : [];
      if (Array.isArray(value)) return value.flatMap((v, i) => paths(v, [...at, i]));
      if (value && typeof value === 'object')
        return Object.entries(value).flatMap(([k, v]) => paths(v, [...at, k]));
      return [];
    };
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        const found = scan(text).map(({ path, written }) => [path, Number(written)]);
        expect(found).toEqual(paths(JSON.parse(text)));
      }),
      { numRuns: 500 },
    );
  });
});

describe('writtenValues', () => {
  test('every string value written with an escape is reported as written, at its path; no other string', () => {
    // strings of quotes, backslashes and control characters, whose JSON text escapes them in runs
    const tricky = fc.string({ unit: fc.constantFrom('"', '\\', '\n', 'a', 'é', '\u0001', '😀') });
    const escaped = (value: unknown, at: (string | number)[] = []): [(string | number)[], string][] => {
      if (typeof value === 'string') {
        const written = JSON.stringify(value);
        return written.includes('\\') ? [[at, written]] : [];
      }
      if (Array.isArray(value)) return value.flatMap((v, i) => escaped(v, [...at, i]));
      if (value && typeof value === 'object')
        return Object.entries(value).flatMap(([k, v]) => escaped(v, [...at, k]));
      return [];
    };
    const doc = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        tricky,
        fc.integer(),
        fc.array(tie('value')),
        fc.dictionary(tricky, tie('value')),
      ),
    })).value;
    fc.assert(
      fc.property(doc, (value) => {
        const text = JSON.stringify(value);
        const found = [...writtenValues(text)]
          .filter((v) => v.kind === 'escape')
          .map(({ path, written }) => [path, written]);
        expect(found).toEqual(escaped(JSON.parse(text)));
      }),
      { numRuns: 500 },
    );
  });
});

describe('goIntegersWithFraction', () => {
  test("only at the given fields, keys matched as Go's decoder matches them; `*` is any element", () => {
    const text = '{"Common":{"IPINFOS":[{"vlan":1},{"ſpan":2.0,"vlan":3.0}],"other":4.0},"vlan":5.0}';
    expect(integers(text, [['common', 'ipinfos', '*', 'vlan']])).toEqual([
      { path: ['Common', 'IPINFOS', 1, 'vlan'], written: '3.0' },
    ]);
    // the long s folds to s, as in Go
    expect(integers(text, [['common', 'ipinfos', '*', 'span']])).toHaveLength(1);
    expect(integers(text, [['vlan'], ['common', 'other']]).map((f) => f.written)).toEqual(['4.0', '5.0']);
    // `*` is a map's key too; an index is never a field's name
    expect(integers('{"node-1":{"n":1.0}}', [['*', 'n']])).toEqual([
      { path: ['node-1', 'n'], written: '1.0' },
    ]);
    expect(integers('[1.0]', [['0']])).toEqual([]);
    // exact names, for a reader that takes no other
    expect([...goIntegersWithFraction('{"Size":1.0,"size":2.0}', [['size']], 'exact')]).toEqual([
      { path: ['size'], written: '2.0' },
    ]);
  });

  test('paths as messages name them', () => {
    expect(jsonPathText(['ips', 0, 'policy'])).toBe('ips[0].policy');
    expect(jsonPathText([2, 'vlan'])).toBe('[2].vlan');
    expect(jsonPathText([])).toBe('');
  });
});
