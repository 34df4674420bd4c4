// The two writes of every bind (its FloatingIP object, the pod's binding), sent without
// client-node's request machinery: per call that built a fetch request through node-fetch, read
// the kubeconfig's CA and credentials again (applyOptions: files read from disk each time), ran its
// middleware chain and an AbortController, a third of floatip's CPU per bound pod in bench:e2e's
// profile. Here each POST is one node http request on the connection settings of api-connection.ts.
import type { KubeConfig } from '@kubernetes/client-node';
import { ApiConnection } from './api-connection.js';
import { answerError, KubeApiError } from './api-error.js';
import { REQUEST_TIMEOUT_MS } from './shared-agent.js';

export class JsonPost {
  private readonly connection: ApiConnection;

  constructor(kubeConfig: KubeConfig) {
    this.connection = new ApiConnection(kubeConfig);
  }

  /**
   * POSTs `body` as JSON to `path` on the API server; the answer's parsed body, or a KubeApiError
   * (the Status the server answered, or status 0 when no answer came within `timeoutMs`).
   */
  async post(path: string, body: unknown, what: string, timeoutMs = REQUEST_TIMEOUT_MS): Promise<unknown> {
    const settings = await this.connection.current();
    const payload = Buffer.from(JSON.stringify(body));
    const url = new URL(settings.base + path);
    return new Promise((resolve, reject) => {
      const req = settings.request(
        url,
        {
          method: 'POST',
          agent: settings.agent,
          headers: {
            ...settings.headers,
            Accept: 'application/json',
            'Content-Type': 'application/json',
            'Content-Length': payload.length,
          },
          signal: AbortSignal.timeout(Math.max(1, Math.floor(timeoutMs))),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', (err) => reject(new KubeApiError(0, '', `${what}: ${err.message}`)));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            if (status < 200 || status >= 300) return reject(answerError(status, text, what));
            try {
              resolve(text ? JSON.parse(text) : undefined);
            } catch {
              resolve(undefined);
            }
          });
        },
      );
      req.on('error', (err: Error) => {
        const why =
          err.name === 'AbortError' || err.name === 'TimeoutError'
            ? `no answer within ${timeoutMs} ms`
            : err.message;
        reject(new KubeApiError(0, '', `${what}: ${why}`));
      });
      req.end(payload);
    });
  }
}
