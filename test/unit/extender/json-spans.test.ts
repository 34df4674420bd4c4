// The span finder must agree with JSON.parse on every text JSON.parse accepts: the bytes it points
// at parse to the very values JSON.parse gives, whatever the escapes, duplicates or depth.
import fc from 'fast-check';
import { elementsAt } from '../../../src/extender/json-spans.js';

/** The elements at `path`, each parsed from the bytes elementsAt points at. */
const at = (text: string, path: string[]) => {
  const raw = Buffer.from(text);
  return elementsAt(raw, path)?.map(([a, b]) => JSON.parse(raw.toString('utf8', a, b)) as unknown);
};

test('every kind of value, before, inside and after the path, with their exact bytes', () => {
  const values = ' 1 , "x}]\\"",[1,{"d":[]}],{},null,true,-1.5e3 ';
  const text = ` { "a" : 1 , "b":"x}]\\"", "items" : [${values}] ,"c" :[1,{"d":[]}],"e":{},"f":null } `;
  expect(at(text, ['items'])).toEqual((JSON.parse(text) as { items: unknown[] }).items);
  const raw = Buffer.from(text);
  const spans = elementsAt(raw, ['items'])!;
  expect(spans.map(([a, b]) => raw.toString('utf8', a, b))).toEqual([
    '1',
    '"x}]\\""',
    '[1,{"d":[]}]',
    '{}',
    'null',
    'true',
    '-1.5e3',
  ]);
});

test('escaped keys are unescaped; a key written twice counts with its last value', () => {
  expect(at('{"N\\u006fdes":{"items":[1]},"x":2}', ['Nodes', 'items'])).toEqual([1]);
  expect(at('{"N\\u006fdes":{"items":[1]},"x":2,"Nodes":{"items":[3]}}', ['Nodes', 'items'])).toEqual([3]);
  expect(at('{"\\"q\\\\":{"items":[4]}}', ['"q\\', 'items'])).toEqual([4]);
});

test('strings with brackets, quotes, backslashes and non-ASCII text do not confuse it', () => {
  const text = '{"items":["]","\\\\","\\"[{","ünïcødé ✓ 😀",{"k":"}\\\\\\""}]}';
  expect(at(text, ['items'])).toEqual((JSON.parse(text) as { items: unknown[] }).items);
});

test('nesting 100,000 levels deep costs no stack', () => {
  const deep = '['.repeat(100_000) + ']'.repeat(100_000);
  const text = `{"items":[${deep},{"metadata":{"name":"n"}}]}`;
  const raw = Buffer.from(text);
  const items = elementsAt(raw, ['items'])!;
  expect(items).toHaveLength(2);
  expect(raw.toString('utf8', items[1]![0], items[1]![1])).toBe('{"metadata":{"name":"n"}}');
});

test('empty object and array', () => {
  expect(at('{"a":[ ],"b":{ }}', ['a'])).toEqual([]);
  expect(at('{"a":[ ],"b":{ }}', ['b', 'items'])).toBeUndefined();
});

describe('elementsAt: one pass to the array at a path', () => {
  test('finds the elements JSON.parse finds, whatever comes before and after', () => {
    const text =
      '{"Pod":{"x":["]",{"y":"}"}]},"Nodes" : { "metadata":{}, "items": [ {"a":1} , [2], "3" ] },"z":null}';
    expect(at(text, ['Nodes', 'items'])).toEqual(
      (JSON.parse(text) as { Nodes: { items: unknown[] } }).Nodes.items,
    );
  });

  test('a key written twice counts with its last value, at either level', () => {
    expect(at('{"Nodes":{"items":[1]},"Nodes":{"items":[2,3]}}', ['Nodes', 'items'])).toEqual([2, 3]);
    expect(at('{"Nodes":{"items":[1],"items":[]}}', ['Nodes', 'items'])).toEqual([]);
    expect(at('{"Nodes":{"items":[1]},"Nodes":null}', ['Nodes', 'items'])).toBeUndefined();
  });

  test('a value on the path that is not an object or an array: undefined', () => {
    expect(at('{"Nodes":{"items":{}}}', ['Nodes', 'items'])).toBeUndefined();
    expect(at('{"Nodes":"items"}', ['Nodes', 'items'])).toBeUndefined();
    expect(at('{}', ['Nodes', 'items'])).toBeUndefined();
  });

  test('random documents: the spans parse to JSON.parse’s elements', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue()), fc.jsonValue(), fc.jsonValue(), (items, before, after) => {
        const text = `{"before":${JSON.stringify(before)},"Nodes":{"items":${JSON.stringify(items, null, 1)}},"after":${JSON.stringify(after)}}`;
        expect(at(text, ['Nodes', 'items'])).toEqual(JSON.parse(text).Nodes.items);
      }),
      { seed: 20261201, numRuns: 500 },
    );
  });
});
