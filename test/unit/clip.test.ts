// The one shape every message and log line gives a caller's long text: what fits is kept as it
// is, what does not is its first `max` characters and how long it was.
import { clip, clipQuoted } from '../../src/clip.js';

test('text up to the bound is kept whole; past it, its start and its length', () => {
  expect(clip('abc', 3)).toBe('abc');
  expect(clip('abcd', 3)).toBe('abc... (4 characters)');
  expect(clip('', 0)).toBe('');
});

test('the quoted form is JSON of what is kept, the length outside the quotes', () => {
  expect(clipQuoted('a"b', 3)).toBe('"a\\"b"');
  expect(clipQuoted('a"bc', 3)).toBe('"a\\"b"... (4 characters)');
  expect(clipQuoted('x'.repeat(100_000), 5)).toBe('"xxxxx"... (100000 characters)');
});

test('a cut through a surrogate pair stays valid JSON in the quoted form', () => {
  const quoted = clipQuoted('a😀b', 2);
  expect(quoted).toBe('"a\\ud83d"... (4 characters)');
  expect(JSON.parse(quoted.slice(0, quoted.indexOf('...')))).toBe('a\ud83d');
});
