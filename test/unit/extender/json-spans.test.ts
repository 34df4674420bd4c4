// The span finder must agree with JSON.parse on every text JSON.parse accepts: the bytes it points
// at parse to the very values JSON.parse gives, whatever the escapes, duplicates or depth.
import fc from 'fast-check';
import { arrayElements, elementsAt, objectMembers, rootSpan } from '../../../src/extender/json-spans.js';

const spansOf = (text: string) => {
  const raw = Buffer.from(text);
  const members = objectMembers(raw, rootSpan(raw));
  return {
    raw,
    members,
    value: (key: string) => {
      const [from, to] = members.get(key)!;
      return JSON.parse(raw.toString('utf8', from, to)) as unknown;
    },
  };
};

test('members: every kind of value, in JSON.parse’s order, with their exact bytes', () => {
  const text = ' { "a" : 1 , "b":"x}]\\"","c" :[1,{"d":[]}],"e":{},"f":null,"g":true,"h":-1.5e3 } ';
  const { members, value } = spansOf(text);
  const parsed = JSON.parse(text) as Record<string, unknown>;
  expect([...members.keys()]).toEqual(Object.keys(parsed));
  for (const key of members.keys()) expect(value(key)).toEqual(parsed[key]);
});

test('escaped keys are unescaped; a key written twice keeps its last value, at its first place', () => {
  const text = '{"N\\u006fdes":1,"x":2,"Nodes":3,"\\"q\\\\":4}';
  const { members, value } = spansOf(text);
  const parsed = JSON.parse(text) as Record<string, unknown>;
  expect([...members.keys()]).toEqual(Object.keys(parsed));
  expect(value('Nodes')).toBe(3);
  expect(value('"q\\')).toBe(4);
});

test('strings with brackets, quotes, backslashes and non-ASCII text do not confuse it', () => {
  const text = '{"items":["]","\\\\","\\"[{","ünïcødé ✓ 😀",{"k":"}\\\\\\""}]}';
  const { raw, members } = spansOf(text);
  const items = arrayElements(raw, members.get('items')!);
  expect(items.map(([a, b]) => JSON.parse(raw.toString('utf8', a, b)) as unknown)).toEqual(
    (JSON.parse(text) as { items: unknown[] }).items,
  );
});

test('nesting 100,000 levels deep costs no stack', () => {
  const deep = '['.repeat(100_000) + ']'.repeat(100_000);
  const text = `{"items":[${deep},{"metadata":{"name":"n"}}]}`;
  const { raw, members } = spansOf(text);
  const items = arrayElements(raw, members.get('items')!);
  expect(items).toHaveLength(2);
  expect(raw.toString('utf8', items[1]![0], items[1]![1])).toBe('{"metadata":{"name":"n"}}');
});

test('empty object and array', () => {
  const { raw, members } = spansOf('{"a":[ ],"b":{ }}');
  expect(arrayElements(raw, members.get('a')!)).toEqual([]);
  expect(objectMembers(raw, members.get('b')!).size).toBe(0);
});

describe('elementsAt: one pass to the array at a path', () => {
  const at = (text: string, path: string[]) => {
    const raw = Buffer.from(text);
    return elementsAt(raw, path)?.map(([a, b]) => JSON.parse(raw.toString('utf8', a, b)) as unknown);
  };

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
