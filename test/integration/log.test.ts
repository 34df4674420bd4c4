// floatip's log lines go out in batches: one write per batch, not per line (each write wakes a thread
// of libuv's pool), and no line waits longer than LOG_FLUSH_MS.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOG_FLUSH_MS, bufferedDestination, createLogger } from '../../src/log.js';

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'floatip-log-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('lines logged together are written together, within the flush interval, each whole', async () => {
  const file = join(dir, 'log');
  const fd = openSync(file, 'a');
  const destination = bufferedDestination(fd);
  try {
    const log = createLogger('info', destination);
    for (let i = 0; i < 20; i++) log.info({ pod: `default/pod-${i}`, ip: [`10.0.0.${i}`] }, 'pod bound');
    // pino's default destination wrote the first line at once, on its own
    await sleep(Math.min(50, LOG_FLUSH_MS / 4));
    expect(readFileSync(file, 'utf8')).toBe('');
    await sleep(LOG_FLUSH_MS + 500);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line).pod)).toEqual(
      Array.from({ length: 20 }, (_, i) => `default/pod-${i}`),
    );
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({
      msg: 'pod bound',
      ip: ['10.0.0.0'],
      component: 'floatip',
    });
  } finally {
    destination.flushSync();
    destination.destroy(); // closes fd
  }
});

test('lines logged while a write is held up are written once it ends, with nothing logged after them', async () => {
  // a FIFO nobody reads yet: the batches fill it, and the pool's write blocks until it is read
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const destination = bufferedDestination(openSync(fifo, 'w'));
  try {
    const log = createLogger('info', destination);
    // one line larger than the pipe (each string within the log's limit): its write blocks
    log.info({ filler: Array(20).fill('x'.repeat(4000)) }, 'filling the pipe');
    await sleep(50);
    for (let i = 0; i < 3; i++) log.info({ marker: i }, 'logged while the write was blocked');
    // the flush timer fires while the write is still blocked
    await sleep(3 * LOG_FLUSH_MS);
    let text = '';
    const chunk = Buffer.alloc(65536);
    const deadline = Date.now() + 10 * LOG_FLUSH_MS;
    while (!text.includes('"marker":2') && Date.now() < deadline) {
      try {
        const n = readSync(reader, chunk);
        text += chunk.subarray(0, n).toString('utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
        await sleep(10);
      }
    }
    // compared without the filler, which would fill a failure's message
    const lines = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; marker?: number });
    expect(lines.map((line) => [line.msg, line.marker])).toEqual([
      ['filling the pipe', undefined],
      ...[0, 1, 2].map((i) => ['logged while the write was blocked', i]),
    ]);
  } finally {
    destination.destroy(); // closes the writing end
    closeSync(reader);
  }
});
