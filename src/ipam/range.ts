// Inclusive address ranges, written `a` or `a~b` in galaxy's configuration and annotations.
import { type Family, formatAddress, parseAddress } from './address.js';
import { InvalidAddressError, InvalidRangeError } from './errors.js';

export interface IPRange {
  readonly family: Family;
  readonly first: bigint;
  readonly last: bigint;
}

/** One `request_ip_range` group: the pod wants one address from the union of these ranges. */
export type RangeGroup = readonly IPRange[];

export function parseRange(text: string): IPRange {
  const parts = text.split('~');
  if (parts.length > 2) throw new InvalidRangeError(text);
  try {
    const first = parseAddress(parts[0]!);
    const last = parts.length === 2 ? parseAddress(parts[1]!) : first;
    if (first.family !== last.family || first.value > last.value) throw new InvalidRangeError(text);
    return { family: first.family, first: first.value, last: last.value };
  } catch (err) {
    if (err instanceof InvalidAddressError) throw new InvalidRangeError(text);
    throw err;
  }
}

export function formatRange(range: IPRange): string {
  const first = formatAddress(range.family, range.first);
  return range.first === range.last ? first : `${first}~${formatAddress(range.family, range.last)}`;
}

export const rangeSize = (range: IPRange): bigint => range.last - range.first + 1n;

export const rangesOverlap = (a: IPRange, b: IPRange): boolean =>
  a.family === b.family && a.first <= b.last && b.first <= a.last;

export const rangeContains = (range: IPRange, family: Family, value: bigint): boolean =>
  range.family === family && value >= range.first && value <= range.last;
