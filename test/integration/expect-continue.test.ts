// `Expect: 100-continue` on both ports, over raw sockets, as curl and Go's client send it for a large
// body: the caller sends its headers and waits for `100 Continue` before its body. Go's server,
// galaxy's, sends the 100 only when a handler reads the body, so a request refused without reading
// it (too large, no such path, the wrong method, the wrong type) gets its refusal and never a 100:
// its caller never sends the body. node sent every such request a 100, then refused it.
import { once } from 'node:events';
import { connect } from 'node:net';
import { type ExtenderVerbs, extenderApp } from '../../src/extender/http.js';
import { silentLogger } from '../../src/log.js';
import { INBOUND_REQUEST_TIMEOUT_MS, close, listen, urlOf } from '../../src/ports.js';
import { World } from './world.js';

const CONFIG = [
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.2~10.0.100.20'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
  },
];

let world: World;
beforeAll(async () => {
  world = await World.start({ config: CONFIG });
});
afterAll(() => world.checkAndStop());

const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';

interface Exchange {
  /** All that came back until the server closed the connection or `waitMs` passed. */
  readonly answer: string;
  readonly closed: boolean;
  /** Whether the body was sent (only after a 100, when there is one to send). */
  readonly sentBody: boolean;
}

/**
 * Sends `head` and waits; sends `body` once a 100 comes, as a client that expects one does (and
 * never otherwise).
 */
async function exchange(url: string, head: string, body?: string, waitMs = 3000): Promise<Exchange> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  let answer = '';
  let sentBody = false;
  socket.on('data', (chunk: Buffer) => {
    answer += chunk.toString('latin1');
    if (body !== undefined && !sentBody && answer.startsWith(CONTINUE)) {
      sentBody = true;
      socket.write(body);
    }
  });
  socket.write(head);
  const closed = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), waitMs);
    socket.on('close', () => (clearTimeout(timer), resolve(true)));
  });
  socket.destroy();
  return { answer, closed, sentBody };
}

const expecting = (method: string, path: string, length: number, more = '') =>
  `${method} ${path} HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: ${length}\r\n${more}\r\n`;
const JSON_TYPE = 'Content-Type: application/json\r\n';

/** The refusal as the caller reads it: the status line, whether it closed, and the body. */
const refusal = ({ answer, closed }: Exchange) => ({
  hundred: answer.includes('100 Continue'),
  status: answer.split('\r\n')[0],
  close: /\r\nConnection: close\r\n/i.test(answer),
  closed,
  body: answer.slice(answer.indexOf('\r\n\r\n') + 4),
});

test('X1 the extender port refuses what it will not read without a 100: over the limit, no such verb, another method', async () => {
  const url = world.floatip.extenderUrl;
  const cases: [string, string, string][] = [
    [
      expecting('POST', '/v1/filter', 2 ** 30, JSON_TYPE),
      '413 Payload Too Large',
      `{"Error":"the request body is over ${256 * 2 ** 20} bytes"}`,
    ],
    [
      expecting('POST', '/v1/bind', 100_000, JSON_TYPE),
      '413 Payload Too Large',
      `{"Error":"the request body is over ${64 * 1024} bytes"}`,
    ],
    [expecting('POST', '/v1/nope', 10, JSON_TYPE), '404 Not Found', '{"Error":"no route POST /v1/nope"}'],
    [
      expecting('PUT', '/v1/filter', 10, JSON_TYPE),
      '405 Method Not Allowed',
      '{"Error":"method not allowed: PUT /v1/filter takes POST"}',
    ],
    [expecting('POST', '/healthz', 10), '404 Not Found', '{"Error":"no route POST /healthz"}'],
  ];
  for (const [head, status, body] of cases)
    expect([head.split('\r\n')[0], refusal(await exchange(url, head, ' '.repeat(10)))]).toEqual([
      head.split('\r\n')[0],
      { hundred: false, status: `HTTP/1.1 ${status}`, close: true, closed: true, body },
    ]);
});

test('X2 the REST port refuses what it will not read without a 100: over the limit, no such route, another method, not JSON', async () => {
  const url = world.floatip.apiUrl!;
  const cases: [string, string, string][] = [
    [
      expecting('POST', '/v1/ip', 2 ** 30, JSON_TYPE),
      '413 Payload Too Large',
      `{"code":413,"message":"request entity too large: the request body is over ${5 * 2 ** 20} bytes"}`,
    ],
    // routed before the body's size is looked at, as go-restful routes
    [
      expecting('POST', '/v1/nope', 2 ** 30, JSON_TYPE),
      '404 Not Found',
      '{"code":404,"message":"not found: no route POST /v1/nope"}',
    ],
    [
      expecting('POST', '/v1/ip/10.0.100.2', 2 ** 30, JSON_TYPE),
      '405 Method Not Allowed',
      '{"code":405,"message":"method not allowed: POST /v1/ip/10.0.100.2"}',
    ],
    [
      expecting('POST', '/v1/pool', 2 ** 30, 'Content-Type: text/plain\r\n'),
      '415 Unsupported Media Type',
      '{"code":415,"message":"unsupported media type: POST /v1/pool takes application/json, not text/plain"}',
    ],
  ];
  for (const [head, status, body] of cases)
    expect([head.split('\r\n')[0], refusal(await exchange(url, head, ' '.repeat(10)))]).toEqual([
      head.split('\r\n')[0],
      { hundred: false, status: `HTTP/1.1 ${status}`, close: true, closed: true, body },
    ]);
});

test('X3 a body that will be read is asked for with a 100, on both ports, and answered once it comes', async () => {
  const filter = JSON.stringify({ Pod: { metadata: { name: 'p' } }, NodeNames: ['a1'] });
  const onExtender = await exchange(
    world.floatip.extenderUrl,
    expecting('POST', '/v1/filter', filter.length, `${JSON_TYPE}Connection: close\r\n`),
    filter,
  );
  expect([onExtender.sentBody, onExtender.closed]).toEqual([true, true]);
  expect(onExtender.answer.slice(CONTINUE.length)).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  expect(onExtender.answer).toContain('"NodeNames":["a1"]');
  const pool = JSON.stringify({ name: 'asked', size: 2 });
  const onRest = await exchange(
    world.floatip.apiUrl!,
    expecting('POST', '/v1/pool', pool.length, `${JSON_TYPE}Connection: close\r\n`),
    pool,
  );
  expect([onRest.sentBody, onRest.closed]).toEqual([true, true]);
  expect(onRest.answer.slice(CONTINUE.length)).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  expect(onRest.answer.endsWith('{"code":200,"message":""}')).toBe(true);
  expect((await world.rest('GET', '/v1/pool/asked')).json).toEqual({
    code: 200,
    message: '',
    pool: { name: 'asked', size: 2, preAllocateIP: false },
  });
});

test('X4 an Expect other than 100-continue is a 417 on both ports, in HTTP/1.0 as in HTTP/1.1, as Go answers it', async () => {
  for (const url of [world.floatip.extenderUrl, world.floatip.apiUrl!])
    for (const version of ['1.1', '1.0']) {
      const head =
        `POST /v1/bind HTTP/${version}\r\nHost: x\r\nExpect: 200-ok\r\n${JSON_TYPE}` +
        'Content-Length: 2\r\n\r\n{}';
      const answer = refusal(await exchange(url, head));
      expect([url, version, answer]).toEqual([
        url,
        version,
        {
          hundred: false,
          status: 'HTTP/1.1 417 Expectation Failed',
          close: true,
          closed: true,
          body: 'expectation failed: only 100-continue is understood, not "200-ok"',
        },
      ]);
    }
  // HTTP/1.0 has no 100: Go's server reads such a request's body at once, and so does floatip
  const filter = JSON.stringify({ Pod: { metadata: { name: 'p' } }, NodeNames: ['a1'] });
  const old = await exchange(
    world.floatip.extenderUrl,
    `POST /v1/filter HTTP/1.0\r\nExpect: 100-continue\r\n${JSON_TYPE}Content-Length: ${filter.length}\r\n\r\n${filter}`,
  );
  expect(old.answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  expect(old.answer).not.toContain('100 Continue');
});

test('X5 the extender port refuses unread a verb it cannot serve (no configuration in force); a bind a follower hands to the leader is still read', async () => {
  let decides = true;
  const forwarded: string[] = [];
  const app = extenderApp({} as ExtenderVerbs, silentLogger(), {
    notServingBecause: () => 'no configuration is in force',
    decidesHere: () => decides,
    route: (verb, body) => {
      if (decides) return Promise.resolve(undefined);
      forwarded.push(`${verb} ${body.toString()}`);
      return Promise.resolve({ status: 200, body: Buffer.from('{"Error":""}') });
    },
  });
  const at = { host: '127.0.0.1', requestTimeoutMs: INBOUND_REQUEST_TIMEOUT_MS };
  const server = await listen('the extender', app, at, 0);
  try {
    const url = urlOf('127.0.0.1', server);
    const refused = (paths: string[]) =>
      Promise.all(
        paths.map(async (path) => [
          path,
          refusal(await exchange(url, expecting('POST', path, 10, JSON_TYPE), ' '.repeat(10))),
        ]),
      );
    const notServing = (paths: string[]) =>
      paths.map((path) => [
        path,
        {
          hundred: false,
          status: 'HTTP/1.1 503 Service Unavailable',
          close: true,
          closed: true,
          body: '{"Error":"not serving: no configuration is in force"}',
        },
      ]);
    const all = ['/v1/filter', '/v1/prioritize', '/v1/bind', '/v1/preempt'];
    expect(await refused(all)).toEqual(notServing(all));
    // a body announced over the limit is its 413 first, as on the REST port
    const large = refusal(await exchange(url, expecting('POST', '/v1/bind', 100_000, JSON_TYPE), ' '));
    expect([large.hundred, large.status]).toEqual([false, 'HTTP/1.1 413 Payload Too Large']);
    // a follower: bind and preempt are the leader's to decide, and handing them on takes the body
    decides = false;
    const bind = JSON.stringify({ PodName: 'p', PodNamespace: 'ns', PodUID: 'u', Node: 'a1' });
    const handed = await exchange(
      url,
      expecting('POST', '/v1/bind', bind.length, `${JSON_TYPE}Connection: close\r\n`),
      bind,
    );
    expect([handed.sentBody, handed.closed]).toEqual([true, true]);
    expect(handed.answer.slice(CONTINUE.length)).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n\{"Error":""\}$/);
    expect(forwarded).toEqual([`bind ${bind}`]);
    // what a follower answers itself is refused unread as before
    expect(await refused(['/v1/filter'])).toEqual(notServing(['/v1/filter']));
  } finally {
    await close(server);
  }
});

test('X6 the REST port refuses unread a write sent to a replica that does not lead', async () => {
  const why = 'this replica does not lead; send changes to the leader';
  const url = await world.serveRest({ log: silentLogger(), notDecidingBecause: () => why }, { asPort: true });
  for (const [method, path] of [
    ['POST', '/v1/ip'],
    ['POST', '/v1/pool'],
    ['DELETE', '/v1/pool/p1'],
  ] as const) {
    const head = expecting(method, path, 10, JSON_TYPE);
    expect([method, path, refusal(await exchange(url, head, ' '.repeat(10)))]).toEqual([
      method,
      path,
      {
        hundred: false,
        status: 'HTTP/1.1 503 Service Unavailable',
        close: true,
        closed: true,
        body: `{"code":503,"message":"service unavailable: ${why}"}`,
      },
    ]);
  }
  // refusals that come first still do: a body announced over the limit, an unknown route
  expect(refusal(await exchange(url, expecting('POST', '/v1/ip', 2 ** 30, JSON_TYPE), ' ')).status).toBe(
    'HTTP/1.1 413 Payload Too Large',
  );
  expect(
    refusal(await exchange(url, expecting('POST', '/v1/nope', 10, JSON_TYPE), ' '.repeat(10))).status,
  ).toBe('HTTP/1.1 404 Not Found');
  // reads are answered
  expect((await fetch(`${url}/v1/pool/p1`)).status).toBe(404);
});
