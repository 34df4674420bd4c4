// Inclusive address ranges, written `a` or `a~b` in galaxy's configuration and annotations.
import { type Family, formatAddress, parseAddress } from './address.js';
import { clip } from '../clip.js';
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
  if (parts.length > 2)
    throw new InvalidRangeError(text, `it has ${parts.length - 1} '~', a range has at most one`);
  const end = (written: string, which: string) => {
    try {
      return parseAddress(written);
    } catch (err) {
      if (err instanceof InvalidAddressError)
        throw new InvalidRangeError(
          text,
          which === 'address'
            ? "it is neither an IP address nor two joined by '~'"
            : `its ${which} ${clip(JSON.stringify(written), 100)} is not an IP address`,
        );
      throw err;
    }
  };
  const first = end(parts[0]!, parts.length === 2 ? 'start' : 'address');
  const last = parts.length === 2 ? end(parts[1]!, 'end') : first;
  if (first.family !== last.family)
    throw new InvalidRangeError(text, 'its start and end are of two address families');
  if (first.value > last.value) throw new InvalidRangeError(text, 'its start is above its end');
  return { family: first.family, first: first.value, last: last.value };
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
