// A bind that reaches a follower is decided by the leader; when no leader decides it (none known,
// unreachable, the deadline passed) the follower answers the scheduler 503 and the bind fails. No
// replica's handler ran, so the follower that the scheduler called counts it, or FloatipBindFailing
// stays quiet while every bind landing on a follower fails.
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ExtenderVerbs, extenderApp } from '../../src/extender/http.js';
import { FORWARDED_BY_HEADER, type ForwardedAnswer } from '../../src/extender/leader-forward.js';
import { Allocator } from '../../src/ipam/index.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics/metrics.js';

const NOT_DECIDED: ForwardedAnswer = {
  status: 503,
  body: Buffer.from('{"Error":"no leader decided this bind within 3000 ms (no leader is known); retry"}'),
};
const DECIDED: ForwardedAnswer = {
  status: 200,
  body: Buffer.from('{"Error":"no enough available ips left"}'),
};

async function bindThroughFollower(answer: ForwardedAnswer, forwardedBy?: string) {
  const metrics = new Metrics({ allocator: new Allocator() });
  const server: Server = createServer(
    extenderApp({} as ExtenderVerbs, silentLogger(), { metrics, route: () => Promise.resolve(answer) }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/bind`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(forwardedBy ? { [FORWARDED_BY_HEADER]: forwardedBy } : {}),
      },
      body: JSON.stringify({ PodName: 'p', PodNamespace: 'ns', PodUID: 'u', Node: 'n1' }),
    });
    expect(res.status).toBe(answer.status);
    const text = await metrics.registry.metrics();
    return text
      .split('\n')
      .filter((l) =>
        /^floatip_allocation_failures_total|^floatip_extender_request_duration_seconds_count/.test(l),
      );
  } finally {
    server.close();
  }
}

test('a bind no leader decided is counted as a failed bind by the replica the scheduler called', async () => {
  expect(await bindThroughFollower(NOT_DECIDED)).toEqual([
    'floatip_extender_request_duration_seconds_count{verb="bind",outcome="failure"} 1',
    'floatip_allocation_failures_total{verb="bind",reason="no-leader"} 1',
  ]);
});

test('a bind the leader decided is counted by the leader only, and a forwarded one by its first hop', async () => {
  expect(await bindThroughFollower(DECIDED)).toEqual([]);
  expect(await bindThroughFollower(NOT_DECIDED, 'replica-1')).toEqual([]);
});
