// The buffers full-Node calls use again: what is given back serves the next call of about its size;
// what is too large, or beyond the few kept, is left to the garbage collector.
import { BodyBuffers } from '../../../src/extender/body-buffers.js';

describe('BodyBuffers', () => {
  test('a buffer given back serves the next call that fits in it, and only one call at a time', () => {
    const buffers = new BodyBuffers();
    const first = buffers.take(100_000);
    expect(first.length).toBeGreaterThanOrEqual(100_000);
    buffers.give(first);
    const again = buffers.take(90_000);
    expect(again === first).toBe(true);
    // while taken it is nobody else's
    expect(buffers.take(90_000) === first).toBe(false);
  });

  test('a call larger than every buffer kept gets a new one', () => {
    const buffers = new BodyBuffers();
    const small = buffers.take(1000);
    buffers.give(small);
    const large = buffers.take(small.length + 1);
    expect(large === small).toBe(false);
    expect(large.length).toBeGreaterThan(small.length);
  });

  test('buffers over the largest size are never kept', () => {
    const buffers = new BodyBuffers(4, 2 ** 20);
    const huge = buffers.take(2 ** 20 + 1);
    expect(huge.length).toBe(2 ** 20 + 1);
    buffers.give(huge);
    expect(buffers.take(1000) === huge).toBe(false);
  });

  test('at most `keep` buffers are kept, the largest of them', () => {
    const buffers = new BodyBuffers(2);
    const sizes = [2 ** 16, 2 ** 17, 2 ** 18];
    const taken = sizes.map((size) => buffers.take(size));
    for (const buffer of taken) buffers.give(buffer);
    expect(buffers.take(2 ** 17) === taken[1]).toBe(true);
    expect(buffers.take(2 ** 17) === taken[2]).toBe(true);
    expect(buffers.take(2 ** 16) === taken[0]).toBe(false);
  });

  test('a lease hands out exactly the bytes asked for and gives its buffers back at its end', () => {
    const buffers = new BodyBuffers();
    const lease = buffers.lease();
    const body = lease.take(117_000);
    const answer = lease.take(117_000);
    expect([body.length, answer.length]).toEqual([117_000, 117_000]);
    expect(body.buffer === answer.buffer).toBe(false);
    lease.end();
    const next = buffers.lease();
    const reused = [next.take(100_000).buffer, next.take(100_000).buffer];
    expect(reused.filter((b) => b === body.buffer || b === answer.buffer).length).toBe(2);
    expect(reused[0] === reused[1]).toBe(false);
  });
});
