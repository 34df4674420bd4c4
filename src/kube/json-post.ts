// The two writes of every bind (its FloatingIP object, the pod's binding), sent without
// client-node's request machinery: per call that built a fetch request through node-fetch, read
// the kubeconfig's CA and credentials again (applyOptions: files read from disk each time), ran its
// middleware chain and an AbortController, a third of floatip's CPU per bound pod in bench:e2e's
// profile. Here the connection settings (the shared keep-alive agent, the Authorization header) are
// taken from the KubeConfig as client-node computes them, kept for a few seconds (so a rotated
// token or an exec credential still takes effect), and each POST is one node http request.
import { request as httpRequest, type Agent as HttpAgent, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError } from './api-error.js';
import { REQUEST_TIMEOUT_MS } from './shared-agent.js';

/** How long the credentials client-node computed are reused before they are asked for again. */
const SETTINGS_TTL_MS = 10_000;

interface Settings {
  /** The API server's URL without a trailing slash (it may have a path of its own). */
  readonly base: string;
  readonly agent: HttpAgent | undefined;
  readonly headers: OutgoingHttpHeaders;
  readonly at: number;
}

export class JsonPost {
  private settings: Settings | undefined;
  private pending: Promise<Settings> | undefined;

  constructor(private readonly kubeConfig: KubeConfig) {}

  /**
   * POSTs `body` as JSON to `path` on the API server; the answer's parsed body, or a KubeApiError
   * (the Status the server answered, or status 0 when no answer came within `timeoutMs`).
   */
  async post(path: string, body: unknown, what: string, timeoutMs = REQUEST_TIMEOUT_MS): Promise<unknown> {
    const settings = await this.current();
    const payload = Buffer.from(JSON.stringify(body));
    const url = new URL(settings.base + path);
    const https = url.protocol === 'https:';
    return new Promise((resolve, reject) => {
      const req = (https ? httpsRequest : httpRequest)(
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
            let parsed: unknown;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              parsed = undefined;
            }
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) return resolve(parsed);
            const s = parsed as { reason?: string; message?: string } | undefined;
            reject(
              new KubeApiError(
                status,
                s?.reason ?? '',
                `${what}: ${s?.message ?? (text || `HTTP ${status}`)}`,
              ),
            );
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

  /** The connection settings, computed by client-node at most once per SETTINGS_TTL_MS. */
  private current(): Promise<Settings> {
    const s = this.settings;
    if (s && Date.now() - s.at < SETTINGS_TTL_MS) return Promise.resolve(s);
    this.pending ??= this.compute().finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async compute(): Promise<Settings> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new KubeApiError(0, '', 'the kubeconfig names no cluster');
    const options: RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(options);
    const headers: OutgoingHttpHeaders = { ...(options.headers as OutgoingHttpHeaders | undefined) };
    if (options.auth) headers.Authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
    const base = cluster.server.replace(/\/+$/, '');
    this.settings = { base, agent: options.agent as HttpAgent | undefined, headers, at: Date.now() };
    return this.settings;
  }
}
