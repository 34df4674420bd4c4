// Bounds on what a caller sends, applied before it is parsed or quoted. JSON.parse reads any
// depth, but the plugin then names values in messages and writes results with JSON.stringify, which
// overflows the stack some thousands deep: a configuration nested 100,000 deep failed as code 100
// ("Maximum call stack size exceeded"), a prevResult so nested after the delegate had made the
// interface. No network configuration, prevResult or ipinfos nests past a handful of levels.
import { clip } from '../clip.js';

/** The deepest nesting any input is read with; a text past it is refused before it is parsed. */
export const MAX_NESTING = 512;

/** Whether `text` opens more than `limit` arrays or objects inside one another (strings skipped). */
export function nestedDeeperThan(text: string, limit = MAX_NESTING): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > limit) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return false;
}

/**
 * A value the caller sent, as a message quotes it: its JSON, a string's first `max` characters only,
 * so that a megabyte sent comes back as a line kubelet can log (it came back whole). A string's
 * `...` is inside its quotes and says no length, as floatip-cni's messages have always said it.
 */
export function quoted(value: unknown, max = 100): string {
  if (typeof value === 'string')
    return JSON.stringify(value.length > max ? `${value.slice(0, max)}...` : value);
  return clip(JSON.stringify(value) ?? String(value), max);
}
