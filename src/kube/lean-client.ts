// The requests floatip makes per pod (a bind's FloatingIP object and binding, the patch of a reused
// or parked address, a release's delete, its Event and its read of the pod), sent without
// client-node's request machinery: per call that built a fetch request through node-fetch, read
// the kubeconfig's CA and credentials again (applyOptions: files read from disk each time), ran its
// middleware chain and an AbortController: a third of floatip's CPU per bound pod in bench:e2e's
// profile, and almost half of a release's in `npm run bench cycle`. Here each is one request on
// undici's pool for the API server (api-connection.ts), or node's request on client-node's agent
// for a server behind a proxy.
//
// A 429 with a Retry-After is sent again after that wait, while the caller's deadline allows, as
// client-go does for every call (galaxy's two writes included; resend.ts).
import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { type Pool, errors as undiciErrors } from 'undici';
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

/** A write's path and body (sent as JSON). */
type WriteArgs = [path: string, body: unknown, ...tail: RequestTail];
/** What it is (for its errors), its time bound and the leadership check asked before each resend. */
type RequestTail = [what: string, timeoutMs?: number, mayResend?: () => void];

/** A write: its method and how its body is read (JSON, or a JSON merge patch). */
export type WriteMethod = 'POST' | 'MERGE-PATCH' | 'DELETE';
type Method = WriteMethod | 'GET';

const REQUEST: Record<Method, { readonly method: string; readonly contentType?: string }> = {
  GET: { method: 'GET' },
  POST: { method: 'POST', contentType: 'application/json' },
  'MERGE-PATCH': { method: 'PATCH', contentType: 'application/merge-patch+json' },
  DELETE: { method: 'DELETE', contentType: 'application/json' },
};

export class LeanClient {
  private readonly connection: ApiConnection;

  constructor(kubeConfig: KubeConfig) {
    this.connection = new ApiConnection(kubeConfig);
  }

  /**
   * The object at `path`, parsed; a 404 is a KubeApiError as any other refusal (request), and so is
   * an answer that is no JSON object (a proxy's page must not read as no object).
   */
  async get(path: string, what: string, timeoutMs?: number): Promise<object> {
    return objectOf(await this.request('GET', path, undefined, what, timeoutMs), what);
  }

  /**
   * As get, but undefined when there is no such object: a release reads its deleted pod, and a
   * KubeApiError with its stack for each was a fifth of what reading it cost.
   */
  async find(path: string, what: string, timeoutMs?: number): Promise<object | undefined> {
    const answer = await this.exchange('GET', path, undefined, what, timeoutMs);
    return answer.status === 404 ? undefined : objectOf(bodyOf(answer, what), what);
  }

  /** POSTs `body` as JSON to `path` (write). */
  post(...args: WriteArgs): Promise<unknown> {
    return this.write('POST', ...args);
  }

  /** Sends `body` as JSON to `path` (request). */
  write(method: WriteMethod, path: string, body: unknown, ...tail: RequestTail): Promise<unknown> {
    return this.request(method, path, JSON.stringify(body), ...tail);
  }

  /**
   * Sends `payload` to `path` on the API server; the answer's parsed body, or a KubeApiError
   * (the Status the server answered, or status 0 when no answer came: the kubeconfig's TLS material
   * unusable, the server unreachable or refused, or no answer within `timeoutMs`). A 429 is sent
   * again after its Retry-After when that ends within `timeoutMs`, each time only if `mayResend`
   * (the caller's leadership check) does not throw.
   */
  private async request(
    method: Method,
    path: string,
    payload: string | undefined,
    ...tail: RequestTail
  ): Promise<unknown> {
    return bodyOf(await this.exchange(method, path, payload, ...tail), tail[0]);
  }

  /** The answer to the request, after resending 429s as request says. */
  private exchange(
    method: Method,
    path: string,
    payload: string | undefined,
    what: string,
    timeoutMs = REQUEST_TIMEOUT_MS,
    mayResend: () => void = () => undefined,
  ): Promise<Answer> {
    const deadline = Date.now() + timeoutMs;
    return resendOn429<Answer>({
      send: () => this.send(method, path, payload, what, deadline - Date.now(), timeoutMs),
      retryAfterOf: (a) => (a.status === 429 ? a.retryAfter : undefined),
      pause: async (ms) => {
        if (Date.now() + ms >= deadline) return false;
        await sleep(ms);
        return true;
      },
      mayResend,
    });
  }

  /**
   * One send of the request, within `timeoutMs` of the caller's `budgetMs`; throws a KubeApiError of
   * status 0 when no answer came.
   */
  private async send(
    method: Method,
    path: string,
    payload: string | undefined,
    what: string,
    timeoutMs: number,
    budgetMs: number,
  ): Promise<Answer> {
    const ms = Math.max(1, Math.floor(timeoutMs));
    try {
      // inside: the kubeconfig's TLS material is parsed here (a key that is not the certificate's
      // fails now, not at connect), and its failure names this request as any other does
      const settings = await this.connection.current();
      const pool = settings.pool?.();
      const outgoing = { settings, method, path, payload, ms };
      return await (pool ? viaPool(pool, outgoing) : viaAgent(outgoing));
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

/** A success's parsed body (undefined when empty or not JSON), or the KubeApiError of the refusal. */
function bodyOf(answer: Answer, what: string): unknown {
  if (answer.status < 200 || answer.status >= 300) throw answerError(answer.status, answer.text, what);
  try {
    return answer.text ? JSON.parse(answer.text) : undefined;
  } catch {
    return undefined;
  }
}

function objectOf(answer: unknown, what: string): object {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
    throw new KubeApiError(0, '', `${what}: the answer is not a JSON object`);
  return answer;
}

interface Headers {
  readonly object: Record<string, string>;
  readonly flat: string[];
}

/**
 * A write's headers for these settings, built once per settings and method (settings change at
 * most once per their TTL), as the flat list undici takes without walking an object's keys per
 * request.
 */
const headersFor = new WeakMap<ConnectionSettings, Map<Method, Headers>>();
function headersOf(settings: ConnectionSettings, method: Method): Headers {
  let byMethod = headersFor.get(settings);
  if (!byMethod) headersFor.set(settings, (byMethod = new Map()));
  let headers = byMethod.get(method);
  if (!headers) {
    const object: Record<string, string> = {};
    for (const [name, value] of Object.entries(settings.headers))
      if (value !== undefined)
        object[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    object.accept = 'application/json';
    const contentType = REQUEST[method].contentType;
    if (contentType) object['content-type'] = contentType;
    headers = { object, flat: Object.entries(object).flat() };
    byMethod.set(method, headers);
  }
  return headers;
}

/** One send: where, what, and within how many ms. */
interface Outgoing {
  readonly settings: ConnectionSettings;
  readonly method: Method;
  readonly path: string;
  readonly payload: string | undefined;
  readonly ms: number;
}

/** What a send's own timer ends it with (send() words it as `no answer within`). */
function timedOut(): Error {
  const err = new Error('timed out');
  err.name = 'TimeoutError';
  return err;
}

/**
 * Through undici's `dispatch`, not `request`: the answer's few hundred bytes are gathered as they
 * come, without the Readable stream, abort wiring and promise `request` builds around every answer
 * (bench: 30-60 us less of the client's CPU per POST over TLS, of about 200). Bounded by a timer of
 * node's own: undici's head and body timeouts above a second run on its coarse timer wheel, which
 * fires up to a second late, and a bind's steps must end within its budget.
 */
function viaPool(pool: Pool, { settings, method, path, payload, ms }: Outgoing): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let status = 0;
    let retryAfter: string | undefined;
    let controller: { abort(reason: Error): void } | undefined;
    let expired: Error | undefined;
    const timer = setTimeout(() => {
      expired = timedOut();
      controller?.abort(expired);
      reject(expired);
    }, ms);
    pool.dispatch(
      {
        path: settings.prefix + path,
        method: REQUEST[method].method,
        headers: headersOf(settings, method).flat,
        body: payload,
        // undici closes a connection after a DELETE that carries a body (a body HTTP gives no
        // meaning there), which cost every release a new connection; kube-apiserver reads
        // DeleteOptions from it, and client-go keeps the connection
        reset: false,
        // the timer above bounds the request; these only keep undici from its 300 s defaults
        headersTimeout: ms + 1_000,
        bodyTimeout: ms + 1_000,
      },
      {
        onRequestStart(started) {
          // a request that waited for a connection past its time is not sent
          if (expired) started.abort(expired);
          else controller = started;
        },
        onResponseStart(_controller, statusCode, headers) {
          status = statusCode;
          retryAfter = header(headers['retry-after']);
        },
        onResponseData(_controller, chunk) {
          chunks.push(chunk);
        },
        onResponseEnd() {
          clearTimeout(timer);
          resolve({ status, text: Buffer.concat(chunks).toString('utf8'), retryAfter });
        },
        onResponseError(_controller, err) {
          clearTimeout(timer);
          reject(err);
        },
      },
    );
  });
}

/** node's request on client-node's agent (a proxy's), bounded by a timer that destroys it. */
function viaAgent({ settings, method, path, payload, ms }: Outgoing): Promise<Answer> {
  const bytes = payload === undefined ? undefined : Buffer.from(payload);
  return new Promise((resolve, reject) => {
    const req = settings.request(
      new URL(settings.base + path),
      {
        method: REQUEST[method].method,
        agent: settings.agent,
        headers: bytes
          ? { ...headersOf(settings, method).object, 'content-length': bytes.length }
          : headersOf(settings, method).object,
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
    const timer = setTimeout(() => req.destroy(timedOut()), ms);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(bytes);
  });
}
