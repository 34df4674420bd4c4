// Structured JSON logs (pino). Lines that concern one pod, key or IP carry them as fields
// (`pod`, `key`, `ip`), so that one grep finds a pod's whole story.
//
// A line's strings are clipped to LOG_STRING_LIMIT characters: much of what is logged was named by a
// caller (a pod name in a bind, a request_ip_range in a filter's pod, the names of a release), and a
// request of up to 256 MiB made a log line of its own size, twice over when a name is repeated in an
// error's text. Whatever port is reached, a line stays a few kilobytes per field.
import { pino } from 'pino';
import { clip } from './clip.js';

export type Logger = pino.Logger;
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** The most characters of one logged string: a stack trace fits, a caller's megabyte does not. */
export const LOG_STRING_LIMIT = 4096;

/** Fields of a logged object looked into for long strings (an object's own, not its prototype's). */
const MAX_DEPTH = 4;

/** `text`, or its first LOG_STRING_LIMIT characters and how long it was. */
export const clipString = (text: string): string => clip(text, LOG_STRING_LIMIT);

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

/**
 * The most a line waits in the buffer before it is written (at most LOG_BUFFER_BYTES wait for a write).
 * Lines are written in batches because each write hands the line to another thread (libuv's pool),
 * and waking a thread cost more than formatting the line: pino's default wrote every line alone, about
 * 70 µs of CPU per line on the 2-core VM of README Performance, against 41 µs buffered. A line logged
 * before the process exits is written at exit (pino flushes on `exit`), one logged within this window
 * before a SIGKILL is lost.
 */
export const LOG_FLUSH_MS = 100;
/** A batch is written once it holds this much (a few dozen lines), or after LOG_FLUSH_MS. */
export const LOG_BUFFER_BYTES = 4096;

/** Where floatip's lines go: `fd` (stdout unless told), in batches, off the event loop. */
export interface LogDestination extends pino.DestinationStream {
  /** Writes what is buffered now; `done` once it is written. */
  flush(done?: (err?: Error) => void): void;
  /** Writes what is buffered now, blocking (pino does it on `exit`). */
  flushSync(): void;
  /** Stops the timer and closes `fd`. */
  destroy(): void;
}

/** `fd` (stdout unless told), written in batches of LOG_BUFFER_BYTES or after LOG_FLUSH_MS. */
export function bufferedDestination(fd = 1): LogDestination {
  // pino registers it to be flushed on exit
  const sonic = pino.destination({ dest: fd, sync: false, minLength: LOG_BUFFER_BYTES });
  // sonic-boom writes what it holds below minLength only when flushed, and a flush while a write is
  // in flight does nothing: so whenever a write ends with bytes still held, the timer is set again
  // (its own periodicFlush would write an empty buffer every period while idle)
  let unwritten = 0;
  let timer: NodeJS.Timeout | undefined;
  let destroyed = false;
  const flush = () => {
    timer = undefined;
    if (!destroyed && unwritten > 0) sonic.flush();
  };
  const arm = () => {
    if (!timer) timer = setTimeout(flush, LOG_FLUSH_MS).unref();
  };
  sonic.on('write', (n: number) => {
    unwritten -= n;
    if (unwritten > 0) arm();
  });
  return {
    write(line: string) {
      unwritten += Buffer.byteLength(line);
      arm();
      return sonic.write(line);
    },
    flush: (done) => (destroyed ? done?.() : sonic.flush(done)),
    flushSync() {
      sonic.flushSync(); // reports no 'write'
      unwritten = 0;
    },
    destroy() {
      destroyed = true;
      clearTimeout(timer);
      sonic.destroy();
    },
  };
}

export function createLogger(level: LogLevel = 'info', destination = bufferedDestination()): Logger {
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
