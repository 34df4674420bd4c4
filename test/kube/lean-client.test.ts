// The lean client of the requests floatip makes per pod, against a plain HTTP server standing in for
// kube-apiserver: what it sends (the kubeconfig's credentials, JSON or a merge patch, the server's
// own path prefix) and what a
// failure becomes (the Status the server answered, or status 0 when no answer came in time); then
// over TLS with the kubeconfig's CA and client certificate, and through the kubeconfig's proxy-url.
import { createServer, type IncomingMessage } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { KubeConfig } from '@kubernetes/client-node';
import { webhookCertificate } from '../integration/webhook-tls.js';
import { KubeApiError } from '../../src/kube/api-error.js';
import { LeanClient } from '../../src/kube/lean-client.js';
import { MAX_SENDS } from '../../src/kube/resend.js';
import { shareConnections } from '../../src/kube/shared-agent.js';
import { type Reply, type Seen, stubApiServer, tooManyRequests } from './stub-api-server.js';

async function apiServer(answer: (seen: Seen) => Reply) {
  const api = await stubApiServer(answer, '/prefix/');
  return { ...api, writer: new LeanClient(api.kc) };
}

test('a POST carries the credentials and the JSON, under the server’s own path; the answer comes back parsed', async () => {
  const api = await apiServer(() => [201, '{"metadata":{"resourceVersion":"42"}}']);
  try {
    const answer = await api.writer.post('/apis/galaxy.k8s.io/v1alpha1/floatingips', { a: 1 }, 'create x');
    expect(answer).toEqual({ metadata: { resourceVersion: '42' } });
    await api.writer.post('/api/v1/namespaces/ns1/pods/p1/binding', { b: 2 }, 'bind');
    expect(api.seen.map((s) => [s.method, s.url, s.body])).toEqual([
      ['POST', '/prefix/apis/galaxy.k8s.io/v1alpha1/floatingips', '{"a":1}'],
      ['POST', '/prefix/api/v1/namespaces/ns1/pods/p1/binding', '{"b":2}'],
    ]);
    for (const s of api.seen) {
      expect(s.headers.authorization).toBe('Bearer secret-token');
      expect(s.headers['content-type']).toBe('application/json');
    }
  } finally {
    api.close();
  }
});

test('a merge patch and a delete go as kube-apiserver reads them: method, content type, body; a 429 on either is sent again; the connection is kept', async () => {
  let refusals = 2;
  const api = await apiServer(() => (refusals-- > 0 ? tooManyRequests('0') : [200, '{"kind":"Status"}']));
  try {
    const patch = { metadata: { resourceVersion: '7' }, spec: { key: 'k' } };
    await api.writer.write('MERGE-PATCH', '/apis/x/floatingips/10.0.0.1', patch, 'patch 10.0.0.1');
    const preconditions = { preconditions: { resourceVersion: '8' } };
    await api.writer.write('DELETE', '/apis/x/floatingips/10.0.0.1', preconditions, 'delete 10.0.0.1');
    await new Promise((r) => setTimeout(r, 50));
    // undici closes a connection after a DELETE with a body unless told not to: no release opens a new one
    expect(api.open.has(api.seen[3]!.clientPort)).toBe(true);
    await api.writer.post('/apis/x/floatingips', {}, 'create 10.0.0.2');
    const sent = api.seen.map((s) => [s.method, s.url, s.headers['content-type'], s.body]);
    const patched = ['PATCH', '/prefix/apis/x/floatingips/10.0.0.1', 'application/merge-patch+json'];
    const deleted = ['DELETE', '/prefix/apis/x/floatingips/10.0.0.1', 'application/json'];
    expect(sent).toEqual([
      [...patched, JSON.stringify(patch)],
      [...patched, JSON.stringify(patch)],
      [...patched, JSON.stringify(patch)],
      [...deleted, JSON.stringify(preconditions)],
      ['POST', '/prefix/apis/x/floatingips', 'application/json', '{}'],
    ]);
  } finally {
    api.close();
  }
});

test('a read answers the object; a 404 is the server’s Status (find: no object), and an answer that is no object is a failure, not an empty object', async () => {
  const api = await apiServer((s) =>
    s.url.endsWith('/p1')
      ? [200, '{"metadata":{"name":"p1"}}']
      : s.url.endsWith('/p2')
        ? [404, '{"kind":"Status","reason":"NotFound","message":"pods \\"p2\\" not found","code":404}']
        : s.url.endsWith('/p4')
          ? [500, '{"kind":"Status","reason":"InternalError","message":"etcd is down","code":500}']
          : [200, '<html>a proxy</html>'],
  );
  try {
    expect(await api.writer.get('/api/v1/namespaces/ns1/pods/p1', 'get pod ns1/p1')).toEqual({
      metadata: { name: 'p1' },
    });
    expect(
      await api.writer.get('/api/v1/namespaces/ns1/pods/p2', 'get pod ns1/p2').catch((e: unknown) => e),
    ).toMatchObject({
      status: 404,
      message: 'get pod ns1/p2: pods "p2" not found',
    });
    expect(
      await api.writer.get('/api/v1/namespaces/ns1/pods/p3', 'get pod ns1/p3').catch((e: unknown) => e),
    ).toMatchObject({
      status: 0,
      message: 'get pod ns1/p3: the answer is not a JSON object',
    });
    // find: the same, but no such object is undefined; every other refusal still fails
    expect(await api.writer.find('/api/v1/namespaces/ns1/pods/p1', 'get pod ns1/p1')).toEqual({
      metadata: { name: 'p1' },
    });
    expect(await api.writer.find('/api/v1/namespaces/ns1/pods/p2', 'get pod ns1/p2')).toBeUndefined();
    expect(
      await api.writer.find('/api/v1/namespaces/ns1/pods/p3', 'get pod ns1/p3').catch((e: unknown) => e),
    ).toMatchObject({ status: 0, message: 'get pod ns1/p3: the answer is not a JSON object' });
    expect(
      await api.writer.find('/api/v1/namespaces/ns1/pods/p4', 'get pod ns1/p4').catch((e: unknown) => e),
    ).toMatchObject({ status: 500, message: 'get pod ns1/p4: etcd is down' });
    expect(api.seen.map((s) => [s.method, s.headers['content-type'], s.body])).toEqual(
      Array(7).fill(['GET', undefined, '']),
    );
  } finally {
    api.close();
  }
});

test('a refusal is the server’s Status; no answer in time is status 0', async () => {
  const api = await apiServer((s) =>
    s.url.endsWith('/binding')
      ? undefined
      : [
          409,
          '{"kind":"Status","reason":"AlreadyExists","message":"floatingips \\"10.0.0.1\\" already exists"}',
        ],
  );
  try {
    const refused = await api.writer.post('/apis/x', {}, 'create 10.0.0.1').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(KubeApiError);
    expect(refused).toMatchObject({
      status: 409,
      reason: 'AlreadyExists',
      message: 'create 10.0.0.1: floatingips "10.0.0.1" already exists',
    });
    const unanswered = await api.writer
      .post('/api/v1/x/binding', {}, 'bind p1', 300)
      .catch((e: unknown) => e);
    expect(unanswered).toMatchObject({ status: 0, message: 'bind p1: no answer within 300 ms' });
  } finally {
    api.close();
  }
});

test('a 429 with a Retry-After is sent again after that wait, as client-go does: the bind goes on', async () => {
  let refusals = 2;
  const api = await apiServer(() =>
    refusals-- > 0 ? tooManyRequests('1') : [201, '{"metadata":{"name":"10.0.0.1"}}'],
  );
  try {
    const started = Date.now();
    const answer = await api.writer.post('/apis/x/floatingips', { n: 1 }, 'create 10.0.0.1', 5_000);
    expect(answer).toEqual({ metadata: { name: '10.0.0.1' } });
    // the server's wait, twice: not sooner
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(api.seen.map((s) => [s.url, s.body])).toEqual([
      ['/prefix/apis/x/floatingips', '{"n":1}'],
      ['/prefix/apis/x/floatingips', '{"n":1}'],
      ['/prefix/apis/x/floatingips', '{"n":1}'],
    ]);
  } finally {
    api.close();
  }
});

test('a 429 is the answer when its wait would end past the deadline, when it names no whole seconds, and after client-go’s ten sends', async () => {
  const cases: { retryAfter?: string; timeoutMs: number; sends: number }[] = [
    { retryAfter: '1', timeoutMs: 900, sends: 1 },
    { retryAfter: '3', timeoutMs: 2_500, sends: 1 },
    { timeoutMs: 5_000, sends: 1 },
    { retryAfter: '1.5', timeoutMs: 5_000, sends: 1 },
    { retryAfter: 'Wed, 21 Oct 2015 07:28:00 GMT', timeoutMs: 5_000, sends: 1 },
    { retryAfter: '0', timeoutMs: 5_000, sends: MAX_SENDS },
  ];
  for (const c of cases) {
    const api = await apiServer(() => tooManyRequests(c.retryAfter));
    try {
      const started = Date.now();
      const refused = await api.writer
        .post('/api/v1/x/binding', {}, 'bind p1', c.timeoutMs)
        .catch((e: unknown) => e);
      expect({ ...c, status: (refused as KubeApiError).status, sent: api.seen.length }).toEqual({
        ...c,
        status: 429,
        sent: c.sends,
      });
      expect((refused as KubeApiError).message).toBe('bind p1: Too many requests, please try again later.');
      // given up at once, not after waiting out a wait that could not help
      if (c.sends === 1) expect(Date.now() - started).toBeLessThan(900);
    } finally {
      api.close();
    }
  }
});

test('a 429 is sent again only while the caller may still write (a deposed leader stops), and a 5xx with a Retry-After is not sent again', async () => {
  const api = await apiServer((s) =>
    s.url.endsWith('/binding')
      ? tooManyRequests('0')
      : [500, '{"reason":"ServerTimeout","message":"timed out"}', { 'Retry-After': '0' }],
  );
  try {
    const deposed = new Error('not the leader');
    let checks = 0;
    const stopped = await api.writer
      .post('/api/v1/x/binding', {}, 'bind p1', 5_000, () => {
        if (++checks === 2) throw deposed;
      })
      .catch((e: unknown) => e);
    expect(stopped).toBe(deposed);
    expect(api.seen).toHaveLength(2);
    const failed = await api.writer
      .post('/apis/x/floatingips', {}, 'create 10.0.0.1', 5_000)
      .catch((e: unknown) => e);
    expect(failed).toMatchObject({ status: 500, message: 'create 10.0.0.1: timed out' });
    expect(api.seen).toHaveLength(3);
  } finally {
    api.close();
  }
});

/** A kubeconfig for `server` trusting `ca`, with a client certificate and key, connections shared. */
function tlsKubeConfig(server: string, ca: string, cert: string, key: string): KubeConfig {
  const kc = new KubeConfig();
  const base64 = (pem: string) => Buffer.from(pem).toString('base64');
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, caData: base64(ca) }],
    users: [{ name: 'u', certData: base64(cert), keyData: base64(key) }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return shareConnections(kc);
}

test('over TLS the writer trusts the kubeconfig’s CA only, presents its client certificate and keeps its connections between bursts', async () => {
  const serving = webhookCertificate(['IP:127.0.0.1']);
  const client = webhookCertificate(['DNS:floatip']);
  const seen: { url: string; subject: unknown }[] = [];
  const server = createTlsServer(
    { cert: serving.cert, key: serving.key, ca: client.ca, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      seen.push({ url: req.url!, subject: peer.subject?.CN });
      req.resume();
      req.on('end', () => res.writeHead(201).end('{"ok":true}'));
    },
  );
  let connections = 0;
  server.on('secureConnection', () => connections++);
  // as kube-apiserver: idle connections kept, and no Keep-Alive timeout hint in the answers
  server.keepAliveTimeout = 0;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const writerTrusting = (ca: string) =>
    new LeanClient(tlsKubeConfig(`https://127.0.0.1:${port}`, ca, client.cert, client.key));
  try {
    const trusting = writerTrusting(serving.ca);
    expect(await trusting.post('/api/v1/x', {}, 'create x')).toEqual({ ok: true });
    expect(seen).toEqual([{ url: '/api/v1/x', subject: 'floatip-webhook' }]);
    // a burst of concurrent writes, a pause longer than undici's default keep-alive (4 s), and the
    // same burst again: the second burst finds the first one's connections, with no new handshake
    const burst = () =>
      Promise.all([1, 2, 3, 4].map((i) => trusting.post(`/api/v1/burst${i}`, {}, `create ${i}`)));
    const before = connections;
    await burst();
    const handshakes = connections;
    expect(handshakes - before).toBeLessThanOrEqual(4);
    await new Promise((r) => setTimeout(r, 4_500));
    await burst();
    expect(connections).toBe(handshakes);
    const sent = seen.length;
    // a server its CA did not sign is refused before anything is sent
    const refused = await writerTrusting(client.ca)
      .post('/api/v1/y', {}, 'create y')
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(KubeApiError);
    expect((refused as KubeApiError).message).toMatch(/^create y: .*(certificate|self.signed)/i);
    expect(seen).toHaveLength(sent);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('a kubeconfig whose client key is not its certificate’s: the write fails as status 0, naming itself', async () => {
  const mine = webhookCertificate(['DNS:floatip']);
  const other = webhookCertificate(['DNS:other']);
  const writer = new LeanClient(tlsKubeConfig('https://127.0.0.1:9', mine.ca, mine.cert, other.key));
  for (const what of ['create x', 'create y']) {
    const failed = await writer.post('/api/v1/x', {}, what).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(KubeApiError);
    expect((failed as KubeApiError).status).toBe(0);
    expect((failed as KubeApiError).message).toMatch(new RegExp(`^${what}: .*key values mismatch`));
  }
});

test('a cluster behind the kubeconfig’s proxy-url is written to through that proxy', async () => {
  // the proxy tunnels every CONNECT to the stand-in API server, whatever address it names
  let refusals = 1;
  const api = await apiServer(() => (refusals-- > 0 ? tooManyRequests('0') : [201, '{"via":"proxy"}']));
  const tunnels: string[] = [];
  const proxy = createServer();
  proxy.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    tunnels.push(req.url!);
    const upstream = connect(api.port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  try {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: 'c',
          server: 'http://192.0.2.1:6443/prefix',
          skipTLSVerify: true,
          proxyUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
        },
      ],
      users: [{ name: 'u', token: 'secret-token' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const answer = await new LeanClient(shareConnections(kc)).post('/api/v1/x', { c: 3 }, 'create x', 5_000);
    expect(answer).toEqual({ via: 'proxy' });
    expect(new Set(tunnels)).toEqual(new Set(['192.0.2.1:6443']));
    // a 429 is sent again this way too
    expect(api.seen.map((s) => [s.url, s.body, s.headers.authorization])).toEqual([
      ['/prefix/api/v1/x', '{"c":3}', 'Bearer secret-token'],
      ['/prefix/api/v1/x', '{"c":3}', 'Bearer secret-token'],
    ]);
  } finally {
    proxy.closeAllConnections();
    proxy.close();
    api.close();
  }
});
