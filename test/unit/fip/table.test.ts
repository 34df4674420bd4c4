// kubectl fip's human output: aligned columns and kubectl's ages.
import { formatTable, shortAge } from '../../../src/fip/table.js';
import { formatDuration } from '../../../src/fip/usage.js';

test('columns are padded to their widest cell, three spaces apart, with nothing trailing', () => {
  expect(
    formatTable(
      ['IP', 'STATE', 'POD'],
      [
        ['10.2.0.10', 'in-use', 'ns/a'],
        ['fd00::1234', 'parked', '-'],
      ],
    ),
  ).toBe('IP           STATE    POD\n' + '10.2.0.10    in-use   ns/a\n' + 'fd00::1234   parked   -\n');
});

test('an empty last cell leaves no trailing blanks', () => {
  expect(formatTable(['IP', 'WHY'], [['10.2.0.10', '']])).toBe('IP          WHY\n10.2.0.10\n');
});

test.each([
  [5_000, '5s'],
  [119_000, '119s'],
  [150_000, '2m30s'],
  [600_000, '10m'],
  [3 * 3_600_000, '3h'],
  [49 * 3_600_000, '2d'],
  [-1, '<unknown>'],
])('age of %p ms is %p', (ms, text) => expect(shortAge(ms)).toBe(text));

test.each([
  [undefined, 'never'],
  [40_000, '40s'],
  [30 * 60_000, '30m'],
  [6.75 * 3_600_000, '6.8h'],
  [10 * 86_400_000, '10d'],
])('time to exhaustion %p is %p', (ms, text) => expect(formatDuration(ms)).toBe(text));
