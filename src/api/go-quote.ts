// Go's strconv.Quote (fmt's %q), for the messages whose words are galaxy's: `"<ip>" is not a valid
// ip` quoted a caller's value so, and a script that matches galaxy's message sees the same text.
// Where it differs from JSON.stringify: control and other unprintable characters (`\x01`, `\x7f`,
// `\u00a0`), `\a` and `\v`; printable non-ASCII stays as it is in both.

const NAMED: Readonly<Record<string, string>> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '\\': '\\\\',
  '"': '\\"',
};

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

export function goQuote(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    const named = NAMED[char];
    if (named !== undefined) out += named;
    else if (PRINTABLE.test(char) && !(code >= 0xd800 && code <= 0xdfff)) out += char;
    else if (code < 0x80) out += `\\x${hex(code, 2)}`;
    // a lone surrogate is what Go's JSON decoder turned into U+FFFD, which Quote prints as is
    else if (code >= 0xd800 && code <= 0xdfff) out += '\ufffd';
    else if (code <= 0xffff) out += `\\u${hex(code, 4)}`;
    else out += `\\U${hex(code, 8)}`;
  }
  return `${out}"`;
}
