// A follower's forwarded bind tells the leader how long the scheduler still waits, a little less
// than the follower itself waits, so that the leader's answer (a refusal included) is relayed, not
// lost to the follower's own timeout.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BUDGET_HEADER, FORWARDED_BY_HEADER, LeaderForward } from '../../../src/extender/leader-forward.js';

test('a forwarded bind carries the time left of its deadline, and the leader’s answer comes back as it was', async () => {
  const seen: IncomingHttpHeaders[] = [];
  const leader = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"Error":""}'));
  });
  await new Promise<void>((r) => leader.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(leader.address() as AddressInfo).port}`;
  const forward = new LeaderForward(
    { identity: 'r2', decides: () => false, leaderAddress: () => url },
    { deadlineMs: 1500 },
  );
  try {
    const answer = await forward.route('bind', Buffer.from('{}'), undefined);
    expect(answer?.status).toBe(200);
    expect(answer?.body.toString()).toBe('{"Error":""}');
    expect(seen[0]![FORWARDED_BY_HEADER]).toBe('r2');
    const budget = Number(seen[0]![BUDGET_HEADER]);
    expect(budget).toBeGreaterThan(1000);
    expect(budget).toBeLessThanOrEqual(1300);
  } finally {
    forward.close();
    leader.close();
  }
});
