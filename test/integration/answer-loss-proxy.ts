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
  /** Held: never forwarded (until the proxy is severed), instead of applied and its answer lost. */
  readonly hold?: boolean;
  readonly fired: () => void;
}

export class AnswerLossProxy {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly losses: Loss[],
    /** "METHOD path" of every answer lost (or request held) so far. */
    readonly lost: string[],
    private readonly severed: { is: boolean },
  ) {}

  static async start(upstream: string): Promise<AnswerLossProxy> {
    const target = new URL(upstream);
    const losses: Loss[] = [];
    const lost: string[] = [];
    const severed = { is: false };
    const server = createServer((req, res) => {
      void readBody(req).then((body) => {
        // severed: floatip's process is gone as far as the API server can tell
        if (severed.is) return req.socket.destroy();
        const loss = takeLoss(losses, req);
        if (loss?.hold) {
          lost.push(`${req.method} ${req.url} (held)`);
          return loss.fired();
        }
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
    return new AnswerLossProxy(server, url, losses, lost, severed);
  }

  /**
   * The next request whose method is `method` and whose path (query left out) matches `path` is
   * applied but its answer lost; resolves once that has happened.
   */
  loseNextAnswer(method: string, path: RegExp): Promise<void> {
    return new Promise((fired) => this.losses.push({ method, path, fired }));
  }

  /** The next request as `loseNextAnswer` picks it is held, never to reach the API server; resolves once held. */
  holdNext(method: string, path: RegExp): Promise<void> {
    return new Promise((fired) => this.losses.push({ method, path, hold: true, fired }));
  }

  /**
   * Plays floatip's process being SIGKILLed, as the API server sees it: every connection is reset
   * (held requests included, which never land) and nothing sent afterwards is forwarded.
   */
  sever(): void {
    this.severed.is = true;
    this.server.closeAllConnections();
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
