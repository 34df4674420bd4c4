// Every deliberate release leaves an Event on its FloatingIP object and a structured log line.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { type Allocation, NotAllocatedError, ReleasePolicy } from '../../../src/ipam/index.js';
import type { EventType, InvolvedObject } from '../../../src/kube/events.js';
import { RELEASED_EVENT_REASON, releaseAudited } from '../../../src/store/release-audit.js';

function sink() {
  const events: { object: InvolvedObject; type: EventType; reason: string; message: string }[] = [];
  const lines: Record<string, unknown>[] = [];
  const log = pino(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    }),
  );
  return {
    events,
    lines,
    sink: {
      events: {
        record: (object: InvolvedObject, type: EventType, reason: string, message: string) =>
          events.push({ object, type, reason, message }),
      },
      log,
    },
  };
}

const held: Allocation = {
  ip: 'fd00:100::7',
  family: 6,
  key: 'sts_ns1_web_web-0',
  policy: ReleasePolicy.Never,
  nodeName: 'node-1',
  podUid: 'u1',
  updateTime: 0,
  reserved: false,
};

test('a release by the lifecycle controller: conditional on the version decided on, the Event on the FloatingIP object, and the log line', async () => {
  const { events, lines, sink: s } = sink();
  const calls: unknown[][] = [];
  const store = {
    release: async (...args: unknown[]) => {
      calls.push(args);
      return held;
    },
  };
  const released = await releaseAudited(
    store,
    s,
    held.ip,
    { key: held.key, podUid: 'u1' },
    {
      actor: 'floatip lifecycle',
      via: 'pod-gone',
      reason: 'deletedAndScaledDownAppPod',
    },
    42n,
  );
  expect(released).toBe(held);
  expect(calls).toEqual([[held.ip, { key: held.key, podUid: 'u1' }, 42n]]);
  expect(events).toEqual([
    {
      object: {
        apiVersion: 'galaxy.k8s.io/v1alpha1',
        kind: 'FloatingIP',
        name: 'fd00-100--7',
        namespace: '',
      },
      type: 'Normal',
      reason: RELEASED_EVENT_REASON,
      message:
        'released fd00:100::7 from sts_ns1_web_web-0 (by floatip lifecycle via pod-gone): deletedAndScaledDownAppPod',
    },
  ]);
  expect(lines).toEqual([
    expect.objectContaining({
      audit: 'release',
      ip: held.ip,
      key: held.key,
      podUid: 'u1',
      nodeName: 'node-1',
      actor: 'floatip lifecycle',
      via: 'pod-gone',
      reason: 'deletedAndScaledDownAppPod',
    }),
  ]);
});

test('a refused release is not audited as one', async () => {
  const { events, lines, sink: s } = sink();
  const store = {
    release: async (): Promise<Allocation> => {
      throw new NotAllocatedError(held.ip);
    },
  };
  await expect(
    releaseAudited(store, s, held.ip, { key: held.key }, { actor: 'a', via: 'rest', reason: 'r' }),
  ).rejects.toThrow(NotAllocatedError);
  expect([events, lines]).toEqual([[], []]);
});
