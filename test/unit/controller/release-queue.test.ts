import { ReleaseQueue } from '../../../src/controller/release-queue.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('runs at most `concurrency` jobs at once, one per key, and never blocks the producer', async () => {
  let running = 0;
  let most = 0;
  const done: string[] = [];
  const queue = new ReleaseQueue<string>(
    async (item) => {
      running++;
      most = Math.max(most, running);
      await sleep(5);
      running--;
      done.push(item);
    },
    () => undefined,
    { concurrency: 3, attempts: 1, backoffMs: 1, maxBackoffMs: 1 },
  );
  for (let i = 0; i < 20; i++) queue.add(`pod-${i}`, `pod-${i}`);
  expect(queue.depth).toBe(20);
  await queue.idle();
  expect(most).toBe(3);
  expect(done.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `pod-${i}`).sort());
});

test('a failing job is retried with growing backoff, then given up to the resync', async () => {
  const tries: number[] = [];
  const gaveUp: string[] = [];
  const queue = new ReleaseQueue<string>(
    async (_item, attempt) => {
      tries.push(Date.now());
      if (attempt < 10) throw new Error(`try ${attempt}`);
    },
    (item) => gaveUp.push(item),
    { concurrency: 1, attempts: 4, backoffMs: 10, maxBackoffMs: 1000 },
  );
  queue.add('p', 'p');
  await queue.idle();
  expect(tries).toHaveLength(4);
  expect(gaveUp).toEqual(['p']);
  const gaps = tries.slice(1).map((t, i) => t - tries[i]!);
  expect(gaps[0]).toBeGreaterThanOrEqual(9);
  expect(gaps[2]).toBeGreaterThanOrEqual(39);
});

test('a newer event for a waiting pod replaces it; one for a running pod runs after it', async () => {
  const seen: string[] = [];
  let release!: () => void;
  const queue = new ReleaseQueue<string>(
    async (item) => {
      seen.push(item);
      if (item === 'v1') await new Promise<void>((r) => (release = r));
    },
    () => undefined,
    { concurrency: 1, attempts: 1, backoffMs: 1, maxBackoffMs: 1 },
  );
  queue.add('pod', 'v1');
  await sleep(1);
  queue.add('pod', 'v2'); // arrives while v1 runs
  queue.add('pod', 'v3'); // replaces v2
  release();
  await queue.idle();
  expect(seen).toEqual(['v1', 'v3']);
});
