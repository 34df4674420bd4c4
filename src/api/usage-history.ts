// The time to exhaustion: floatip's own recent rate of taking free addresses. Every sample records
// how many are free per subnet and pool; the rate is the net drop between the oldest sample of the
// last hour and now (addresses given back count against those taken), so a burst an hour ago does
// not linger and a steady churn of pods that come and go does not look like a leak. Kept in memory:
// after a restart the rate is unknown until a minute of samples exists.
import type { ExhaustionJson } from './dashboard-wire.js';

export const USAGE_WINDOW_MS = 60 * 60_000;
/** Less history than this gives no rate: a few seconds of one rollout say little. */
export const USAGE_MIN_SPAN_MS = 60_000;
/** Samples closer than this replace each other (the page polls every few seconds). */
const SAMPLE_SPACING_MS = 10_000;

interface Sample {
  readonly at: number;
  /** Free count per series ("entry 0", "pool web"). */
  readonly free: ReadonlyMap<string, bigint>;
}

export class UsageHistory {
  private samples: Sample[] = [];

  /** Records the free counts seen at `at` (ms since the epoch). */
  record(at: number, free: ReadonlyMap<string, bigint>): void {
    const last = this.samples[this.samples.length - 1];
    // the newest is replaced within the spacing, so the oldest of the window stays put
    if (last && at - last.at < SAMPLE_SPACING_MS && this.samples.length > 1) this.samples.pop();
    this.samples.push({ at, free });
    const cutoff = at - USAGE_WINDOW_MS;
    while (this.samples.length > 1 && this.samples[0]!.at < cutoff) this.samples.shift();
  }

  /** The rate and time to exhaustion of one series, as of the newest sample. */
  exhaustion(series: string): ExhaustionJson {
    const newest = this.samples[this.samples.length - 1];
    const oldest = this.samples.find((s) => s.free.has(series));
    const now = newest?.free.get(series);
    const then = oldest?.free.get(series);
    if (!newest || !oldest || now === undefined || then === undefined) return unknown(0);
    const span = newest.at - oldest.at;
    if (span < USAGE_MIN_SPAN_MS) return unknown(span);
    const perHour = (Number(then - now) * 3_600_000) / span;
    const seconds = perHour > 0 ? Math.round((Number(now) / perHour) * 3600) : null;
    return { perHour: Math.round(perHour * 100) / 100, seconds, windowSeconds: Math.round(span / 1000) };
  }
}

const unknown = (span: number): ExhaustionJson => ({
  perHour: null,
  seconds: null,
  windowSeconds: Math.round(span / 1000),
});
