// Bodies read at once, over every connection: each is bounded, and so is their sum. A caller that
// opens connections and sends large bodies on each gets a 503 to retry once the bodies in flight
// reach the budget, instead of the process holding them all (six 200 MB filters held 1.7 GB).
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
    extenderApp(extender, silentLogger(), { bodyLimitBytes: 1000, bodyBudgetBytes: 1500 }),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A filter whose body is `size` bytes, of which all but its last byte are sent now. */
async function started(size: number) {
  const body = JSON.stringify({ Pod: { metadata: { name: 'p' } }, NodeNames: ['a1'] }).padEnd(size, ' ');
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const ended = new Promise<string>((resolve) => socket.on('close', () => resolve(text)));
  await once(socket, 'connect');
  socket.write(`POST /v1/filter HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: ${size}\r\n\r\n`);
  socket.write(body.slice(0, -1));
  return {
    answer: () => text,
    finish: async () => {
      socket.write(body.slice(-1));
      return ended;
    },
  };
}

const statusOf = (answer: string) => answer.split('\r\n')[0];
const bodyOf = (answer: string) => answer.slice(answer.indexOf('\r\n\r\n') + 4);

test('B1 past the budget a body is a 503 to retry, at once; the bodies within it are answered, and then room is made again', async () => {
  const first = await started(900);
  await new Promise((r) => setTimeout(r, 100));
  // announced: refused before any of it is read
  const second = await started(900);
  const refused = await second.finish();
  expect(statusOf(refused)).toBe('HTTP/1.1 503 Service Unavailable');
  expect(JSON.parse(bodyOf(refused))).toEqual({
    Error: 'too many request bodies at once: 900 bytes are being read, of at most 1500; retry',
  });
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
