// The lean writer of bind's two POSTs, against a plain HTTP server standing in for kube-apiserver:
// what it sends (the kubeconfig's credentials, JSON, the server's own path prefix) and what a
// failure becomes (the Status the server answered, or status 0 when no answer came in time).
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError } from '../../src/kube/api-error.js';
import { JsonPost } from '../../src/kube/json-post.js';
import { shareConnections } from '../../src/kube/shared-agent.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

async function apiServer(answer: (seen: Seen) => [number, string] | undefined) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      seen.push(s);
      const reply = answer(s);
      if (!reply) return; // never answers
      res.writeHead(reply[0], { 'Content-Type': 'application/json' }).end(reply[1]);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'c',
        server: `http://127.0.0.1:${(server.address() as AddressInfo).port}/prefix/`,
        skipTLSVerify: true,
      },
    ],
    users: [{ name: 'u', token: 'secret-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  shareConnections(kc);
  return {
    seen,
    writer: new JsonPost(kc),
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
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
