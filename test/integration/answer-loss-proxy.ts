// An HTTP proxy between floatip and the embedded API server that can lose an answer: a chosen
// request is forwarded, the API server applies it and answers, and the proxy then resets floatip's
// connection instead of relaying that answer (a connection reset after the server committed, as a
// load balancer or a kube-apiserver restart can do). Everything else passes through, watches too.
import { type IncomingMessage, type Server, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

interface Loss {
  readonly method: string;
  readonly path: RegExp;
  readonly fired: () => void;
}

export class AnswerLossProxy {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly losses: Loss[],
    /** "METHOD path" of every answer lost so far. */
    readonly lost: string[],
  ) {}

  static async start(upstream: string): Promise<AnswerLossProxy> {
    const target = new URL(upstream);
    const losses: Loss[] = [];
    const lost: string[] = [];
    const server = createServer((req, res) => {
      void readBody(req).then((body) => {
        const loss = takeLoss(losses, req);
        const up = request(
          {
            host: target.hostname,
            port: target.port,
            path: req.url,
            method: req.method,
            headers: { ...req.headers, host: target.host },
          },
          (answer) => {
            if (loss) {
              // the server has answered, so it has applied the request: floatip never hears of it
              answer.resume();
              answer.on('end', () => {
                lost.push(`${req.method} ${req.url}`);
                req.socket.destroy();
                loss.fired();
              });
              return;
            }
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            // a watch's headers come long before its first event, and its client waits for them
            res.flushHeaders();
            answer.pipe(res);
          },
        );
        up.on('error', (err) => {
          if (!res.headersSent) res.writeHead(502);
          res.end(`answer-loss proxy: ${req.method} ${req.url} upstream failed: ${err.message}`);
        });
        res.on('close', () => up.destroy());
        up.end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return new AnswerLossProxy(server, url, losses, lost);
  }

  /**
   * The next request whose method is `method` and whose path (query left out) matches `path` is
   * applied but its answer lost; resolves once that has happened.
   */
  loseNextAnswer(method: string, path: RegExp): Promise<void> {
    return new Promise((fired) => this.losses.push({ method, path, fired }));
  }

  /** A kubeconfig that reaches the API server through this proxy. */
  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'proxy', server: this.url, skipTLSVerify: true }],
      users: [{ name: 'proxy' }],
      contexts: [{ name: 'proxy', cluster: 'proxy', user: 'proxy' }],
      currentContext: 'proxy',
    });
    return kc;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

function takeLoss(losses: Loss[], req: IncomingMessage): Loss | undefined {
  const path = (req.url ?? '').split('?')[0]!;
  const at = losses.findIndex((l) => l.method === req.method && l.path.test(path));
  return at < 0 ? undefined : losses.splice(at, 1)[0];
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
