// A caller's text as a message or a log line names it: its start and how long it was, so that a
// megabyte sent does not come back whole into a refusal, an Event or a log line, and without the
// characters that steer a terminal, so that it cannot rewrite what its reader sees. Every room may
// import this module and it imports nothing (eslint.doors.js: EVERY_ROOM), so that the pure core
// and floatip-cni (which must not load pino) clip as the rest do.
//
// Slicing is by UTF-16 code units, as every copy this replaced sliced: a cut may split a surrogate
// pair, which JSON.stringify then writes as a `\udxxx` escape (well-formed JSON either way).

/** `text`, or its first `max` characters and how long it was. */
export const clip = (text: string, max: number): string =>
  text.length > max ? `${text.slice(0, max)}... (${text.length} characters)` : text;

/** `text` as a JSON string, or its first `max` characters as one and how long it was. */
export const clipQuoted = (text: string, max: number): string =>
  text.length > max
    ? `${JSON.stringify(text.slice(0, max))}... (${text.length} characters)`
    : JSON.stringify(text);

/**
 * Characters that steer a terminal or reorder what it shows rather than being shown: C0 controls
 * (tab and newline too), DEL, C1 controls, the line and paragraph separators, and the bidirectional
 * marks, embeddings, overrides and isolates. Object data (a key, a node name in an attribute, a
 * ConfigMap's range) is written by whoever may write those objects; printed raw, `ESC ]0;...`
 * retitles the terminal, `ESC [2J` clears it, a newline forges a line and U+202E turns `exe.png`
 * into `gnp.exe`.
 */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const escaped = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` as one line a terminal shows as written: every character in UNPRINTABLE as `\uXXXX`. */
export const printable = (text: string): string => text.replace(UNPRINTABLE, escaped);

/** Text of several lines for a terminal: as printable, but newlines and tabs are kept. */
export const printableLines = (text: string): string =>
  text.replace(UNPRINTABLE, (c) => (c === '\n' || c === '\t' ? c : escaped(c)));
