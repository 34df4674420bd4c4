// IP addresses and CIDRs of both families, as plain values: a family and a bigint.
// ip-num does the parsing and validation; the one exception is the IPv4 fast path below.
import { IPv6, Validator } from 'ip-num';
import { InvalidAddressError } from './errors.js';

export type Family = 4 | 6;

export interface Address {
  readonly family: Family;
  readonly value: bigint;
}

/** A network: its first address and prefix length. */
export interface Cidr {
  readonly family: Family;
  readonly network: bigint;
  readonly prefix: number;
}

export const familyBits = (family: Family): number => (family === 4 ? 32 : 128);

// ip-num takes about 1.4 µs to parse a dotted quad; restoring 100,000 allocations parses every one
// of them, so plain dotted quads (the only IPv4 form we ever write) take this 20 ns path instead.
const DOTTED_QUAD =
  /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** Parses an IPv4 dotted quad into its 32-bit value, or undefined if it is not one. */
export function parseIPv4Number(text: string): number | undefined {
  const m = DOTTED_QUAD.exec(text);
  if (!m) return undefined;
  return ((+m[1]! << 24) >>> 0) + (+m[2]! << 16) + (+m[3]! << 8) + +m[4]!;
}

export function formatIPv4Number(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

// Likewise ip-num takes 10-20 µs to parse and 1.5 µs to format an IPv6 address, which would make
// restoring 100,000 IPv6 allocations take seconds. Plain colon-hex text (every form but embedded
// IPv4) takes this path; test/unit/ipam/address.test.ts checks it against ip-num.
const COLON_HEX = /^[0-9a-fA-F:]{2,39}$/;
const HEXTET = /^[0-9a-fA-F]{1,4}$/;

function parseIPv6Hex(text: string): bigint | undefined {
  if (!COLON_HEX.test(text)) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] === '' ? [] : halves[0]!.split(':');
  const tail = halves.length === 2 && halves[1] !== '' ? halves[1]!.split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  let value = 0n;
  for (const group of [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail]) {
    if (!HEXTET.test(group)) return undefined;
    value = (value << 16n) | BigInt(parseInt(group, 16));
  }
  return value;
}

export function parseAddress(text: string): Address {
  const v4 = parseIPv4Number(text);
  if (v4 !== undefined) return { family: 4, value: BigInt(v4) };
  const v6 = parseIPv6Hex(text);
  if (v6 !== undefined) return ofIPv6(v6);
  // ip-num takes a zone (`fe80::1%eth0`) and drops it; Go's net.ParseIP refuses one, and galaxy with
  // it (a release of `fe80::1%eth0` is 400 "not a valid ip", not a release of fe80::1).
  if (text.includes(':') && !text.includes('%') && Validator.isValidIPv6String(text)[0]) {
    return ofIPv6(IPv6.fromString(text).value);
  }
  throw new InvalidAddressError(text);
}

/**
 * An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, `::ffff:a00:1`) is the IPv4 address it maps, as
 * Go's net.ParseIP reads it and galaxy with it: a release of `::ffff:10.0.0.1` releases 10.0.0.1.
 */
const ofIPv6 = (value: bigint): Address =>
  value >> 32n === 0xffffn ? { family: 4, value: value & 0xffffffffn } : { family: 6, value };

/** The canonical text of an address: dotted quad, or RFC 5952 compressed lower-case IPv6. */
export function formatAddress(family: Family, value: bigint): string {
  if (family === 4) return formatIPv4Number(Number(value));
  const groups: number[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(Number((value >> shift) & 0xffffn));
  // RFC 5952: the longest run of two or more zero groups becomes "::", the first of equal runs
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      best = i;
      bestLength = j - i;
    }
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLength).join(':')}`;
}

export const canonicalAddress = (text: string): string => {
  const a = parseAddress(text);
  return formatAddress(a.family, a.value);
};

export function parseCidr(text: string): Cidr {
  const slash = text.indexOf('/');
  if (slash < 0) throw new InvalidAddressError(text, 'invalid CIDR address');
  const lengthText = text.slice(slash + 1);
  let address: Address;
  try {
    address = parseAddress(text.slice(0, slash));
  } catch {
    throw new InvalidAddressError(text, 'invalid CIDR address');
  }
  const prefix = /^\d{1,3}$/.test(lengthText) ? Number(lengthText) : NaN;
  if (!(prefix >= 0 && prefix <= familyBits(address.family))) {
    throw new InvalidAddressError(text, 'invalid CIDR address');
  }
  return { family: address.family, network: maskAddress(address, prefix), prefix };
}

export function maskAddress(address: Address, prefix: number): bigint {
  const hostBits = BigInt(familyBits(address.family) - prefix);
  return (address.value >> hostBits) << hostBits;
}

export const cidrSize = (cidr: Cidr): bigint => 1n << BigInt(familyBits(cidr.family) - cidr.prefix);

export const cidrLast = (cidr: Cidr): bigint => cidr.network + cidrSize(cidr) - 1n;

export function cidrContains(cidr: Cidr, address: Address): boolean {
  return address.family === cidr.family && address.value >= cidr.network && address.value <= cidrLast(cidr);
}

export const formatCidr = (cidr: Cidr): string =>
  `${formatAddress(cidr.family, cidr.network)}/${cidr.prefix}`;
