// Request bodies for either port: a JSON message valid, mutated or not JSON at all, sent with the
// content type a client should use or one it should not.
import fc from 'fast-check';
import { type Tree, mutated } from './json-tree.js';

export const JSON_TYPE = { 'Content-Type': 'application/json' };

/** JSON's content type (nearly always), and ones a client should not send. */
export const contentType: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 8, arbitrary: fc.constant(JSON_TYPE) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<Record<string, string>>(
      {},
      { 'Content-Type': 'text/plain' },
      { 'Content-Type': 'application/x-www-form-urlencoded' },
      { 'Content-Type': 'multipart/form-data; boundary=x' },
      { 'Content-Type': 'application/json; charset=utf-16' },
      { 'Content-Type': 'APPLICATION/JSON' },
      { 'Content-Type': 'application/merge-patch+json' },
      { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      { 'Content-Type': 'application/json', 'Content-Encoding': 'br' },
    ),
  },
);

/** Bodies that are not a JSON message at all. */
export function notJson(valid: fc.Arbitrary<unknown>): fc.Arbitrary<string | Buffer> {
  return fc.oneof(
    fc.constantFrom(
      '',
      ' ',
      'null',
      '[]',
      '"x"',
      '1',
      'true',
      '{}',
      '\ufeff{}',
      '{"Pod":}',
      '{} {}',
      'NaN',
      "{'Pod':1}",
      '{"a":1,}',
    ),
    fc.string(),
    fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
    // a message cut short, as a dropped connection would leave it
    fc.tuple(valid, fc.nat()).map(([m, n]) => {
      const text = JSON.stringify(m);
      return text.slice(0, n % text.length);
    }),
  );
}

/** A message, by weight: valid (`validWeight`), mutated (6) or not JSON (1); with a content type. */
export function body(valid: fc.Arbitrary<unknown>, value: fc.Arbitrary<Tree>, validWeight: number) {
  return fc.tuple(
    fc.oneof(
      { weight: validWeight, arbitrary: valid.map((m) => JSON.stringify(m)) },
      { weight: 6, arbitrary: mutated(valid, value) },
      { weight: 1, arbitrary: notJson(valid) },
    ),
    contentType,
  );
}
