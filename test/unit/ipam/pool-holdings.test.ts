import { ofMainFamily } from '../../../src/ipam/index.js';

test("a pool's holdings in pods' worth: the addresses of the family it holds most of, IPv4 on a tie", () => {
  const a = (family: 4 | 6, n: number) => ({ family, n });
  const family = (x: { family: 4 | 6 }) => x.family;
  expect(ofMainFamily([a(4, 1), a(6, 2), a(4, 3), a(6, 4)], family)).toEqual([a(4, 1), a(4, 3)]);
  expect(ofMainFamily([a(4, 1), a(6, 2), a(6, 3)], family)).toEqual([a(6, 2), a(6, 3)]);
  expect(ofMainFamily([a(4, 1), a(4, 2)], family)).toHaveLength(2);
  expect(ofMainFamily([], family)).toEqual([]);
});
