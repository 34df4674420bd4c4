// Each port keeps at most so many connections open: past them a new connection is closed
// unanswered as it arrives (and told in the log, once per interval however many came), so that
// whoever reaches a port cannot take every file descriptor floatip needs for the API server.
import { connect, type Socket } from 'node:net';
import type { Server } from 'node:http';
import { close, connectionLimit, listen } from '../../src/ports.js';
import { capturedLog } from './helpers.js';
import { World } from './world.js';

const LIMITS = (soft: string) =>
  'Limit                     Soft Limit           Hard Limit           Units     \n' +
  'Max cpu time              unlimited            unlimited            seconds   \n' +
  `Max open files            ${soft}                1048576              files     \n` +
  'Max locked memory         8388608              8388608              bytes     \n';

test.each([
  ['20000', 2500],
  ['1024', 128],
  ['1048576', 4096],
  ['unlimited', 4096],
  ['64', 16],
])('a soft open-file limit of %s keeps %d connections per port', (soft, most) => {
  expect(connectionLimit(LIMITS(soft))).toBe(most);
});

test('without /proc/self/limits to read a port keeps 4,096', () => {
  expect(connectionLimit(undefined)).toBe(4096);
  expect(connectionLimit('nothing like it')).toBe(4096);
});

/** A connection to `url`, open; resolves once connected. */
function opened(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** What a new connection to `url` gets for `request`: the answer's text, or '' if closed unanswered. */
function answerTo(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    let answer = '';
    const socket = connect(Number(port), hostname, () => socket.write(request));
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
      if (answer.includes('\r\n\r\n')) socket.destroy();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(answer));
  });
}

const idle: Socket[] = [];
afterEach(() => {
  for (const s of idle.splice(0)) s.destroy();
});

describe('floatip with at most 3 connections per port', () => {
  let world: World;
  beforeEach(async () => {
    world = await World.start({
      config: [
        {
          nodeSubnets: ['10.0.1.0/24'],
          ips: ['10.0.100.10~10.0.100.20'],
          subnet: '10.0.100.0/24',
          gateway: '10.0.100.1',
        },
      ],
      maxConnectionsPerPort: 3,
    });
    await world.node('a1', '10.0.1.11');
  });
  afterEach(async () => {
    await world.stop();
  });

  test.each([
    [
      'the extender port',
      () => world.floatip.extenderUrl,
      'POST /v1/filter',
      JSON.stringify({ Pod: { metadata: { name: 'p', namespace: 'default' } }, NodeNames: ['a1'] }),
    ],
    ['the REST API port', () => world.floatip.apiUrl, 'GET /v1/ip?size=1', ''],
  ])(
    '%s: a fourth connection is closed unanswered while three are open, and answered once one closes',
    async (_port, url, line, body) => {
      const request = `${line} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      expect(await answerTo(url(), request)).toMatch(/^HTTP\/1\.1 200 /);
      for (let i = 0; i < 3; i++) idle.push(await opened(url()));
      expect(await answerTo(url(), request)).toBe('');
      idle.pop()?.destroy();
      // node counts the closed one out once it has seen it close
      let answer = '';
      for (let tries = 0; tries < 50 && answer === ''; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        answer = await answerTo(url(), request);
      }
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    },
  );
});

test('connections refused at the bound are told in one warning with their count, not one line each', async () => {
  const { log, lines } = capturedLog();
  const server: Server = await listen(
    'the test port',
    (_req, res) => res.end('ok'),
    { host: '127.0.0.1', requestTimeoutMs: 60_000, maxConnections: 2, log },
    0,
  );
  try {
    const { port } = server.address() as { port: number };
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 2; i++) idle.push(await opened(url));
    for (let i = 0; i < 6; i++) expect(await answerTo(url, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n')).toBe('');
    const told = lines.filter((l) => String(l.msg).includes('refused'));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ level: 40, port: 'the test port', refused: 1, open: 2 });
    expect(String(told[0]?.msg)).toMatch(
      /^the test port: refused 1 connection\(s\) unanswered, 2 being open/,
    );
  } finally {
    for (const s of idle.splice(0)) s.destroy();
    await close(server);
  }
});
