// Connection reuse to the API server: client-node 1.x makes a new agent (and so a new connection, and
// over TLS a new handshake) per call; shareConnections makes calls share pooled keep-alive sockets.
import { getMaxListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { shareConnections, sharedAgents, sharedTimeout } from '../../src/kube/shared-agent.js';

function config(server: string, options: { skipTLSVerify?: boolean; caData?: string } = {}): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: options.skipTLSVerify ?? false, caData: options.caData }],
    users: [{ name: 'u', token: 'secret' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

/** A tiny "API server" answering GET pod, counting TCP connections. */
async function podServer(): Promise<{ server: Server; url: string; connections: () => number }> {
  let connections = 0;
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' } }));
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, connections: () => connections };
}

async function readPods(kc: KubeConfig, times: number): Promise<void> {
  const api = kc.makeApiClient(CoreV1Api);
  for (let i = 0; i < times; i++) {
    const pod = await api.readNamespacedPod({ name: 'p', namespace: 'default' });
    expect(pod.metadata?.name).toBe('p');
  }
}

describe('shareConnections', () => {
  let fixture: Awaited<ReturnType<typeof podServer>>;

  beforeEach(async () => {
    fixture = await podServer();
  });

  afterEach(async () => {
    fixture.server.closeAllConnections();
    await new Promise((resolve) => fixture.server.close(resolve));
  });

  test('client-node alone opens a connection per call (why this exists)', async () => {
    await readPods(config(fixture.url, { skipTLSVerify: true }), 4);
    expect(fixture.connections()).toBe(4);
  });

  test('calls share one keep-alive connection', async () => {
    const kc = shareConnections(config(fixture.url, { skipTLSVerify: true }));
    await readPods(kc, 4);
    expect(fixture.connections()).toBe(1);
    expect(sharedAgents(kc)).toHaveLength(1);
  });

  test('an idle connection is closed by floatip a second before the server announced it would', async () => {
    // node's server announces `Keep-Alive: timeout=3` and closes an idle connection after 3 s; a
    // call sent on it as it closes fails with "socket hang up"
    fixture.server.keepAliveTimeout = 3000;
    const closed: number[] = [];
    fixture.server.on('connection', (socket) => socket.on('close', () => closed.push(Date.now())));
    const kc = shareConnections(config(fixture.url, { skipTLSVerify: true }));
    await readPods(kc, 1);
    const answered = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 2600));
    expect(closed).toHaveLength(1);
    expect(closed[0]! - answered).toBeLessThan(2500);
    // and the next call opens a new connection rather than failing
    await readPods(kc, 1);
    expect(fixture.connections()).toBe(2);
  });

  test('is idempotent, and keeps client-node’s refusal of plain HTTP without skipTLSVerify', async () => {
    const kc = shareConnections(shareConnections(config(fixture.url, { skipTLSVerify: true })));
    await readPods(kc, 2);
    expect(fixture.connections()).toBe(1);
    const strict = shareConnections(config(fixture.url));
    await expect(readPods(strict, 1)).rejects.toThrow(/HTTP protocol is not allowed/);
  });

  test('one agent per TLS identity: same CA shares, another CA does not', async () => {
    const ca = (text: string) =>
      Buffer.from(`-----BEGIN CERTIFICATE-----\n${text}\n-----END CERTIFICATE-----\n`);
    const kc = shareConnections(config('https://127.0.0.1:1', { caData: ca('AAAA').toString('base64') }));
    const a = (await kc.applyToFetchOptions({})).agent;
    const b = (await kc.applyToFetchOptions({})).agent;
    expect(a).toBe(b);
    expect((a as { keepAlive?: boolean }).keepAlive).toBe(true);
    const other = shareConnections(config('https://127.0.0.1:1', { caData: ca('BBBB').toString('base64') }));
    expect((await other.applyToFetchOptions({})).agent).not.toBe(a);
  });
});

describe('a pooled connection that went silent', () => {
  test('a call on it fails within the request timeout instead of waiting forever', async () => {
    // answers the first request of each connection, then never again on it: what a keep-alive
    // connection through a blackholed path looks like (no answer, no FIN, no RST)
    const served = new WeakSet<object>();
    const server = createServer((req, res) => {
      if (served.has(req.socket)) return;
      served.add(req.socket);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' } }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const kc = shareConnections(config(`http://127.0.0.1:${port}`, { skipTLSVerify: true }), {
        requestTimeoutMs: 300,
      });
      await readPods(kc, 1);
      const started = Date.now();
      await expect(readPods(kc, 1)).rejects.toThrow(/abort/i);
      expect(Date.now() - started).toBeLessThan(2000);
      // the dead connection is gone: the next call opens a new one and succeeds
      await readPods(kc, 1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 10_000);
});

describe('the calls’ timeout signal', () => {
  test('is shared by the calls of one thirtieth of the timeout, and a new one after it', () => {
    let now = 1_000_000;
    const timeout = sharedTimeout(30_000, () => now);
    const first = timeout();
    now += 999;
    expect(timeout()).toBe(first);
    now += 1;
    const second = timeout();
    expect(second).not.toBe(first);
    expect(timeout()).toBe(second);
  });

  test('aborts no sooner than the timeout after the last call that may share it, as a TimeoutError', async () => {
    const timeout = sharedTimeout(300); // shared for 10 ms: aborts 310 ms after it is made
    const made = Date.now();
    const signal = timeout();
    // every call in flight listens to it: no limit past which node warns of a leak (jest's
    // process object does not see node's warnings, so the limit is read instead)
    expect(getMaxListeners(signal)).toBe(Infinity);
    const reason = await new Promise<unknown>((resolve) =>
      signal.addEventListener('abort', () => resolve(signal.reason)),
    );
    const after = Date.now() - made;
    expect(after).toBeGreaterThanOrEqual(310 - 1);
    expect(after).toBeLessThan(2000);
    expect((reason as Error).name).toBe('TimeoutError');
  });
});
