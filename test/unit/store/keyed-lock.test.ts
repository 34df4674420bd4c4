import { KeyedLock } from '../../../src/store/keyed-lock.js';

const tick = () => new Promise((r) => setImmediate(r));

test('work on one key runs one at a time, in arrival order; other keys run alongside', async () => {
  const lock = new KeyedLock();
  const log: string[] = [];
  const job = (key: string, name: string) =>
    lock.run(key, async () => {
      log.push(`${name} start`);
      await tick();
      await tick();
      log.push(`${name} end`);
      return name;
    });
  const results = await Promise.all([job('a', 'a1'), job('a', 'a2'), job('b', 'b1'), job('a', 'a3')]);
  expect(results).toEqual(['a1', 'a2', 'b1', 'a3']);
  const a = log.filter((l) => l.startsWith('a'));
  expect(a).toEqual(['a1 start', 'a1 end', 'a2 start', 'a2 end', 'a3 start', 'a3 end']);
  expect(log.indexOf('b1 start')).toBeLessThan(log.indexOf('a1 end'));
  expect(lock.isHeld('a')).toBe(false);
});

test('a failing holder releases the key and its error reaches only its caller', async () => {
  const lock = new KeyedLock();
  const failing = lock.run('k', async () => {
    throw new Error('boom');
  });
  const next = lock.run('k', () => 'ok');
  await expect(failing).rejects.toThrow('boom');
  await expect(next).resolves.toBe('ok');
  expect(lock.isHeld('k')).toBe(false);
});

test('isHeld is true while work runs or waits', async () => {
  const lock = new KeyedLock();
  let finish!: () => void;
  const running = lock.run('k', () => new Promise<void>((r) => (finish = r)));
  expect(lock.isHeld('k')).toBe(true);
  finish();
  await running;
  expect(lock.isHeld('k')).toBe(false);
});
