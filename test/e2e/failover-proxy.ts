// What a Kubernetes Service with a readiness probe does for floatip's replicas, in-process: the
// scheduler has one extender URL; this listens there and forwards each request to a replica whose
// /readyz answered 200 at the last probe (every replica that can answer; followers hand bind and
// preempt to the leader themselves), round robin among the ready ones. In `tcp` mode it forwards
// connections, not requests, as kube-proxy does: TLS (the extender's mTLS) passes through untouched.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, createServer as createTcpServer, type Socket } from 'node:net';

export interface FailoverProxy {
  /** Requests forwarded, per backend URL. */
  readonly forwarded: Map<string, number>;
  /** Requests answered 503 because no backend was ready, and forwarding failures. */
  readonly refused: number;
  readonly failures: string[];
  /** The backends now considered ready. */
  ready(): string[];
  close(): Promise<void>;
}

export interface FailoverProxyOptions {
  readonly port: number;
  /** Backend base URLs (`http://127.0.0.1:<port>`), asked each probe round: replicas come and go. */
  readonly backends: () => readonly string[];
  /** Probe period, like a readiness probe's periodSeconds (default 250 ms). */
  readonly probeMs?: number;
  /** Where a backend's readiness is asked (default `<backend>/readyz`). */
  readonly probeUrl?: (backend: string) => string;
  /** `http` (default): request by request; `tcp`: connection by connection, bytes untouched. */
  readonly mode?: 'http' | 'tcp';
}

export async function startFailoverProxy(options: FailoverProxyOptions): Promise<FailoverProxy> {
  const probeMs = options.probeMs ?? 250;
  let ready: string[] = [];
  let next = 0;
  let closed = false;
  const forwarded = new Map<string, number>();
  const failures: string[] = [];
  let refused = 0;

  const probe = async (url: string): Promise<boolean> => {
    try {
      const res = await fetch(options.probeUrl?.(url) ?? `${url}/readyz`, {
        signal: AbortSignal.timeout(500),
      });
      await res.arrayBuffer();
      return res.status === 200;
    } catch {
      return false;
    }
  };
  let probing: Promise<void> = Promise.resolve();
  const round = async () => {
    try {
      const backends = [...options.backends()];
      const results = await Promise.all(backends.map(probe));
      ready = backends.filter((_, i) => results[i]);
    } catch (err) {
      failures.push(`probe round: ${(err as Error).message}`);
    }
  };
  const timer = setInterval(() => {
    probing = probing.then(round);
  }, probeMs);
  await round();

  const forward = (url: string, req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<boolean> =>
    new Promise((resolve) => {
      const target = new URL(req.url ?? '/', url);
      const out = request(
        target,
        { method: req.method, headers: { ...req.headers, host: target.host } },
        (upstream) => {
          res.writeHead(upstream.statusCode ?? 502, upstream.headers);
          upstream.pipe(res);
          upstream.on('end', () => resolve(true));
          upstream.on('error', () => resolve(true));
        },
      );
      out.on('error', (err) => {
        failures.push(`${req.method} ${req.url} -> ${url}: ${err.message}`);
        resolve(false);
      });
      out.end(body);
    });

  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const tcp = (client: Socket) => {
    track(client);
    const candidates = ready;
    if (candidates.length === 0 || closed) {
      refused++;
      client.destroy();
      return;
    }
    const url = candidates[next++ % candidates.length]!;
    forwarded.set(url, (forwarded.get(url) ?? 0) + 1);
    const { hostname, port } = new URL(url);
    const upstream = connect(Number(port), hostname);
    track(upstream);
    upstream.on('error', (err) => {
      failures.push(`connection -> ${url}: ${err.message}`);
      client.destroy();
    });
    client.on('error', () => upstream.destroy());
    client.pipe(upstream).pipe(client);
  };

  const server: Server | ReturnType<typeof createTcpServer> =
    options.mode === 'tcp'
      ? createTcpServer(tcp)
      : createServer((req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (c: Buffer) => chunks.push(c));
          req.on('end', () => {
            void (async () => {
              const body = Buffer.concat(chunks);
              // like kube-proxy, a connection refused by a backend that just died is not retried
              // elsewhere by the Service; the scheduler retries the pod. Round robin over the ready set.
              const candidates = ready;
              if (candidates.length === 0 || closed) {
                refused++;
                res.writeHead(503, { 'content-type': 'application/json' });
                res.end(JSON.stringify({ Error: 'no ready floatip replica behind the e2e proxy' }));
                return;
              }
              const url = candidates[next++ % candidates.length]!;
              forwarded.set(url, (forwarded.get(url) ?? 0) + 1);
              if (!(await forward(url, req, body, res))) {
                res.writeHead(502, { 'content-type': 'application/json' });
                res.end(JSON.stringify({ Error: `floatip replica ${url} did not answer` }));
              }
            })();
          });
        });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });

  return {
    forwarded,
    get refused() {
      return refused;
    },
    failures,
    ready: () => [...ready],
    async close() {
      closed = true;
      clearInterval(timer);
      await probing;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeAllConnections' in server) server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}
