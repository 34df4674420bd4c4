// The text Go's time.Time takes from JSON (UnmarshalJSON: time.RFC3339, parsed strictly since Go
// 1.20): galaxy's release entries carry the list's `updateTime` as one, and galaxy's decoder refuses
// the whole request when it is not. Nothing here reads the time; it only says whether Go would.

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/** Days in `month` (1-12) of `year`, by the proleptic Gregorian calendar Go's time uses. */
function daysIn(month: number, year: number): number {
  if (month !== 2) return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return leap ? 29 : 28;
}

/**
 * Whether Go's time.Time decodes `text` (the JSON string's contents): a four-digit year, a real
 * month and day of it, hours to 23, minutes and seconds to 59 (no leap second), an optional
 * fraction after a period, and `Z` or an offset of at most 23:59. Upper-case `T` and `Z` only.
 */
export function isGoRFC3339(text: string): boolean {
  const m = RFC3339.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as number[];
  if (month! < 1 || month! > 12 || day! < 1 || day! > daysIn(month!, year!)) return false;
  if (hour! > 23 || minute! > 59 || second! > 59) return false;
  // an offset's hour and minute: Go checks both since 1.20
  if (m[7] !== undefined && (Number(m[7]) > 23 || Number(m[8]) > 59)) return false;
  return true;
}
