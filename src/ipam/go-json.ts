// What galaxy's Go decoder (encoding/json) would have read, for the messages floatip reads in its
// place: which key of a parsed JSON object fills a struct field, and (below) which numbers it
// refuses for an integer field. Keys: galaxy decodes each key of the object in turn that names the field, exactly or case-insensitively,
// sets it, so the last such key wins (`{"PodName":"a","podName":"b"}` is pod b). A JSON null sets a
// pointer, slice or map field to nil but leaves a string or number as it was, so for those a later
// null does not win. One gap: JSON.parse keeps a key written twice at its first place, so an exact
// duplicate interleaved with a case variant (`{"A":1,"a":2,"A":3}`) counts at its first place.

/**
 * A key as Go compares it with an ASCII field name: case folded, where `ſ` (U+017F) is an `s` and
 * the Kelvin sign (U+212A, which toLowerCase makes `k`) a `k`, as in Go's Unicode folding. No other
 * character folds to an ASCII letter.
 */
export const goFolded = (key: string): string => key.toLowerCase().replace(/\u017f/g, 's');

/**
 * The key of `object` whose value Go's decoder leaves in the field named `name` (ASCII). `nullable`:
 * the field is a pointer, slice or map, so a null sets it; else a null is passed over.
 */
export function goFieldKey(
  object: Readonly<Record<string, unknown>>,
  name: string,
  nullable: boolean,
): string | undefined {
  const want = name.toLowerCase();
  let found: string | undefined;
  for (const key of Object.keys(object)) {
    // no character's fold to an ASCII letter changes its length, so only keys of the name's length
    // can name it: the Pod's dozens of other keys cost a comparison, not a fold
    if (key.length !== want.length || goFolded(key) !== want || (!nullable && object[key] === null)) continue;
    found = key;
  }
  return found;
}

/** How a Go field holds its value: a pointer, slice or map (`nullable`, set to nil by a null) or not. */
export type GoHeld = 'nullable' | 'value';

/**
 * `object` seen as Go's decoder fills a struct of the given fields (name: how it is held): each
 * field under its own name, with the value of the key goFieldKey picks; keys naming no field are
 * dropped. Lets a reader of a Go-decoded message read `view.gateway` whatever case was sent.
 */
export function goStruct<F extends string>(
  object: Readonly<Record<string, unknown>>,
  fields: Readonly<Record<F, GoHeld>>,
): Partial<Record<F, unknown>> {
  const out: Partial<Record<F, unknown>> = {};
  for (const name of Object.keys(fields) as F[]) {
    const key = goFieldKey(object, name, fields[name] === 'nullable');
    if (key !== undefined) out[name] = object[key];
  }
  return out;
}

// Go's decoder refuses a number written with a fraction or an exponent (`1.0`, `1e3`) for an
// integer field, and the whole message with it; JSON.parse reads 1.0 as 1 and keeps no trace of
// how it was written. So a decoder of a Go-decoded message reads its text once more for them.

/** Keys and indices from the root of a JSON text to one of its values. */
export type JsonPath = readonly (string | number)[];

const QUOTE = 0x22;

// an object's current key as where its text lies, decoded only when a path is asked for: most
// bodies have no number to report, and a release of 10,000 entries has 80,000 keys
interface OpenObject {
  readonly object: true;
  start: number;
  end: number;
  decoded?: string;
}
type Container = OpenObject | { readonly object: false; index: number };

/** A number written with a fraction or an exponent, where it lies and as it was written. */
export interface FractionNumber {
  readonly path: JsonPath;
  readonly written: string;
}

/**
 * A value whose JSON.parse reading hides what Go's decoder sees: a number written with a
 * `fraction` or an exponent, an integer `long` enough (16 digits or more) that a JavaScript number
 * may not hold it exactly (int64's bounds), or a string written with an `escape` (a Quantity reads
 * its raw bytes, undecoded). `written` is its text, a string's with its quotes.
 */
export interface WrittenValue extends FractionNumber {
  readonly kind: 'fraction' | 'long' | 'escape';
}

/**
 * The numbers of a JSON text written with a fraction or an exponent, in text order (a key written
 * twice is reported at each: Go's decoder refuses the first as it goes), those nested at most
 * `maxDepth` deep only.
 */
export function* numbersWithFraction(text: string, maxDepth = Infinity): Generator<FractionNumber> {
  for (const { path, written, kind } of writtenValues(text, maxDepth))
    if (kind === 'fraction') yield { path, written };
}

/**
 * The values of a JSON text that its parsed value does not show as Go's decoder reads them
 * (WrittenValue), in text order, those nested at most `maxDepth` deep only. The text must be JSON
 * that JSON.parse read: on anything else the paths mean nothing. Linear in the text: a path is
 * built only for a value reported, and each key is decoded once, so a body nested a million deep
 * around a million numbers costs one pass.
 */
export function* writtenValues(text: string, maxDepth = Infinity): Generator<WrittenValue> {
  const open: Container[] = [];
  const keyOf = (o: OpenObject) => {
    if (o.decoded === undefined) {
      const raw = text.slice(o.start, o.end);
      o.decoded = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
    }
    return o.decoded;
  };
  const path = () => open.map((o) => (o.object ? keyOf(o) : o.index));
  let expectKey = false;
  /** The first backslash at or after where it was last looked for from; -1: none in the rest. */
  let backslash = -2;
  for (let i = 0; i < text.length;) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // to the closing quote by indexOf, not character by character: most of a Pod's text is in
      // its strings, and this pass ran for every pod a filter is asked about
      let end = i + 1;
      let escaped = false;
      for (;;) {
        const quote = text.indexOf('"', end);
        if (quote < 0) {
          end = text.length;
          break;
        }
        if (backslash !== -1 && backslash < end) backslash = text.indexOf('\\', end);
        if (backslash === -1 || backslash > quote) {
          end = quote + 1;
          break;
        }
        escaped = true;
        end = backslash + 2; // past the escape and the character it escapes, a quote perhaps
      }
      const top = open[open.length - 1];
      if (expectKey && top?.object) {
        top.start = i;
        top.end = end;
        top.decoded = undefined;
      } else if (escaped && open.length <= maxDepth)
        yield { path: path(), written: text.slice(i, end), kind: 'escape' };
      i = end;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      open.push(c === 0x7b ? { object: true, start: i, end: i } : { object: false, index: 0 });
      expectKey = c === 0x7b;
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      open.pop();
      i++;
    } else if (c === 0x2c /* , */) {
      const top = open[open.length - 1];
      if (top && !top.object) top.index++;
      expectKey = top?.object === true;
      i++;
    } else if (c === 0x3a /* : */) {
      expectKey = false;
      i++;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1;
      let fraction = false;
      for (; end < text.length; end++) {
        const d = text.charCodeAt(end);
        if (d === 0x2e /* . */ || d === 0x65 /* e */ || d === 0x45 /* E */) fraction = true;
        else if (!(d >= 0x30 && d <= 0x39) && d !== 0x2b /* + */ && d !== 0x2d) break;
      }
      const long = !fraction && end - i >= 16;
      if ((fraction || long) && open.length <= maxDepth)
        yield { path: path(), written: text.slice(i, end), kind: fraction ? 'fraction' : 'long' };
      i = end;
    } else i++; // white space, and the letters of true, false and null
  }
}

/** Whether Go's decoder fills the struct field `name` (ASCII) from the object key `key`. */
const goKeyNames = (key: string, name: string): boolean =>
  key.length === name.length && goFolded(key) === name.toLowerCase();

/** `['ips', 0, 'policy']` -> `ips[0].policy`, as messages name a field. */
export const jsonPathText = (path: JsonPath): string =>
  path
    .map((part) => (typeof part === 'number' ? `[${part}]` : `.${part}`))
    .join('')
    .replace(/^\./, '');

/** Field names from the root to an integer field; `*` is any element: a list's index or a map's key. */
export type GoFieldPath = readonly string[];

/**
 * The numbers of `text` written with a fraction or an exponent that Go's decoder would put in one of
 * the integer `fields` (keys matched as goFieldKey matches them, or `exact`ly for a reader that
 * takes exact names), each of which it refuses; as they are found, so that a caller refusing on the
 * first reads no further.
 */
export function* goIntegersWithFraction(
  text: string,
  fields: readonly GoFieldPath[],
  keys: 'go' | 'exact' = 'go',
): Generator<FractionNumber> {
  const keyNames = keys === 'go' ? goKeyNames : (key: string, name: string) => key === name;
  const names = (path: JsonPath, field: GoFieldPath) =>
    path.length === field.length &&
    path.every((part, i) => field[i] === '*' || (typeof part === 'string' && keyNames(part, field[i]!)));
  const depth = Math.max(0, ...fields.map((field) => field.length));
  for (const found of numbersWithFraction(text, depth))
    if (fields.some((field) => names(found.path, field))) yield found;
}

/**
 * The keys of a JSON text that name, as Go's decoder matches keys (goFolded), the same field as a
 * key before them in the same object, by their paths, in text order. Go decodes a repeated key into
 * the field again, so a struct merges (`"common":{"ipinfos":[...]},"common":{}` keeps the first's
 * ipinfos) where JSON.parse keeps the last key alone: a reader of text that Go decodes elsewhere
 * refuses what it would read differently. The text must be JSON that JSON.parse read. Linear in the
 * text.
 */
export function* repeatedGoKeys(text: string): Generator<JsonPath> {
  type Open = { object: true; keys: Set<string>; key?: string } | { object: false; index: number };
  const open: Open[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length;) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = i + 1;
      while (end < text.length && text.charCodeAt(end) !== QUOTE)
        end += text.charCodeAt(end) === 0x5c ? 2 : 1;
      end++;
      const top = open[open.length - 1];
      if (expectKey && top?.object) {
        const raw = text.slice(i, end);
        const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        const folded = goFolded(key);
        // the keys (or indices) of the containers around this object, then the repeated key
        if (top.keys.has(folded)) yield [...open.slice(0, -1).map((o) => (o.object ? o.key! : o.index)), key];
        top.keys.add(folded);
        top.key = key;
      }
      i = end;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      open.push(c === 0x7b ? { object: true, keys: new Set() } : { object: false, index: 0 });
      expectKey = c === 0x7b;
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      open.pop();
      i++;
    } else if (c === 0x2c /* , */) {
      const top = open[open.length - 1];
      if (top && !top.object) top.index++;
      expectKey = top?.object === true;
      i++;
    } else if (c === 0x3a /* : */) {
      expectKey = false;
      i++;
    } else i++;
  }
}
