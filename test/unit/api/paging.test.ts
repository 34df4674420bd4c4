// galaxy's paging arithmetic (docs/galaxy.md#listing-ips), field by field.
import { clampPage, clampSize, pageBody, pageWindow } from '../../../src/api/paging.js';

describe('clamps (galaxy)', () => {
  test.each([
    [undefined, 0],
    [-3, 0],
    [0, 0],
    [7, 7],
    [99999, 99999],
    [100000, 99999],
  ])('page %p -> %p', (input, page) => expect(clampPage(input)).toBe(page));

  test.each([
    [undefined, 10],
    [0, 10],
    [-1, 10],
    [25, 25],
    [9999, 9999],
    [10000, 9999],
  ])('size %p -> %p', (input, size) => expect(clampSize(input)).toBe(size));
});

describe('page window', () => {
  test('a middle page', () => {
    expect(pageWindow(25n, 1, 10)).toEqual({
      start: 10n,
      end: 20n,
      last: false,
      totalElements: 25n,
      totalPages: 3n,
      first: false,
      numberOfElements: 10,
      size: 10,
      number: 1n,
    });
  });

  test('the last, partial page', () => {
    const w = pageWindow(25n, 2, 10);
    expect([w.start, w.end, w.last, w.first, w.numberOfElements, w.number]).toEqual([
      20n,
      25n,
      true,
      false,
      5,
      2n,
    ]);
  });

  test('a page past the end reports the last page number, first false, last true', () => {
    const w = pageWindow(25n, 9, 10);
    expect([w.start, w.end, w.last, w.first, w.numberOfElements, w.number]).toEqual([
      25n,
      25n,
      true,
      false,
      0,
      2n,
    ]);
  });

  test('nothing selected: 0 pages, first and last', () => {
    const w = pageWindow(0n, 3, 10);
    expect([w.totalPages, w.first, w.last, w.numberOfElements, w.number]).toEqual([0n, true, true, 0, 0n]);
  });

  test('exact multiple', () => expect(pageWindow(20n, 1, 10).last).toBe(true));
});

describe('page body', () => {
  test("galaxy's field order; content omitted when empty", () => {
    const { json } = pageBody(pageWindow(0n, 0, 10), []);
    expect(Object.keys(json!)).toEqual([
      'last',
      'totalElements',
      'totalPages',
      'first',
      'numberOfElements',
      'size',
      'number',
    ]);
    const full = pageBody(pageWindow(1n, 0, 10), [{ ip: '10.0.0.1' }]).json!;
    expect(Object.keys(full)).toEqual([
      'last',
      'totalElements',
      'totalPages',
      'first',
      'numberOfElements',
      'size',
      'number',
      'content',
    ]);
  });

  test('counts beyond 2^53 are written as exact integers', () => {
    const total = 2n ** 64n + 3n;
    const { json, text } = pageBody(pageWindow(total, 99999, 9999), [{ ip: 'x' }]);
    expect(json).toBeUndefined();
    expect(text).toContain(`"totalElements":${total}`);
    expect(text).toContain(`"totalPages":${(total + 9998n) / 9999n}`);
    expect(text).toContain('"number":99999');
    expect(JSON.parse(text!).content).toEqual([{ ip: 'x' }]);
  });
});
