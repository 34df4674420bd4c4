// The two writes of every bind (its FloatingIP object, the pod's binding), sent without
// client-node's request machinery: per call that built a fetch request through node-fetch, read
// the kubeconfig's CA and credentials again (applyOptions: files read from disk each time), ran its
// middleware chain and an AbortController, a third of floatip's CPU per bound pod in bench:e2e's
// profile. Here each POST is one request on undici's pool for the API server (api-connection.ts),
// or node's request on client-node's agent for a server behind a proxy.
//
// A 429 with a Retry-After is sent again after that wait, while the caller's deadline allows, as
// client-go does for every call (galaxy's two writes included; resend.ts).
import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { errors as undiciErrors } from 'undici';
import { ApiConnection, type ConnectionSettings } from './api-connection.js';
import { answerError, KubeApiError } from './api-error.js';
import { header, resendOn429 } from './resend.js';
import { REQUEST_TIMEOUT_MS } from './shared-agent.js';

/** The answer as it came: its status, body, and Retry-After header. */
interface Answer {
  readonly status: number;
  readonly text: string;
  readonly retryAfter: string | undefined;
}

export class JsonPost {
  private readonly connection: ApiConnection;

  constructor(kubeConfig: KubeConfig) {
    this.connection = new ApiConnection(kubeConfig);
  }

  /**
   * POSTs `body` as JSON to `path` on the API server; the answer's parsed body, or a KubeApiError
   * (the Status the server answered, or status 0 when no answer came: the kubeconfig's TLS material
   * unusable, the server unreachable or refused, or no answer within `timeoutMs`). A 429 is sent
   * again after its Retry-After when that ends within `timeoutMs`, each time only if `mayResend`
   * (the caller's leadership check) does not throw.
   */
  async post(
    path: string,
    body: unknown,
    what: string,
    timeoutMs = REQUEST_TIMEOUT_MS,
    mayResend: () => void = () => undefined,
  ): Promise<unknown> {
    const payload = JSON.stringify(body);
    const deadline = Date.now() + timeoutMs;
    const answer = await resendOn429<Answer>({
      send: () => this.send(path, payload, what, deadline - Date.now(), timeoutMs),
      retryAfterOf: (a) => (a.status === 429 ? a.retryAfter : undefined),
      pause: async (ms) => {
        if (Date.now() + ms >= deadline) return false;
        await sleep(ms);
        return true;
      },
      mayResend,
    });
    if (answer.status < 200 || answer.status >= 300) throw answerError(answer.status, answer.text, what);
    try {
      return answer.text ? JSON.parse(answer.text) : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * One send of the write, within `timeoutMs` of the caller's `budgetMs`; throws a KubeApiError of
   * status 0 when no answer came.
   */
  private async send(
    path: string,
    payload: string,
    what: string,
    timeoutMs: number,
    budgetMs: number,
  ): Promise<Answer> {
    const ms = Math.max(1, Math.floor(timeoutMs));
    try {
      // inside: the kubeconfig's TLS material is parsed here (a key that is not the certificate's
      // fails now, not at connect), and its failure names this write as any other does
      const settings = await this.connection.current();
      return await (settings.pool
        ? viaPool(settings, path, payload, ms)
        : viaAgent(settings, path, payload, ms));
    } catch (err) {
      const e = err as Error;
      const why =
        e instanceof undiciErrors.HeadersTimeoutError ||
        e instanceof undiciErrors.BodyTimeoutError ||
        e.name === 'TimeoutError'
          ? `no answer within ${budgetMs} ms`
          : e.message;
      throw new KubeApiError(0, '', `${what}: ${why}`);
    }
  }
}

/**
 * A write's headers for these settings, built once per settings (they change at most once per
 * their TTL), as the flat list undici takes without walking an object's keys per request.
 */
const headersFor = new WeakMap<
  ConnectionSettings,
  { readonly object: Record<string, string>; readonly flat: string[] }
>();
function headersOf(settings: ConnectionSettings) {
  let headers = headersFor.get(settings);
  if (!headers) {
    const object: Record<string, string> = {};
    for (const [name, value] of Object.entries(settings.headers))
      if (value !== undefined)
        object[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    object.accept = 'application/json';
    object['content-type'] = 'application/json';
    headers = { object, flat: Object.entries(object).flat() };
    headersFor.set(settings, headers);
  }
  return headers;
}

/**
 * undici bounds the wait for the answer's head and then for each piece of its body, not the whole:
 * the API server sends a write's small answer at once, so the head's bound is the call's. Through
 * `dispatch`, not `request`: the answer's few hundred bytes are gathered as they come, without the
 * Readable stream, abort wiring and promise `request` builds around every answer (bench:
 * 30-60 us less of the client's CPU per POST over TLS, of about 200).
 */
function viaPool(settings: ConnectionSettings, path: string, payload: string, ms: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let status = 0;
    let retryAfter: string | undefined;
    settings.pool!.dispatch(
      {
        path: settings.prefix + path,
        method: 'POST',
        headers: headersOf(settings).flat,
        body: payload,
        headersTimeout: ms,
        bodyTimeout: ms,
      },
      {
        onRequestStart() {},
        onResponseStart(_controller, statusCode, headers) {
          status = statusCode;
          retryAfter = header(headers['retry-after']);
        },
        onResponseData(_controller, chunk) {
          chunks.push(chunk);
        },
        onResponseEnd() {
          resolve({ status, text: Buffer.concat(chunks).toString('utf8'), retryAfter });
        },
        onResponseError(_controller, err) {
          reject(err);
        },
      },
    );
  });
}

/** node's request on client-node's agent (a proxy's), bounded by a timer that destroys it. */
function viaAgent(settings: ConnectionSettings, path: string, payload: string, ms: number): Promise<Answer> {
  const bytes = Buffer.from(payload);
  return new Promise((resolve, reject) => {
    const req = settings.request(
      new URL(settings.base + path),
      {
        method: 'POST',
        agent: settings.agent,
        headers: { ...headersOf(settings).object, 'content-length': bytes.length },
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
        res.on('end', () => {
          clearTimeout(timer);
          resolve({
            status: res.statusCode ?? 0,
            text: Buffer.concat(chunks).toString('utf8'),
            retryAfter: header(res.headers['retry-after']),
          });
        });
      },
    );
    const timer = setTimeout(() => {
      const err = new Error('timed out');
      err.name = 'TimeoutError';
      req.destroy(err);
    }, ms);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(bytes);
  });
}
