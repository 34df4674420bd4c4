// The extender's HTTP face on its own: bodies over the limit are refused with 413 whether their size
// is declared or streamed, and the server keeps answering afterwards; full-Node answers are sent as
// they were made, however slowly their caller reads them.
import { deflateSync, gzipSync } from 'node:zlib';
import { once } from 'node:events';
import { connect, type AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { BodyBuffers } from '../../src/extender/body-buffers.js';
import { type ExtenderVerbs, extenderApp } from '../../src/extender/http.js';
import { silentLogger } from '../../src/log.js';
import { passingFilter } from './helpers.js';

describe('extender HTTP', () => {
  let server: Server;
  let url: string;

  beforeAll(async () => {
    // filter answers for a pod that does not want an address without asking anyone
    const extender = passingFilter;
    server = createServer(extenderApp(extender, silentLogger(), { bodyLimitBytes: 1000 }));
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/filter`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const small = JSON.stringify({ Pod: { metadata: { name: 'p' } }, NodeNames: ['a1'] });
  const big = JSON.stringify({ Pod: { metadata: { name: 'p' } }, NodeNames: Array(200).fill('node-x') });

  test('a POST to a path that is no verb is a 404, whatever its body', async () => {
    for (const path of ['/healthz', '/', '/v1/nope']) {
      const res = await fetch(new URL(path, url), { method: 'POST', body: '{not json' });
      expect([res.status, await res.json()]).toEqual([404, { Error: `no route POST ${path}` }]);
    }
  });

  test("a verb's path with another method is a 405 that names POST, as galaxy's framework answers", async () => {
    for (const [method, path] of [
      ['GET', '/v1/filter'],
      ['PUT', '/v1/bind'],
      ['DELETE', '/V1/Prioritize/'],
      ['PATCH', '/v1/preempt?x=1'],
      ['GET', '/v1/priority'],
    ] as const) {
      const res = await fetch(new URL(path, url), {
        method,
        ...(method === 'PUT' || method === 'PATCH' ? { body: '{not json' } : {}),
      });
      const bare = path.split('?')[0];
      expect([res.status, res.headers.get('allow'), await res.json()]).toEqual([
        405,
        'POST',
        { Error: `method not allowed: ${method} ${bare} takes POST` },
      ]);
    }
    const head = await fetch(new URL('/v1/filter', url), { method: 'HEAD' });
    expect([head.status, head.headers.get('allow')]).toEqual([405, 'POST']);
    // and the verbs still answer after them
    expect((await fetch(url, { method: 'POST', body: small })).status).toBe(200);
  });

  test("galaxy's /healthy takes GET alone: any other method, HEAD too, is a 405 that names GET, as galaxy's framework answers", async () => {
    const get = await fetch(new URL('/healthy', url));
    expect([get.status, await get.text()]).toEqual([200, 'ok']);
    for (const method of ['POST', 'DELETE', 'PATCH', 'OPTIONS']) {
      const res = await fetch(new URL('/healthy', url), { method });
      expect([method, res.status, res.headers.get('allow'), await res.json()]).toEqual([
        method,
        405,
        'GET',
        { Error: `method not allowed: ${method} /healthy takes GET` },
      ]);
    }
    const head = await fetch(new URL('/healthy', url), { method: 'HEAD' });
    expect([head.status, head.headers.get('allow')]).toEqual([405, 'GET']);
    // floatip's own probes keep HEAD
    expect((await fetch(new URL('/healthz', url), { method: 'HEAD' })).status).toBe(200);
  });

  test('JSON answers are Content-Type application/json, with no charset, as galaxy’s framework writes them', async () => {
    for (const [method, path, body] of [
      ['POST', '/v1/filter', small],
      ['POST', '/v1/filter', '{not json'],
      ['POST', '/v1/nope', '{}'],
      ['GET', '/v1/bind', undefined],
    ] as const) {
      const res = await fetch(new URL(path, url), { method, ...(body === undefined ? {} : { body }) });
      expect([method, path, res.headers.get('content-type')]).toEqual([method, path, 'application/json']);
    }
  });

  test('a gzip or deflate body is inflated, as galaxy read it; a mislabelled or unknown encoding is refused', async () => {
    const post = (body: Uint8Array | string, encoding: string) =>
      fetch(url, { method: 'POST', body, headers: { 'Content-Encoding': encoding } });
    for (const [encoding, body] of [
      ['gzip', gzipSync(small)],
      ['deflate', deflateSync(small)],
      ['identity', small],
    ] as const) {
      const res = await post(body, encoding);
      expect([res.status, await res.json()]).toEqual([200, expect.objectContaining({ NodeNames: ['a1'] })]);
    }
    const plain = await post(small, 'gzip');
    expect([plain.status, await plain.json()]).toEqual([
      400,
      { Error: 'bad request: gzip body: incorrect header check' },
    ]);
    const br = await post(small, 'br');
    expect([br.status, await br.json()]).toEqual([415, { Error: 'unsupported content encoding "br"' }]);
    // small on the wire, over the limit once inflated
    const bomb = await post(gzipSync(JSON.stringify({ Pod: {}, pad: ' '.repeat(100_000) })), 'gzip');
    expect([bomb.status, await bomb.json()]).toEqual([
      413,
      { Error: 'the request body is over 1000 bytes once inflated' },
    ]);
  });

  test('a body within the limit is answered', async () => {
    const res = await fetch(url, { method: 'POST', body: small });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toMatchObject({ NodeNames: ['a1'], Error: '' });
  });

  test('a declared size over the limit is a 413', async () => {
    const res = await fetch(url, { method: 'POST', body: big });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ Error: 'the request body is over 1000 bytes' });
  });

  test.each([
    ['POST /v1/filter', 413],
    ['POST /v1/nothing', 404],
    ['GET /v1/filter', 405],
  ])(
    'after %s answered %i the connection is closed, not kept to read the rest of a body announced at 1 TiB',
    async (line, status) => {
      const { port } = new URL(url);
      const socket = connect(Number(port), '127.0.0.1');
      socket.on('error', () => undefined);
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      await once(socket, 'connect');
      socket.write(`${line} HTTP/1.1\r\nHost: x\r\nContent-Length: ${2 ** 40}\r\n\r\n`);
      // the caller goes on sending what it announced; only the server can end this
      const filler = Buffer.alloc(64 * 1024, 0x20);
      const sending = setInterval(() => socket.writable && socket.write(filler), 10);
      try {
        const closed = await Promise.race([
          once(socket, 'close').then(() => true),
          sleep(5_000).then(() => false),
        ]);
        expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} [^]*\r\nConnection: close\r\n`));
        expect(closed).toBe(true);
      } finally {
        clearInterval(sending);
        socket.destroy();
      }
    },
  );

  test('a refusal of a request without a body keeps the connection for the next one', async () => {
    const res = await fetch(url, { method: 'GET' });
    expect(res.status).toBe(405);
    expect(res.headers.get('connection')).toBe('keep-alive');
  });

  test('a streamed body over the limit is a 413, and the server still answers', async () => {
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const res = await fetch(url, { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(413);
    const again = await fetch(url, { method: 'POST', body: small });
    expect(again.status).toBe(200);
  });
});

// Full-Node bodies and filter answers are written in buffers used again from call to call
// (body-buffers.ts): an answer still waiting for its caller to read it must not be overwritten by
// the next caller's request.
describe('extender HTTP, full Nodes', () => {
  let server: Server;
  let port: number;
  const filtered: string[] = [];

  beforeAll(async () => {
    // every node passes: the answer echoes the request's own node bytes
    const extender = {
      filter: (pod: { metadata?: { name?: string } }, nodes: unknown[]) => {
        filtered.push(pod.metadata!.name!);
        return { nodes, failedNodes: {}, error: '' };
      },
    } as unknown as ExtenderVerbs;
    // buffers for 20 MB answers: more than the kernel's socket buffers take in on loopback (4 MiB)
    const bodyBuffers = new BodyBuffers(4, 64 * 2 ** 20);
    server = createServer(extenderApp(extender, silentLogger(), { bodyBuffers }));
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** A filter request for pod `name` with 6,000 nodes of 3 KiB (20 MB), every byte of theirs `fill`. */
  const request = (name: string, fill: string) => {
    const items = Array.from({ length: 6000 }, (_, i) => ({
      metadata: { name: `node-${i}`, labels: { fill: fill.repeat(3000) } },
    }));
    return { body: JSON.stringify({ Pod: { metadata: { name } }, Nodes: { metadata: {}, items } }), items };
  };

  test('an answer its caller has not read yet is sent as it was, whatever others ask meanwhile', async () => {
    const a = request('slow', 'a');
    // the slow caller sends its request and reads nothing until the other has its answer
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    socket.pause();
    socket.write(
      `POST /v1/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(a.body)}\r\nConnection: close\r\n\r\n${a.body}`,
    );
    await waitUntil(() => filtered.includes('slow'));
    await sleep(100); // its answer written, most of it still in floatip's queue

    for (const [name, fill] of [
      ['quick-1', 'b'],
      ['quick-2', 'c'],
    ]) {
      const b = request(name!, fill!);
      const res = await fetch(`http://127.0.0.1:${port}/v1/filter`, { method: 'POST', body: b.body });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { Nodes: { items: unknown[] } }).Nodes.items).toEqual(b.items);
    }

    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.resume();
    await once(socket, 'end');
    const text = Buffer.concat(chunks).toString('utf8');
    expect(text.startsWith('HTTP/1.1 200')).toBe(true);
    const answer = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { Nodes: { items: unknown[] } };
    expect(answer.Nodes.items).toEqual(a.items);
    // three 20 MB requests and answers: seconds on a quiet machine, more than jest's 30 s on a busy one
  }, 120_000);
});

async function waitUntil(done: () => boolean): Promise<void> {
  while (!done()) await sleep(5);
}

describe('a gzip bomb on the extender port', () => {
  test('inflates off the event loop, one body at a time: a plain call sent while it inflates is answered first, a gzip one after it, and the bomb is a 413', async () => {
    const extender = passingFilter;
    // the plain limit (256 MiB) for inflated bodies too: inflating up to it takes hundreds of
    // milliseconds on any machine
    const server = createServer(extenderApp(extender, silentLogger(), { inflatedBodyLimitBytes: 2 ** 28 }));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      const bomb = gzipSync(Buffer.alloc(300 * 2 ** 20, 0x20)); // about 300 KB on the wire
      const order: string[] = [];
      const socket = connect(port, '127.0.0.1');
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
      const bombAnswered = once(socket, 'end').then(() => order.push('bomb'));
      socket.write(
        `POST /v1/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n` +
          `Content-Length: ${bomb.length}\r\nConnection: close\r\n\r\n`,
      );
      await new Promise<void>((resolve) => socket.write(bomb, () => resolve()));
      // the whole bomb is with the server before this call is sent
      await sleep(20);
      const small = JSON.stringify({ Pod: { metadata: { name: 'p' } }, NodeNames: ['a1'] });
      // one body inflates at a time, so that inflating never holds more than one limit's worth
      const zipped = fetch(`http://127.0.0.1:${port}/v1/filter`, {
        method: 'POST',
        body: gzipSync(small),
        headers: { 'Content-Encoding': 'gzip' },
      }).then((r) => {
        order.push('small, gzip');
        return r.status;
      });
      const res = await fetch(`http://127.0.0.1:${port}/v1/filter`, { method: 'POST', body: small });
      order.push('small');
      expect(res.status).toBe(200);
      await bombAnswered;
      expect(await zipped).toBe(200);
      expect(order).toEqual(['small', 'bomb', 'small, gzip']);
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(answer).toContain('{"Error":"the request body is over 268435456 bytes once inflated"}');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 30_000);
});

test('a compressed body inflates to at most 16 MiB, where a plain one may be 256 MiB: a little gzip is never seconds of parsing', async () => {
  const server = createServer(extenderApp(passingFilter, silentLogger()));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  try {
    const body = JSON.stringify({ Pod: { metadata: { name: 'p' } }, NodeNames: ['a1'] }).padEnd(
      17 * 2 ** 20,
      ' ',
    );
    const post = (data: Buffer | string, headers: Record<string, string> = {}) =>
      fetch(`http://127.0.0.1:${port}/v1/filter`, { method: 'POST', body: data, headers });
    const zipped = await post(gzipSync(body), { 'Content-Encoding': 'gzip' });
    expect([zipped.status, await zipped.json()]).toEqual([
      413,
      { Error: 'the request body is over 16777216 bytes once inflated' },
    ]);
    const plain = await post(body);
    expect([plain.status, await plain.json()]).toEqual([200, expect.objectContaining({ NodeNames: ['a1'] })]);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
