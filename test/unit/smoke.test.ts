import { IPv4CidrRange } from 'ip-num';

test('toolchain runs TypeScript ESM tests', () => {
  expect(IPv4CidrRange.fromCidr('10.0.0.0/24').getSize()).toBe(256n);
});
