// Structured JSON logs (pino). Lines that concern one pod, key or IP carry them as fields
// (`pod`, `key`, `ip`), so that one grep finds a pod's whole story.
//
// A line's strings are clipped to LOG_STRING_LIMIT characters: much of what is logged was named by a
// caller (a pod name in a bind, a request_ip_range in a filter's pod, the names of a release), and a
// request of up to 256 MiB made a log line of its own size, twice over when a name is repeated in an
// error's text. Whatever port is reached, a line stays a few kilobytes per field.
import { pino } from 'pino';

export type Logger = pino.Logger;
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** The most characters of one logged string: a stack trace fits, a caller's megabyte does not. */
export const LOG_STRING_LIMIT = 4096;

/** Fields of a logged object looked into for long strings (an object's own, not its prototype's). */
const MAX_DEPTH = 4;

/** `text`, or its first LOG_STRING_LIMIT characters and how long it was. */
export function clipString(text: string): string {
  if (text.length <= LOG_STRING_LIMIT) return text;
  return `${text.slice(0, LOG_STRING_LIMIT)}... (${text.length} characters)`;
}

/** `value` with every string over the limit clipped; plain objects and arrays are copied, nothing else. */
export function clipped(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return clipString(value);
  if (depth >= MAX_DEPTH || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const items = value.length > 100 ? [...value.slice(0, 100), `... (${value.length} items)`] : value;
    return items.map((item) => clipped(item, depth + 1));
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) out[key] = clipped(field, depth + 1);
  return out;
}

export function createLogger(level: LogLevel = 'info', destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { component: 'floatip' },
      hooks: {
        logMethod(args, method) {
          return method.apply(this, args.map((arg) => clipped(arg)) as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
}

/** For tests and benchmarks: discards everything. */
export const silentLogger = (): Logger => pino({ level: 'silent' });
