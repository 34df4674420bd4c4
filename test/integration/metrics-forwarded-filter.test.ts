// A follower that refuses a pod for later asks the leader, which answers (and counts) the filter
// again; the follower relays that answer. The refusal is one scheduler call: counted by the leader
// only, or the Refusals panel (a sum over replicas) shows every refusal that reached a follower
// twice, and the filter's latency histogram counts the call twice.
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ExtenderVerbs, extenderApp } from '../../src/extender/http.js';
import { Allocator } from '../../src/ipam/index.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics/metrics.js';

const POD = {
  metadata: { name: 'p', namespace: 'ns', uid: 'u' },
  spec: { containers: [{ name: 'c', resources: { limits: { 'tke.cloud.tencent.com/eni-ip': '1' } } }] },
};
const LEADERS = '{"Nodes":null,"NodeNames":[],"FailedNodes":{"n1":"leader says"},"Error":""}';

async function follower(
  refusal: { error: string; failedNodes: Record<string, string> },
  leaderAnswers: boolean,
) {
  const metrics = new Metrics({ allocator: new Allocator() });
  const extender = {
    filter: () => ({ nodeNames: [], ...refusal }),
  } as unknown as ExtenderVerbs;
  const server: Server = createServer(
    extenderApp(extender, silentLogger(), {
      metrics,
      refusedForLater: () => true,
      askLeader: () =>
        Promise.resolve(leaderAnswers ? { status: 200, body: Buffer.from(LEADERS) } : undefined),
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/filter`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Pod: POD, NodeNames: ['n1'] }),
    });
    return { answer: await res.text(), text: await metrics.registry.metrics() };
  } finally {
    server.close();
  }
}

const counted = (text: string) =>
  text
    .split('\n')
    .filter((l) =>
      /^floatip_allocation_failures_total|^floatip_extender_request_duration_seconds_count/.test(l),
    );

test.each([
  ['no free address', { error: '', failedNodes: { n1: 'FloatingIPPlugin:NoFIPLeft' } }],
  [
    'an app limit',
    { error: 'deployment app has allocated 1 ips with replicas of 1, wait for releasing', failedNodes: {} },
  ],
])(
  'a refusal (%s) the leader answered is counted by the leader, not again by the follower',
  async (_, refusal) => {
    const { answer, text } = await follower(refusal, true);
    expect(answer).toBe(LEADERS);
    expect(counted(text)).toEqual([]);
  },
);

test('a refusal the follower answers itself (the leader unreachable) is counted by the follower', async () => {
  const { answer, text } = await follower(
    { error: '', failedNodes: { n1: 'FloatingIPPlugin:NoFIPLeft' } },
    false,
  );
  expect(answer).toContain('NoFIPLeft');
  expect(counted(text)).toEqual([
    'floatip_extender_request_duration_seconds_count{verb="filter",outcome="success"} 1',
    'floatip_allocation_failures_total{verb="filter",reason="no-free-ip"} 1',
  ]);
});
