// Bodies read at once, over every connection: each is bounded, and so is their sum. A caller that
// opens connections and sends large bodies on each gets a 503 to retry once the bodies in flight
// reach the budget, instead of the process holding them all (six 200 MB filters held 1.7 GB). What
// counts is what has arrived, and small bodies (the scheduler's) have a reserve past the budget.
import { once } from 'node:events';
import { type AddressInfo, connect } from 'node:net';
import { type Server, createServer } from 'node:http';
import { extenderApp } from '../../src/extender/http.js';
import { silentLogger } from '../../src/log.js';
import { passingFilter } from './helpers.js';

let server: Server;
let port: number;

beforeAll(async () => {
  const extender = passingFilter;
  server = createServer(
    extenderApp(extender, silentLogger(), {
      bodyLimitBytes: 1000,
      bodyBudgetBytes: 1500,
      smallBodyBytes: 100,
      smallBodyReserveBytes: 300,
    }),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A filter whose body is `size` bytes, of which the first `sent` (all but its last) are sent now. */
async function started(size: number, sent = size - 1) {
  const body = JSON.stringify({ Pod: { metadata: { name: 'p' } }, NodeNames: ['a1'] }).padEnd(size, ' ');
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const ended = new Promise<string>((resolve) => socket.on('close', () => resolve(text)));
  await once(socket, 'connect');
  socket.write(`POST /v1/filter HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: ${size}\r\n\r\n`);
  socket.write(body.slice(0, sent));
  return {
    answer: () => text,
    finish: async () => {
      socket.write(body.slice(sent));
      return ended;
    },
  };
}

const statusOf = (answer: string) => answer.split('\r\n')[0];
const bodyOf = (answer: string) => answer.slice(answer.indexOf('\r\n\r\n') + 4);

test('B1 past the budget a body is a 503 to retry, at once; the bodies within it are answered, and then room is made again', async () => {
  const first = await started(900);
  await new Promise((r) => setTimeout(r, 100));
  // refused once what has arrived passes the budget
  const second = await started(900);
  const refused = await second.finish();
  expect(statusOf(refused)).toBe('HTTP/1.1 503 Service Unavailable');
  // both bodies' bytes so far (the last byte may have come before the refusal)
  expect((JSON.parse(bodyOf(refused)) as { Error: string }).Error).toMatch(
    /^too many request bodies at once: 179[89] bytes are being read, of at most 1500; retry$/,
  );
  // streamed (chunked): refused once the bytes in flight pass the budget
  const res = await fetch(`http://127.0.0.1:${port}/v1/filter`, {
    method: 'POST',
    body: new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(' '.repeat(700)));
        controller.close();
      },
    }),
    duplex: 'half',
  } as RequestInit);
  expect(res.status).toBe(503);
  // the first was never at risk
  expect(statusOf(await first.finish())).toBe('HTTP/1.1 200 OK');
  // its bytes are given back: two bodies that fit side by side are both answered
  const [a, b] = [await started(700), await started(700)];
  expect((await Promise.all([a.finish(), b.finish()])).map(statusOf)).toEqual([
    'HTTP/1.1 200 OK',
    'HTTP/1.1 200 OK',
  ]);
});

test('B2 a body counts for what has arrived: connections that announce the largest bodies and send nothing hold no budget', async () => {
  const idle = [await started(1000, 1), await started(1000, 1)];
  const filter = await started(900);
  expect(statusOf(await filter.finish())).toBe('HTTP/1.1 200 OK');
  for (const c of idle) expect(statusOf(await c.finish())).toBe('HTTP/1.1 200 OK');
});

test('B3 large bodies that spend the budget leave small ones their reserve', async () => {
  const large = [await started(800), await started(700)];
  await new Promise((r) => setTimeout(r, 100));
  const small = await started(90);
  expect(statusOf(await small.finish())).toBe('HTTP/1.1 200 OK');
  const medium = await started(200);
  expect(statusOf(await medium.finish())).toBe('HTTP/1.1 503 Service Unavailable');
  for (const c of large) expect(statusOf(await c.finish())).toBe('HTTP/1.1 200 OK');
});
