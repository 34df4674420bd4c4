// How kube-apiserver's Go code prints a JSON value inside a validation message: fmt's %v for the
// numbers and booleans a decoded custom resource holds (int64 for a whole number, float64 otherwise),
// %q for strings, %#v for maps and slices. A message a client or a person compares with a real
// cluster's then reads the same.

/** Whether Go's decoder (sigs.k8s.io/json, ints preserved) would hold `n` as an int64. */
export function isGoInt(n: number): boolean {
  return Number.isInteger(n) && Math.abs(n) < 2 ** 63;
}

/** fmt's %v of a float64: strconv's shortest 'g', exponent form below 1e-4 and from 1e6 on (`1e+06`). */
export function goFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  // toExponential() gives the shortest digits that read back as n, as strconv's shortest does
  const [mantissa = '', exponent = '0'] = n.toExponential().split('e');
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace(/^-/, '').replace('.', '');
  const exp = Number(exponent);
  const sign = negative ? '-' : '';
  if (exp < -4 || exp >= 6) {
    const tail = digits.length > 1 ? `.${digits.slice(1)}` : '';
    const e = Math.abs(exp).toString().padStart(2, '0');
    return `${sign}${digits[0]}${tail}e${exp < 0 ? '-' : '+'}${e}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const fraction = digits.slice(exp + 1);
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** %v of a decoded JSON number; an int64 in all its digits (JS's shortest form rounds past 2^53). */
export function goNumber(n: number): string {
  return isGoInt(n) ? BigInt(n).toString() : goFloat(n);
}

/**
 * %q. JSON's quoting, which is Go's for every printable character; Go writes the unprintable ones
 * as `\x01` where JSON writes `\u0001` (the strings checked here are field values, rarely such).
 */
export function goQuoted(s: string): string {
  return JSON.stringify(s);
}

/** %#v of a value inside a map or slice, as Go prints an interface{} holding it. */
function goSharp(value: unknown): string {
  if (value === null || value === undefined) return 'interface {}(nil)';
  if (typeof value === 'string') return goQuoted(value);
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[]interface {}{${value.map(goSharp).join(', ')}}`;
  const entries = Object.entries(value as Record<string, unknown>)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${goQuoted(k)}:${goSharp(v)}`);
  return `map[string]interface {}{${entries.join(', ')}}`;
}

/** How field.Error's ErrorBody prints the bad value: `"null"` for none, %v, %q, else %#v. */
export function goBadValue(value: unknown): string {
  if (value === null || value === undefined) return '"null"';
  if (typeof value === 'string') return goQuoted(value);
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  return goSharp(value);
}
