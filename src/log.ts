// Structured JSON logs (pino). Lines that concern one pod, key or IP carry them as fields
// (`pod`, `key`, `ip`), so that one grep finds a pod's whole story.
import { pino } from 'pino';

export type Logger = pino.Logger;
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export function createLogger(level: LogLevel = 'info', destination?: pino.DestinationStream): Logger {
  return pino({ level, base: { component: 'floatip' } }, destination);
}

/** For tests and benchmarks: discards everything. */
export const silentLogger = (): Logger => pino({ level: 'silent' });
