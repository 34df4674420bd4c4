import { parseDuration } from '../../src/cli/duration.js';

test.each([
  ['15s', 15000],
  ['1m30s', 90000],
  ['500ms', 500],
  ['2h', 7200000],
  ['1.5s', 1500],
  ['0', 0],
])('%s is %i ms', (text, ms) => {
  expect(parseDuration(text)).toBe(ms);
});

test.each(['', '15', 's', '1x', '-1s', '1s ', 'abc'])('%j is refused', (text) => {
  expect(() => parseDuration(text)).toThrow('must be a duration such as 15s, 1m30s or 500ms');
});
