import { NotInConfigError } from '../../../src/ipam/index.js';
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

describe('retry or not, by the error’s kind', () => {
  const kinded = (kind: string) => Object.assign(new Error(`a ${kind} error`), { kind });

  async function tries(err: Error): Promise<{ tries: number; gaveUp: unknown[] }> {
    let count = 0;
    const gaveUp: unknown[] = [];
    const queue = new ReleaseQueue<string>(
      async () => {
        count++;
        throw err;
      },
      (_item, e) => gaveUp.push(e),
      { concurrency: 1, attempts: 3, backoffMs: 1, maxBackoffMs: 1 },
    );
    queue.add('p', 'p');
    await queue.idle();
    return { tries: count, gaveUp };
  }

  test('a validation error is not retried: given up at once, to the resync', async () => {
    const err = new NotInConfigError('10.9.9.9');
    expect(await tries(err)).toEqual({ tries: 1, gaveUp: [err] });
  });

  test.each(['conflict', 'wait', 'unavailable', 'transient'])('a %s error is retried', async (kind) => {
    const err = kinded(kind);
    expect(await tries(err)).toEqual({ tries: 3, gaveUp: [err] });
  });

  test('an error of no kind is retried too', async () => {
    const err = new TypeError('x is undefined');
    expect(await tries(err)).toEqual({ tries: 3, gaveUp: [err] });
  });
});
