import { IPv6, Validator, collapseIPv6Number } from 'ip-num';
import { formatAddress } from '../../../src/ipam/index.js';
import {
  InvalidAddressError,
  canonicalAddress,
  formatCidr,
  parseAddress,
  parseCidr,
  parseRange,
  formatRange,
  rangeSize,
  InvalidRangeError,
} from '../../../src/ipam/index.js';

describe('addresses', () => {
  test.each([
    ['10.0.0.1', 4, 167772161n],
    ['255.255.255.255', 4, 4294967295n],
    ['0.0.0.0', 4, 0n],
    ['::1', 6, 1n],
    ['fd00::1', 6, 0xfd000000000000000000000000000001n],
  ])('%s parses to IPv%i %p', (text, family, value) => {
    expect(parseAddress(text)).toEqual({ family, value });
  });

  test.each(['', '10.0.0', '10.0.0.256', '01.0.0.1', '10.0.0.1 ', 'fd00::1::2', 'x', '10.0.0.1/24'])(
    '%j is rejected with its text in the message',
    (text) => {
      expect(() => parseAddress(text)).toThrow(InvalidAddressError);
      expect(() => parseAddress(text)).toThrow(JSON.stringify(text));
    },
  );

  test.each([
    ['FD00:0:0:0:0:0:0:0001', 'fd00::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['0:0:0:0:0:0:0:0', '::'],
    ['10.1.2.3', '10.1.2.3'],
  ])('%s is written canonically as %s', (text, canonical) => {
    expect(canonicalAddress(text)).toBe(canonical);
  });

  test('CIDRs are masked, as galaxy does', () => {
    expect(formatCidr(parseCidr('10.0.1.2/24'))).toBe('10.0.1.0/24');
    expect(formatCidr(parseCidr('fd00:1::5/64'))).toBe('fd00:1::/64');
    expect(parseCidr('10.0.0.0/16').prefix).toBe(16);
  });

  test.each(['10.0.0.0', '10.0.0.0/33', '10.0.0.0/x', 'fd00::/129', '/24', ''])(
    'CIDR %j is rejected',
    (text) => {
      expect(() => parseCidr(text)).toThrow(/invalid CIDR address/);
    },
  );
});

describe('ranges', () => {
  test('a single address and a~b', () => {
    expect(rangeSize(parseRange('10.0.0.5'))).toBe(1n);
    expect(rangeSize(parseRange('10.0.0.5~10.0.1.4'))).toBe(256n);
    expect(rangeSize(parseRange('fd00::~fd00::ffff:ffff:ffff:ffff'))).toBe(2n ** 64n);
  });

  test('a~a is written a (galaxy normalises it so)', () => {
    expect(formatRange(parseRange('10.0.0.5~10.0.0.5'))).toBe('10.0.0.5');
    expect(formatRange(parseRange('fd00::0001~fd00::0002'))).toBe('fd00::1~fd00::2');
  });

  test.each([
    ['10.0.0.9~10.0.0.1', 'its start is above its end'],
    ['10.0.0.1~fd00::1', 'its start and end are of two address families'],
    ['10.0.0.1~', 'its end "" is not an IP address'],
    ['~', 'its start "" is not an IP address'],
    ['a~b', 'its start "a" is not an IP address'],
    ['10.0.0.1~a', 'its end "a" is not an IP address'],
    ['a', "it is neither an IP address nor two joined by '~'"],
    ['10.0.0.1~10.0.0.2~10.0.0.3', "it has 2 '~', a range has at most one"],
  ])("%j is an invalid ip range: galaxy's words, then why", (text, why) => {
    expect(() => parseRange(text)).toThrow(InvalidRangeError);
    expect(() => parseRange(text)).toThrow(`invalid ip range ${text}: ${why}`);
  });
});

describe('the fast IPv6 paths agree with ip-num', () => {
  function random(seed: number): () => number {
    let s = seed >>> 0;
    return () => {
      s = (s * 1664525 + 1013904223) >>> 0;
      return s / 2 ** 32;
    };
  }
  const rnd = random(42);
  // values with zero runs of every length and position, the cases RFC 5952 compression is about
  const values = Array.from({ length: 3000 }, () => {
    let v = 0n;
    for (let g = 0; g < 8; g++) v = (v << 16n) | BigInt(rnd() < 0.45 ? 0 : Math.floor(rnd() * 0x10000));
    return v;
  });

  test('formatting is RFC 5952, as ip-num collapses it', () => {
    for (const v of values) {
      expect(formatAddress(6, v)).toBe(collapseIPv6Number(new IPv6(v).toString()));
    }
  });

  test('parsing gives ip-num’s value, for compressed, expanded and upper-case text', () => {
    for (const v of values) {
      const expanded = new IPv6(v).toString();
      for (const text of [formatAddress(6, v), expanded, expanded.toUpperCase()]) {
        expect(parseAddress(text)).toEqual({ family: 6, value: IPv6.fromString(text).value });
      }
    }
  });

  test.each([':::', '1::2::3', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7', '12345::', 'g::1', '::1:', ':1::'])(
    '%j is rejected, as ip-num rejects it',
    (text) => {
      expect(Validator.isValidIPv6String(text)[0]).toBe(false);
      expect(() => parseAddress(text)).toThrow(InvalidAddressError);
    },
  );

  test.each(['fe80::1%eth0', '::ffff:10.0.101.10%1', 'fd00:100::50%eth0', 'fe80::1%25eth0'])(
    '%j, with a zone, is rejected as Go’s net.ParseIP rejects it (galaxy)',
    (text) => {
      expect(() => parseAddress(text)).toThrow(InvalidAddressError);
      expect(() => parseCidr(`${text}/64`)).toThrow(InvalidAddressError);
      expect(() => parseRange(`${text}~fe80::2`)).toThrow(InvalidRangeError);
    },
  );

  test('forms the fast path leaves to ip-num still parse', () => {
    expect(parseAddress('64:ff9b::1.2.3.4')).toEqual({ family: 6, value: 0x64ff9b000000000000000001020304n });
  });

  test('an IPv4-mapped address is the IPv4 address it maps, as Go reads it (galaxy)', () => {
    for (const text of ['::ffff:1.2.3.4', '::FFFF:102:304', '0:0:0:0:0:ffff:0102:0304']) {
      expect(parseAddress(text)).toEqual({ family: 4, value: 0x01020304n });
      expect(canonicalAddress(text)).toBe('1.2.3.4');
    }
    // its neighbours stay IPv6
    expect(parseAddress('::fffe:1.2.3.4').family).toBe(6);
    expect(parseAddress('1::ffff:1.2.3.4').family).toBe(6);
  });
});
