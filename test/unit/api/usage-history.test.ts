// The time to exhaustion's arithmetic: the net drop of the free count over the last hour of samples.
import { USAGE_MIN_SPAN_MS, UsageHistory } from '../../../src/api/usage-history.js';

const MIN = 60_000;
const free = (n: number) => new Map([['entry 0', BigInt(n)]]);

test('unknown without samples, and until a minute of them exists', () => {
  const h = new UsageHistory();
  expect(h.exhaustion('entry 0')).toEqual({ perHour: null, seconds: null, windowSeconds: 0 });
  h.record(0, free(100));
  h.record(USAGE_MIN_SPAN_MS - 1000, free(90));
  expect(h.exhaustion('entry 0')).toEqual({ perHour: null, seconds: null, windowSeconds: 59 });
  expect(h.exhaustion('pool p1')).toMatchObject({ perHour: null });
});

test('the net drop over the span, and the free count over that rate', () => {
  const h = new UsageHistory();
  h.record(0, free(100));
  h.record(10 * MIN, free(80));
  h.record(30 * MIN, free(90));
  // 20 taken, then 10 given back: the rate is the net over the span, 10 in 30 minutes
  expect(h.exhaustion('entry 0')).toEqual({ perHour: 20, seconds: (90 / 20) * 3600, windowSeconds: 1800 });
});

test('a free count that grows or stays does not run out', () => {
  const h = new UsageHistory();
  h.record(0, free(50));
  h.record(5 * MIN, free(60));
  expect(h.exhaustion('entry 0')).toEqual({ perHour: -120, seconds: null, windowSeconds: 300 });
  h.record(10 * MIN, free(50));
  expect(h.exhaustion('entry 0')).toMatchObject({ perHour: 0, seconds: null });
});

test('only the last hour counts: a burst two hours ago is forgotten', () => {
  const h = new UsageHistory();
  h.record(0, free(1000));
  h.record(MIN, free(100)); // the burst
  for (let t = 2 * MIN; t <= 150 * MIN; t += MIN) h.record(t, free(100 - Math.floor((t - MIN) / (30 * MIN))));
  // 100 at 1 min, one fewer every 30 minutes: over the last hour, 2 fewer
  const e = h.exhaustion('entry 0');
  expect(e.windowSeconds).toBe(3600);
  expect(e.perHour).toBe(2);
});

test('samples closer than the spacing replace the newest, never the oldest', () => {
  const h = new UsageHistory();
  h.record(0, free(100));
  for (let t = 1000; t <= 9000; t += 1000) h.record(t, free(100 - t / 1000));
  h.record(2 * MIN, free(80));
  // the window still starts at the first sample: 20 in 2 minutes
  expect(h.exhaustion('entry 0')).toEqual({ perHour: 600, seconds: (80 / 600) * 3600, windowSeconds: 120 });
});
