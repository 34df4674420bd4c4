// A caller that opens a connection and then sends nothing, or its headers or body a byte now and
// then, is answered 408 and cut off once the request timeout has passed, on the extender's port and
// the REST API's. node's default is 300 s: ports anyone may reach could be kept busy that long per
// socket. Time spent answering is not the caller's: a bind that takes longer than the timeout to
// decide is still answered.
import { connect } from 'node:net';
import { World } from './world.js';

const CONFIG = [
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.10~10.0.100.20'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
  },
];
const TIMEOUT_MS = 1000;

let world: World;
beforeEach(async () => {
  world = await World.start({ config: CONFIG, requestTimeoutMs: TIMEOUT_MS });
  await world.node('a1', '10.0.1.11');
});
afterEach(async () => {
  await world.stop();
});

/** Opens a connection to `url`, writes `sent`, then waits: what came back and when it closed. */
function stall(url: string, sent: string): Promise<{ answer: string; closedAfterMs: number }> {
  const { hostname, port } = new URL(url);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(sent));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve({ answer, closedAfterMs: Date.now() - started }));
  });
}

const STALLS: [string, (path: string) => string][] = [
  ['a connection that never sends a request', () => ''],
  [
    'headers that never end',
    (path) => `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n`,
  ],
  [
    'a body that never ends',
    (path) =>
      `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"Pod"`,
  ],
];

describe.each([
  ['the extender port', () => world.floatip.extenderUrl, '/v1/filter'],
  ['the REST API port', () => world.floatip.apiUrl, '/v1/ip'],
])('%s', (_port, url, path) => {
  test.each(STALLS)(
    '%s is answered 408 and closed once the request timeout has passed',
    async (_what, sent) => {
      const { answer, closedAfterMs } = await stall(url(), sent(path));
      expect(answer).toMatch(
        /^HTTP\/1\.1 408 Request Timeout\r\n[^]*\r\n\r\nrequest timeout: the request did not arrive in time$/,
      );
      expect(answer).toContain('Connection: close');
      // node checks the deadlines every quarter of the timeout
      expect(closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(closedAfterMs).toBeLessThan(TIMEOUT_MS * 3);
    },
  );
});

test('a bind whose decision takes longer than the request timeout is still answered (the time is floatip’s, not the caller’s)', async () => {
  const pod = await world.pod({ name: 'p1' });
  world.server.faults.delayNext({ verb: 'create', resource: 'floatingips' }, TIMEOUT_MS * 2);
  const started = Date.now();
  const res = await world.post('bind', {
    PodName: 'p1',
    PodNamespace: pod.metadata!.namespace,
    PodUID: pod.metadata!.uid,
    Node: 'a1',
  });
  expect(Date.now() - started).toBeGreaterThan(TIMEOUT_MS * 2);
  expect([res.status, res.json]).toEqual([200, { Error: '' }]);
  await world.expectConsistent();
});

describe.each([
  ['the extender port', () => world.floatip.extenderUrl, '/healthz'],
  ['the REST API port', () => world.floatip.apiUrl, '/v1/subnets'],
])('%s', (_port, url, path) => {
  test('a kept-alive connection idle past node’s 5 s default still serves the next request on it', async () => {
    // kube-scheduler's Go client keeps idle connections 90 s and reuses them: closed under it, a
    // request it sends as the server closes (a replica paused a moment, then resumed) is reset,
    // and a POST is not sent again
    const { hostname, port } = new URL(url());
    const socket = connect(Number(port), hostname);
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const whole = () => {
      const end = answer.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(answer)?.[1];
      return end >= 0 && length !== undefined && answer.length >= end + 4 + Number(length);
    };
    const ask = async () => {
      answer = '';
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
      for (let i = 0; i < 100 && !whole(); i++) await new Promise((r) => setTimeout(r, 20));
      return answer.split('\r\n')[0];
    };
    try {
      expect(await ask()).toBe('HTTP/1.1 200 OK');
      await new Promise((r) => setTimeout(r, 6000));
      expect(socket.destroyed).toBe(false);
      expect(await ask()).toBe('HTTP/1.1 200 OK');
    } finally {
      socket.destroy();
      await closed;
    }
  }, 15_000);
});
