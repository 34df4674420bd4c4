// floatip's log lines go out in batches: one write per batch, not per line (each write wakes a thread
// of libuv's pool), and no line waits longer than LOG_FLUSH_MS.
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
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
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ msg: 'pod bound', ip: ['10.0.0.0'], component: 'floatip' });
  } finally {
    destination.flushSync();
    destination.destroy(); // closes fd
  }
});
