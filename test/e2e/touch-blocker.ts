// The API server as floatip sees it, minus floatip's requeue touch: a plain-HTTP proxy on 127.0.0.1
// that forwards everything to kube-apiserver with the admin's client certificate, except a pod patch
// that sets floatip.io/requeued-at, which it refuses (403) and counts. A floatip started with
// `--kubeconfig <blocker.kubeconfig>` then shows what the scheduler does on its own once an address
// is freed, on each Kubernetes version.
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { request, Agent } from 'node:https';
import { join } from 'node:path';
import { REQUEUED_ANNOTATION } from '../../src/controller/requeue.js';
import { loadCluster, runDir } from './cluster.js';

export class TouchBlocker {
  private constructor(
    private readonly server: Server,
    readonly kubeconfig: string,
    /** The touches refused so far, as "namespace/name". */
    readonly blocked: readonly string[],
  ) {}

  static async start(): Promise<TouchBlocker> {
    const cluster = loadCluster();
    const upstream = new URL(cluster.APISERVER_URL);
    const agent = new Agent({
      ca: readFileSync(cluster.KUBE_CA_FILE),
      cert: readFileSync(cluster.KUBE_ADMIN_CERT),
      key: readFileSync(cluster.KUBE_ADMIN_KEY),
      keepAlive: true,
    });
    const blocked: string[] = [];
    const server = createServer((req, res) => {
      void readBody(req).then((body) => {
        const pod = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/?]+)$/.exec(req.url?.split('?')[0] ?? '');
        if (req.method === 'PATCH' && pod && body.toString().includes(REQUEUED_ANNOTATION)) {
          blocked.push(`${pod[1]}/${pod[2]}`);
          res.writeHead(403, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              kind: 'Status',
              apiVersion: 'v1',
              status: 'Failure',
              reason: 'Forbidden',
              code: 403,
              message: 'the e2e touch blocker refuses floatip’s requeue touch',
            }),
          );
          return;
        }
        const headers = { ...req.headers, host: upstream.host };
        delete headers.authorization;
        const up = request(
          { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers, agent },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            // a watch's headers come long before its first event, and its client waits for them
            res.flushHeaders();
            answer.pipe(res);
          },
        );
        up.on('error', (err) => {
          if (!res.headersSent) res.writeHead(502);
          res.end(String(err));
        });
        res.on('close', () => up.destroy());
        up.end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const kubeconfig = join(runDir(), 'touch-blocker.kubeconfig');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: blocker, cluster: {server: "http://127.0.0.1:' + port + '"}}]',
        'users: [{name: blocker, user: {}}]',
        'contexts: [{name: blocker, context: {cluster: blocker, user: blocker}}]',
        'current-context: blocker',
        '',
      ].join('\n'),
    );
    return new TouchBlocker(server, kubeconfig, blocked);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve(Buffer.concat(chunks)));
  });
}
