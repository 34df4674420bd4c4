// A caller's text as a message or a log line names it: its start and how long it was, so that a
// megabyte sent does not come back whole into a refusal, an Event or a log line. Every room may
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
