// A plain HTTP server standing in for kube-apiserver, and a KubeConfig (a token, connections shared)
// that reaches it: what each request was, and the answer the test chooses for it.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { shareConnections } from '../../src/kube/shared-agent.js';

export interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The client's port: requests on one kept-alive connection share it. */
  clientPort: number;
}

/** A status, a body and headers; undefined never answers. */
export type Reply = [number, string] | [number, string, Record<string, string>] | undefined;

/** A KubeConfig (a token, connections shared) for an API server on this machine's `port`. */
export function localKubeConfig(port: number, prefix = ''): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}${prefix}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'secret-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  shareConnections(kc);
  return kc;
}

/** The server, at `prefix` (a path of its own, as a server behind a path-routing proxy has). */
export async function stubApiServer(answer: (seen: Seen, n: number) => Reply, prefix = '') {
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
        clientPort: req.socket.remotePort!,
      };
      seen.push(s);
      const reply = answer(s, seen.length);
      if (!reply) return;
      res.writeHead(reply[0], { 'Content-Type': 'application/json', ...reply[2] }).end(reply[1]);
    });
  });
  // the client ports of the connections open now
  const open = new Set<number>();
  server.on('connection', (socket) => {
    const port = socket.remotePort!;
    open.add(port);
    socket.on('close', () => open.delete(port));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const kc = localKubeConfig(port, prefix);
  return {
    seen,
    open,
    port,
    kc,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** What kube-apiserver's in-flight limit answers (with `Retry-After: 1`): plain text, not a Status. */
export const TOO_MANY = 'Too many requests, please try again later.\n';

/** A 429 as kube-apiserver answers it, with this Retry-After (none when undefined). */
export const tooManyRequests = (retryAfter?: string): Reply => [
  429,
  TOO_MANY,
  retryAfter === undefined ? {} : { 'Retry-After': retryAfter },
];
