// Where values lie in a JSON text, so that parts of a request can be echoed back byte for byte (the
// filter's passing Node objects) instead of being serialised again, and decoded only when they
// changed (full-nodes.ts). Iterative, so nesting depth costs no stack. It does not validate: on a
// text that is not JSON it throws MalformedJson or returns spans that need not be values, so a
// caller that has not parsed the text must parse what it is given (full-nodes.ts parses each span
// and the text around them); it never reads past the text's end.

/** [start, end) of a value in the text. */
export type Span = readonly [number, number];

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/** The text ended, or a byte that cannot be there was found, while looking for a value's end. */
export class MalformedJson extends Error {}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(text: Buffer, i: number): number {
  while (i < text.length && isSpace(text[i]!)) i++;
  return i;
}

/** The end of the string whose opening quote is at i (just past its closing quote). */
function stringEnd(text: Buffer, i: number): number {
  for (let j = i + 1; ;) {
    if (j >= text.length) throw new MalformedJson(`a string from byte ${i} never ends`);
    const c = text[j]!;
    if (c === BACKSLASH) j += 2;
    else if (c === QUOTE) return j + 1;
    else j++;
  }
}

/** The end of the value starting at i. */
function valueEnd(text: Buffer, i: number): number {
  if (i >= text.length) throw new MalformedJson('the text ends where a value should be');
  const c = text[i]!;
  if (c === QUOTE) return stringEnd(text, i);
  if (c !== OPEN_OBJECT && c !== OPEN_ARRAY) {
    let j = i;
    while (j < text.length) {
      const d = text[j]!;
      if (d === COMMA || d === CLOSE_OBJECT || d === CLOSE_ARRAY || isSpace(d)) break;
      j++;
    }
    return j;
  }
  let depth = 0;
  for (let j = i; ; j++) {
    if (j >= text.length) throw new MalformedJson(`a value from byte ${i} never ends`);
    const d = text[j]!;
    if (d === QUOTE) j = stringEnd(text, j) - 1;
    else if (d === OPEN_OBJECT || d === OPEN_ARRAY) depth++;
    else if (d === CLOSE_OBJECT || d === CLOSE_ARRAY) {
      if (--depth === 0) return j + 1;
    }
  }
}

/** The key of the object member at i (unescaped), and where its value starts. */
function memberKey(text: Buffer, i: number): { key: string; valueAt: number } {
  const keyEnd = stringEnd(text, i);
  const raw = text.toString('utf8', i, keyEnd);
  const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  const colon = skipSpace(text, keyEnd);
  if (text[colon] !== COLON) throw new MalformedJson(`not an object member at byte ${colon}`);
  return { key, valueAt: skipSpace(text, colon + 1) };
}

/**
 * Where an element starting at `at` ends, when the caller knows without a scan: only where
 * text[at, end) is a whole JSON value (bytes equal to a value JSON.parse read whole), since no
 * proper prefix of a JSON object or array is itself one, so the scan would end there too.
 */
export type KnownEnd = (text: Buffer, at: number) => number | undefined;

/** The spans of the elements of the array whose `[` is at `start`, in order. */
function arrayElements(text: Buffer, start: number, knownEnd: KnownEnd | undefined): Span[] {
  const elements: Span[] = [];
  let i = skipSpace(text, start + 1);
  if (text[i] === CLOSE_ARRAY) return elements;
  for (;;) {
    const end = knownEnd?.(text, i) ?? valueEnd(text, i);
    if (end === i) throw new MalformedJson(`no value at byte ${i}`);
    elements.push([i, end]);
    i = skipSpace(text, end);
    if (text[i] === CLOSE_ARRAY) return elements;
    if (text[i] !== COMMA) throw new MalformedJson(`neither , nor ] at byte ${i}`);
    i = skipSpace(text, i + 1);
  }
}

/**
 * The spans of the elements of the array reached by following `path` (object keys, exactly as
 * JSON.parse would give them) from the root, or undefined when that value is not an array. One pass
 * over the text: what lies on the path is descended into, not skipped over first; a key written
 * twice counts with its last value, as JSON.parse does. An element whose end `knownEnd` gives is
 * not scanned, nor is a value off the path that starts where `knownValue` does (the caller knows
 * those bytes to be one whole JSON value: the Pod, full-nodes.ts).
 */
export function elementsAt(
  text: Buffer,
  path: readonly string[],
  knownEnd?: KnownEnd,
  knownValue?: Span,
): Span[] | undefined {
  return walk(text, skipSpace(text, 0), path, 0, knownEnd, knownValue).elements;
}

function walk(
  text: Buffer,
  i: number,
  path: readonly string[],
  depth: number,
  knownEnd: KnownEnd | undefined,
  knownValue: Span | undefined,
): { end: number; elements: Span[] | undefined } {
  const c = text[i];
  if (depth === path.length) {
    if (c !== OPEN_ARRAY) return { end: valueEnd(text, i), elements: undefined };
    const elements = arrayElements(text, i, knownEnd);
    const last = elements[elements.length - 1];
    const end = skipSpace(text, last ? last[1] : i + 1);
    return { end: end + 1, elements };
  }
  if (c !== OPEN_OBJECT) return { end: valueEnd(text, i), elements: undefined };
  let elements: Span[] | undefined;
  let j = skipSpace(text, i + 1);
  if (text[j] === CLOSE_OBJECT) return { end: j + 1, elements };
  for (;;) {
    if (text[j] !== QUOTE) throw new MalformedJson(`no member key at byte ${j}`);
    const { key, valueAt } = memberKey(text, j);
    j = valueAt;
    if (key === path[depth]) {
      const inner = walk(text, j, path, depth + 1, knownEnd, knownValue);
      elements = inner.elements;
      j = inner.end;
    } else {
      j = j === knownValue?.[0] ? knownValue[1] : valueEnd(text, j);
    }
    j = skipSpace(text, j);
    if (text[j] === CLOSE_OBJECT) return { end: j + 1, elements };
    if (text[j] !== COMMA) throw new MalformedJson(`neither , nor } at byte ${j}`);
    j = skipSpace(text, j + 1);
  }
}
