// Which texts Kubernetes' resource.Quantity accepts, as galaxy's decoder (k8s.io/apimachinery
// v1.20's Quantity.UnmarshalJSON and ParseQuantity) did. It reads a JSON value's raw bytes: a
// string's between its quotes, undecoded (so any `\` escape fails), or a number's as written
// (`1e400` is a quantity), trimmed of Unicode white space, then parsed by a scanner looser than its
// documented expression: the digits may be missing (`m`, `+`, `.`, `Gi` are all zero) and `1.G`
// passes. Ported step by step, so that floatip refuses exactly the quantities it refused.

const DECIMAL_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['', 0],
  ['n', -9],
  ['u', -6],
  ['m', -3],
  ['k', 3],
  ['M', 6],
  ['G', 9],
  ['T', 12],
  ['P', 15],
  ['E', 18],
]);
const BINARY_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['Ki', 10],
  ['Mi', 20],
  ['Gi', 30],
  ['Ti', 40],
  ['Pi', 50],
  ['Ei', 60],
]);
const SUFFIX_LETTERS = 'eEinumkKMGTP';
/** apimachinery's maxInt64Factors: the decimal digits an int64 always holds. */
const INT64_DIGITS = 18;
/** resource.Nano: the smallest scale its int64 fast path takes. */
const NANO = -9;
const INT64_MAX = 2n ** 63n - 1n;

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** strings.TrimSpace: Go's white space (unicode.IsSpace), which is not JavaScript's trim(). */
export const goTrimSpace = (text: string): string =>
  text.replace(
    /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g,
    '',
  );

/** Whether ParseQuantity accepts `text` (already trimmed). */
export function isGoQuantity(text: string): boolean {
  if (text.length === 0) return false;
  if (text === '0') return true;
  const end = text.length;
  let pos = text[0] === '-' || text[0] === '+' ? 1 : 0;
  while (pos < end && text[pos] === '0') pos++;
  if (pos >= end) return true; // a sign and zeros: 0
  let i = pos;
  while (i < end && isDigit(text[i])) i++;
  const num = text.slice(pos, i) || '0';
  if (i >= end) return fits(text, num, '', '');
  pos = i;
  let denom = '';
  if (text[pos] === '.') {
    pos++;
    for (i = pos; i < end && isDigit(text[i]); i++);
    denom = text.slice(pos, i);
    if (i >= end) return fits(text, num, denom, '');
    pos = i;
  }
  const value = text.slice(0, pos);
  const suffixStart = pos;
  for (i = pos; i < end && SUFFIX_LETTERS.includes(text[i]!); i++);
  if (i < end) {
    if (text[i] === '-' || text[i] === '+') i++;
    while (i < end && isDigit(text[i])) i++;
    if (i < end) return false; // ErrFormatWrong
  }
  return fits(value, num, denom, text.slice(suffixStart));
}

/** The rest of ParseQuantity: its suffix known (ErrSuffix), its amount read (ErrNumeric). */
function fits(value: string, num: string, denom: string, suffix: string): boolean {
  let exponent: number;
  let precision: number;
  let scale: number;
  const decimal = DECIMAL_SUFFIXES.get(suffix);
  const binary = BINARY_SUFFIXES.get(suffix);
  if (decimal !== undefined || binary === undefined) {
    if (decimal !== undefined) exponent = decimal;
    else {
      // a decimal exponent: strconv.ParseInt(suffix[1:], 10, 64), then cut to an int32
      if (suffix.length < 2 || (suffix[0] !== 'e' && suffix[0] !== 'E')) return false;
      const digits = suffix.slice(1);
      if (!/^[+-]?[0-9]+$/.test(digits)) return false;
      const parsed = BigInt(digits);
      if (parsed > INT64_MAX || parsed < -INT64_MAX - 1n) return false;
      exponent = Number(BigInt.asIntN(32, parsed));
    }
    scale = exponent;
    precision = INT64_DIGITS - (num.length + denom.length);
  } else {
    exponent = binary;
    scale = 0;
    precision =
      denom.length === 0 ? 15 - num.length - Math.trunc(Math.fround(Math.fround(exponent) * 3) / 10) - 1 : -1;
  }
  // the int64 fast path reads num and denom as digits, which always succeeds; the slow path reads
  // the value's text as an inf.Dec, which needs a digit
  if (precision >= 0 && scale - denom.length >= NANO) return true;
  return /[0-9]/.test(value);
}
