// Requests pipelined on one connection (several in one write), as a broken proxy or a fuzzer sends
// them, on a port opened as floatip opens its ports (ports.ts): every request gets its own answer in
// order, a refusal of bad bytes comes after the answers to the requests before them and says why;
// and a request target in absolute form, as a proxy writes it, is routed by its path.
import { once } from 'node:events';
import type { Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { type ExtenderVerbs, extenderApp } from '../../src/extender/http.js';
import { InFlight } from '../../src/extender/in-flight.js';
import { silentLogger } from '../../src/log.js';
import { MAX_ANSWERING } from '../../src/pipeline.js';
import { close, listen } from '../../src/ports.js';
import { passingFilter } from './helpers.js';

let server: Server;
let port: number;
/** Requests handled so far, and the most handled at once, by /big. */
let handled = 0;
let answering = 0;
let mostAnswering = 0;
beforeEach(async () => {
  handled = answering = mostAnswering = 0;
  const app = extenderApp(passingFilter, silentLogger());
  // the extender's filter, and a path whose answer takes a while (a bind deciding)
  server = await listen(
    'test',
    (req, res) => {
      if (req.url?.startsWith('/big')) {
        handled++;
        mostAnswering = Math.max(mostAnswering, ++answering);
        res.once('finish', () => answering--);
        // an answer made a moment later, as a bind's or a REST listing's
        setTimeout(() => res.end(`${req.url} `.padEnd(64 * 1024, '.')), 1);
        return;
      }
      if (!req.url?.startsWith('/slow')) return app(req, res);
      setTimeout(() => res.end(`slow ${req.url}`), 100);
    },
    { host: '127.0.0.1', requestTimeoutMs: 5000 },
    0,
  );
  port = (server.address() as AddressInfo).port;
});
afterEach(() => close(server));

/** Writes `sent` in one write and returns all that came back until the server closed or `waitMs`. */
async function exchange(sent: string, waitMs = 2000): Promise<{ answer: string; closed: boolean }> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
  socket.write(sent);
  const closed = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), waitMs);
    socket.on('close', () => (clearTimeout(timer), resolve(true)));
  });
  socket.destroy();
  return { answer, closed };
}

const statuses = (answer: string) => [...answer.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
const filterBody = JSON.stringify({ Pod: { metadata: { name: 'p' } }, NodeNames: ['a1'] });
const filter =
  'POST /v1/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
  `Content-Length: ${filterBody.length}\r\n\r\n${filterBody}`;
const DUPLICATE_LENGTH = 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n';
const REFUSAL = 'bad request: Duplicate Content-Length';

test.each([
  ['a filter (answered at once)', filter],
  ['an answer that takes a while', 'GET /slow/1 HTTP/1.1\r\nHost: x\r\n\r\n'],
  ['a health check', 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'],
])(
  '%s pipelined before bad bytes is answered, then the refusal says why and the connection closes',
  async (_what, first) => {
    const { answer, closed } = await exchange(first + DUPLICATE_LENGTH);
    expect(statuses(answer)).toEqual(['200', '400']);
    expect(answer.indexOf(REFUSAL)).toBeGreaterThan(answer.indexOf('HTTP/1.1 400'));
    expect(answer.endsWith(REFUSAL)).toBe(true);
    expect(closed).toBe(true);
  },
);

test('answers to several pipelined requests come in order, each whole, before the refusal after them', async () => {
  const { answer } = await exchange(
    'GET /slow/a HTTP/1.1\r\nHost: x\r\n\r\n' +
      filter +
      'GET /slow/b HTTP/1.1\r\nHost: x\r\n\r\n' +
      'GET /nope HTTP/1.1\r\nHost: x\r\n\r\n' +
      DUPLICATE_LENGTH,
  );
  expect(statuses(answer)).toEqual(['200', '200', '200', '404', '400']);
  const order = ['slow /slow/a', '"NodeNames":["a1"]', 'slow /slow/b', 'no route GET /nope', REFUSAL];
  const at = order.map((text) => answer.indexOf(text));
  expect(at.every((i) => i >= 0)).toBe(true);
  expect(at).toEqual([...at].sort((a, b) => a - b));
});

describe('Expect: 100-continue behind other requests of the connection', () => {
  const expecting = (body: string) =>
    'POST /v1/filter HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\n' +
    `Content-Length: ${body.length}\r\n\r\n`;

  test('a caller that waits for the 100 gets it in its turn, after the answer before it, and then its answer', async () => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    await once(socket, 'connect');
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      if (answer.includes('100 Continue\r\n\r\n') && !answer.includes('NodeNames')) socket.write(filterBody);
    });
    socket.write('GET /slow/a HTTP/1.1\r\nHost: x\r\n\r\n' + expecting(filterBody));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    socket.destroy();
    expect(statuses(answer)).toEqual(['200', '100', '200']);
    expect(answer.indexOf('slow /slow/a')).toBeLessThan(answer.indexOf('100 Continue'));
    expect(answer.endsWith('"Error":""}')).toBe(true);
  });

  test('a body sent along without waiting is answered whole, never with a 100 inside its answer', async () => {
    // written while the answer before it was, the 100 was put after the 200's head (node writes a
    // queued answer's head in front of what it holds), in the middle of the answer
    const { answer, closed } = await exchange(
      'GET /slow/a HTTP/1.1\r\nHost: x\r\n\r\n' + expecting(filterBody) + filterBody,
    );
    expect(statuses(answer)).toEqual(['200', '200']);
    expect(answer).toMatch(/\r\n\r\n\{"Nodes":null,"NodeNames":\["a1"\][^]*"Error":""\}$/);
    // no 100 was sent: node, as Go's server, keeps no such connection
    expect(closed).toBe(true);
  });

  test('one refused unread behind another is answered in its turn, with no 100', async () => {
    const { answer, closed } = await exchange(
      'GET /slow/a HTTP/1.1\r\nHost: x\r\n\r\n' +
        'POST /v1/filter HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 999999999999\r\n\r\n',
    );
    expect(statuses(answer)).toEqual(['200', '413']);
    expect(answer).not.toContain('100 Continue');
    expect(closed).toBe(true);
  });
});

test('bad bytes inside a request’s own body are that request’s refusal', async () => {
  const { answer, closed } = await exchange(
    'POST /v1/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
  );
  expect(statuses(answer)).toEqual(['400']);
  expect(answer).toMatch(/\r\n\r\nbad request: Invalid character in chunk size$/);
  expect(closed).toBe(true);
});

const big = (i: number) => `GET /big/${i} HTTP/1.1\r\nHost: x\r\n\r\n`;

test('pipelined requests are handled a few at a time, and all are answered in order', async () => {
  const n = 100;
  const { answer } = await exchange(Array.from({ length: n }, (_, i) => big(i)).join(''), 1500);
  expect(statuses(answer)).toEqual(Array(n).fill('200'));
  const order = Array.from({ length: n }, (_, i) => answer.indexOf(`/big/${i} `));
  expect(order).toEqual([...order].sort((a, b) => a - b));
  expect(mostAnswering).toBeLessThanOrEqual(MAX_ANSWERING);
});

test('a caller that pipelines and never reads its answers does not have them all made and held', async () => {
  // node parsed every request received and handed it on: each answer made and queued in memory
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  socket.pause();
  const n = 2000;
  socket.write(Array.from({ length: n }, (_, i) => big(i)).join(''));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  socket.destroy();
  // what the kernel's buffers took, a few MiB of answers, and no more
  expect(handled).toBeLessThan(n / 4);
});

test.each([
  ['POST http://floatip:9040/v1/filter', '200'],
  ['POST HTTP://floatip/v1/filter?x=1', '200'],
  ['GET http://floatip/healthz', '200'],
  ['POST http://floatip', '404'],
])(
  'a request target in absolute form (%s), as a proxy sends it, is routed by its path',
  async (line, status) => {
    const body = line.startsWith('POST') ? filterBody : '';
    const { answer } = await exchange(
      `${line} HTTP/1.1\r\nHost: floatip\r\nContent-Type: application/json\r\nConnection: close\r\n` +
        `Content-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(statuses(answer)).toEqual([status]);
    if (status === '404') expect(answer).toContain('{"Error":"no route POST /"}');
  },
);

test.each([
  ['GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n', 'HTTP/2.0'],
  ['GET /healthz\r\nHost: x\r\n\r\n', 'HTTP/0.9'],
  ['PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'HTTP/2.0'],
])(
  '%j is a 505 that says which version this port speaks, and the connection closes',
  async (sent, version) => {
    const { answer, closed } = await exchange(sent);
    expect(answer).toMatch(/^HTTP\/1\.1 505 HTTP Version Not Supported\r\n/);
    expect(answer).toContain(`\r\n\r\nhttp version not supported: ${version}; this port speaks HTTP/1.1`);
    expect(closed).toBe(true);
  },
);

test('binds pipelined by a caller that leaves free their bodies’ bytes, and do not hold a shutdown', async () => {
  // node closes only the answer it is writing: those queued behind it never closed, and their
  // bodies stayed counted against the budget, their requests in flight
  const inFlight = new InFlight();
  const slowBind = {
    bind: () => new Promise((resolve) => setTimeout(() => resolve(''), 200)),
  } as unknown as ExtenderVerbs;
  const app = extenderApp(
    slowBind,
    silentLogger(),
    { bodyBudgetBytes: 2500, smallBodyReserveBytes: 0 },
    inFlight,
  );
  const binds = await listen('binds', app, { host: '127.0.0.1', requestTimeoutMs: 5000 }, 0);
  try {
    const at = (binds.address() as AddressInfo).port;
    const bind = (pad: number) => {
      const body = JSON.stringify({
        PodName: 'p',
        PodNamespace: 'ns',
        PodUID: 'u',
        Node: 'n',
        Pad: 'x'.repeat(pad),
      });
      return `POST /v1/bind HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    };
    const socket = connect(at, '127.0.0.1');
    socket.on('error', () => undefined);
    await once(socket, 'connect');
    socket.write(bind(10) + bind(1000) + bind(1000));
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const drained = await Promise.race([
      inFlight.drained().then(() => true),
      new Promise((r) => setTimeout(() => r(false), 500)),
    ]);
    expect(drained).toBe(true);
    // the budget has room again for a bind
    const res = await fetch(`http://127.0.0.1:${at}/v1/bind`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ PodName: 'p', PodNamespace: 'ns', PodUID: 'u', Node: 'n' }),
    });
    expect([res.status, await res.text()]).toEqual([200, '{"Error":""}']);
  } finally {
    await close(binds);
  }
});

test('a Host after node’s 2000th header is still read: node dropped it, and answered 400 for want of one', async () => {
  const headers = Array.from({ length: 2100 }, (_, i) => `X-${i}: a\r\n`).join('');
  const { answer } = await exchange(
    `GET /healthz HTTP/1.1\r\n${headers}Host: x\r\nConnection: close\r\n\r\n`,
  );
  expect(statuses(answer)).toEqual(['200']);
});

test.each([
  ['its headers', 'POST /v1/filter HTTP/1.1\r\nHost: x\r\nContent-Ty'],
  ['its body', 'POST /v1/filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"Pod"'],
])('a caller that closes its side before %s came whole is told so', async (_what, sent) => {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
  socket.end(sent);
  await once(socket, 'close');
  expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
  expect(answer).toMatch(/\r\n\r\nbad request: the connection was closed before the request was whole$/);
});
