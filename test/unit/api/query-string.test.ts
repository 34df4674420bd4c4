// Query strings read as Go's url.ParseQuery reads them (Go 1.17+; the cases follow net/url's
// parseTests), each parameter's first value kept, as go-restful's QueryParameter gives it.
import { QueryStringError, parseQuery } from '../../../src/api/query-string.js';

test.each<[string, Record<string, string>]>([
  ['', {}],
  ['a=1', { a: '1' }],
  ['a=1&b=2', { a: '1', b: '2' }],
  ['a=1&a=2&a=banana', { a: '1' }],
  ['ascii=%3Ckey%3A+0x90%3E', { ascii: '<key: 0x90>' }],
  ['a=%3B', { a: ';' }],
  ['a%3Bb=1', { 'a;b': '1' }],
  ['sort=ip+desc', { sort: 'ip desc' }],
  ['sort=ip%20desc', { sort: 'ip desc' }],
  ['keyword=foo+bar', { keyword: 'foo bar' }],
  // reserved characters stand for themselves
  ['keyword=a:b&podName=web,x&appName=a/b@c?d', { keyword: 'a:b', podName: 'web,x', appName: 'a/b@c?d' }],
  ['keyword=a=b', { keyword: 'a=b' }],
  ['keyword=%2B', { keyword: '+' }],
  ['keyword=caf%C3%A9', { keyword: 'café' }],
  ['&&a=1&', { a: '1' }],
  ['a', { a: '' }],
  ['=x', { '': 'x' }],
  ['__proto__=x', { ['__proto__']: 'x' }],
])('%j reads as %j', (raw, expected) => {
  const query = parseQuery(raw);
  expect(query).toEqual(expected);
  expect(Object.getPrototypeOf(query)).toBe(Object.prototype);
});

test.each([
  ['a=1;b=2', 'invalid semicolon separator in query'],
  ['a;b=1', 'invalid semicolon separator in query'],
  ['a=1&a=2;a=banana', 'invalid semicolon separator in query'],
  [';', 'invalid semicolon separator in query'],
  ['keyword=%zz', 'invalid URL escape "%zz"'],
  ['keyword=%zzzzz', 'invalid URL escape "%zz"'],
  ['keyword=%', 'invalid URL escape "%"'],
  ['keyword=%4', 'invalid URL escape "%4"'],
  ['key%g1=x', 'invalid URL escape "%g1"'],
])('%j is refused as Go refuses it: %s', (raw, message) => {
  expect(() => parseQuery(raw)).toThrow(new QueryStringError(message));
});
