// Query strings as galaxy's Go server read them (url.ParseQuery, Go 1.17 and later), so that what
// Go's and Python's clients send means here what it meant to galaxy: `+` is a space, `%XX` is a
// byte, reserved characters (`:` `,` `/` `@` ...) stand for themselves, the first of repeated
// parameters counts, and what Go refuses (a malformed escape, a `;`) is refused with Go's words.

export class QueryStringError extends Error {
  override get name(): string {
    return 'QueryStringError';
  }
}

/** Each parameter's first value, decoded; throws QueryStringError where Go's ParseQuery fails. */
export function parseQuery(raw: string): Record<string, string> {
  const values = new Map<string, string>();
  for (const pair of raw.split('&')) {
    // Go 1.17 refuses `;`, which older servers took for `&`
    if (pair.includes(';')) throw new QueryStringError('invalid semicolon separator in query');
    if (pair === '') continue;
    const cut = pair.indexOf('=');
    const key = unescape(cut < 0 ? pair : pair.slice(0, cut));
    const value = cut < 0 ? '' : unescape(pair.slice(cut + 1));
    if (!values.has(key)) values.set(key, value);
  }
  // fromEntries defines own properties, so that even a `__proto__` parameter is only a parameter
  return Object.fromEntries(values);
}

function hexValue(c: number | undefined): number {
  if (c === undefined) return -1;
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}

/**
 * Go's QueryUnescape. The request line arrives as bytes (node gives them as latin1 characters),
 * escapes decode to bytes, and the bytes are UTF-8 (invalid sequences become U+FFFD; Go keeps
 * the raw bytes, which no key or name here can contain).
 */
function unescape(text: string): string {
  if (!/[%+\u0080-\u00ff]/.test(text)) return text;
  const bytes = Buffer.from(text, 'latin1');
  const out = Buffer.allocUnsafe(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === 0x25) {
      const high = hexValue(bytes[i + 1]);
      const low = hexValue(bytes[i + 2]);
      if (high < 0 || low < 0)
        throw new QueryStringError(`invalid URL escape ${JSON.stringify(text.slice(i, i + 3))}`);
      out[n++] = high * 16 + low;
      i += 2;
    } else out[n++] = b === 0x2b ? 0x20 : b;
  }
  return out.toString('utf8', 0, n);
}
