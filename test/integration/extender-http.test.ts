// The extender's HTTP face on its own: bodies over the limit are refused with 413 whether their size
// is declared or streamed, and the server keeps answering afterwards.
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { type ExtenderVerbs, extenderApp } from '../../src/extender/http.js';
import { silentLogger } from '../../src/log.js';

describe('extender HTTP', () => {
  let server: Server;
  let url: string;

  beforeAll(async () => {
    // filter answers for a pod that does not want an address without asking anyone
    const extender = {
      filter: (_pod: unknown, _nodes: unknown, nodeNames: string[]) => ({
        nodeNames,
        failedNodes: {},
        error: '',
      }),
    } as unknown as ExtenderVerbs;
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
