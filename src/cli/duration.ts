// Go-style durations ("15s", "1m30s", "500ms", "2h"), the form galaxy-ipam's flags take.
import { InvalidArgumentError } from 'commander';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds of a Go duration; "0" is 0. Throws commander's InvalidArgumentError. */
export function parseDuration(text: string): number {
  if (text === '0') return 0;
  const parts = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/.test(text)
    ? text.match(/\d+(?:\.\d+)?(?:ms|s|m|h)/g)
    : null;
  if (!parts) throw new InvalidArgumentError('must be a duration such as 15s, 1m30s or 500ms');
  return Math.round(
    parts.reduce((total, part) => {
      const [, amount, unit] = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(part)!;
      return total + Number(amount) * UNITS[unit!]!;
    }, 0),
  );
}
