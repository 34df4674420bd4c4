// One watch request, read as the API server writes it: one JSON event per line. client-node's Watch
// sent every event through node-fetch, a PassThrough and readline before its JSON.parse, and
// dropped a line it could not parse without a word; here the response's chunks are cut at their
// newlines and each line parsed once, and a line that is not an event ends the watch with an
// error, so that the reflector lists again rather than miss what the line said.
import type { ClientRequest, IncomingMessage } from 'node:http';
import { ApiConnection } from './api-connection.js';
import { answerError, KubeApiError } from './api-error.js';
import type { WatchPacing } from './watch-pacing.js';

export interface WatchEvent {
  readonly type: string;
  readonly object: unknown;
}

export interface WatchRequest {
  /**
   * Resolves once the server answered 200; rejects with a KubeApiError when it answered otherwise,
   * could not be reached, or abort() came first (`done` is then never called).
   */
  readonly opened: Promise<void>;
  /** Ends the watch (or the request, before its answer); `done` is then called without an error. */
  abort(): void;
}

const NEWLINE = 0x0a;
/** Far above any object the API server stores (etcd refuses values over 1.5 MiB by default). */
export const MAX_EVENT_BYTES = 32 * 2 ** 20;

/**
 * GETs `path` with `watch=true` and `query`. Each event goes to `onEvent`; once opened, `done` is
 * called exactly once when the watch ends: without an error at the server's end or on abort().
 * With `pacing`, the socket rests after each read (watch-pacing.ts).
 */
export function watchLines(
  connection: ApiConnection,
  path: string,
  query: Readonly<Record<string, string | number | boolean | undefined>>,
  what: string,
  onEvent: (event: WatchEvent) => void,
  done: (err?: KubeApiError) => void,
  pacing?: WatchPacing,
): WatchRequest {
  let req: ClientRequest | undefined;
  let open = false;
  let finished = false;
  // req.destroy(), not an AbortSignal: node reports a signal's AbortError as uncaught when it comes
  // after the response has ended
  const finish = (err?: KubeApiError) => {
    if (finished) return;
    finished = true;
    req?.destroy();
    if (open) done(err);
  };
  const failure = (err: Error) => (finished ? undefined : new KubeApiError(0, '', `${what}: ${err.message}`));

  const opened = (async () => {
    const settings = await connection.current();
    if (finished) throw new KubeApiError(0, '', `${what}: aborted`);
    const params = new URLSearchParams({ watch: 'true' });
    for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      req = settings.request(
        new URL(`${settings.base}${path}?${params}`),
        {
          method: 'GET',
          agent: settings.agent,
          headers: { ...settings.headers, Accept: 'application/json' },
        },
        (res) => {
          // from the answer on: a destroyed response emits an error even when we destroyed it
          res.on('error', (err: Error) => finish(failure(err)));
          resolve(res);
        },
      );
      req.on('error', (err: Error) => {
        // before the answer: the request's failure; after it, the response's own events tell
        reject(failure(err) ?? new KubeApiError(0, '', `${what}: aborted`));
        finish(failure(err));
      });
      req.end();
    });
    if (res.statusCode !== 200) {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      finish();
      throw answerError(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'), what);
    }
    if (finished) throw new KubeApiError(0, '', `${what}: aborted`);
    open = true;
    // TCP keep-alive on the watch's connection, as client-node sets it
    res.socket?.setKeepAlive(true, 30_000);
    read(res);
  })();

  function read(res: IncomingMessage): void {
    // the pieces of a line cut across chunks, joined once at its newline (not once per chunk)
    let pieces: Buffer[] = [];
    let pending = 0;
    const socket = res.socket;
    const watching = () => !finished;
    res.on('data', (chunk: Buffer) => {
      if (pacing && socket) pacing.read(socket, watching);
      let from = 0;
      for (let nl = chunk.indexOf(NEWLINE); nl >= 0 && !finished; nl = chunk.indexOf(NEWLINE, from)) {
        const piece = chunk.subarray(from, nl);
        from = nl + 1;
        const line = pending ? Buffer.concat([...pieces, piece]) : piece;
        pieces = [];
        pending = 0;
        if (line.length > 0) deliver(line);
      }
      if (from < chunk.length && !finished) {
        pieces.push(chunk.subarray(from));
        pending += chunk.length - from;
        if (pending > MAX_EVENT_BYTES)
          finish(new KubeApiError(0, '', `${what}: an event longer than ${MAX_EVENT_BYTES} bytes`));
      }
    });
    res.on('end', () => finish(pending ? notAnEvent(Buffer.concat(pieces)) : undefined));
    res.on('close', () =>
      finish(res.complete ? undefined : new KubeApiError(0, '', `${what}: the connection closed mid-stream`)),
    );
  }

  function deliver(line: Buffer): void {
    let event: unknown;
    try {
      event = JSON.parse(line.toString('utf8'));
    } catch {
      event = undefined;
    }
    const e = event as { type?: unknown; object?: unknown } | undefined;
    if (typeof e?.type !== 'string' || typeof e.object !== 'object' || e.object === null)
      return finish(notAnEvent(line));
    onEvent({ type: e.type, object: e.object });
  }

  function notAnEvent(line: Buffer): KubeApiError {
    const text = line.toString('utf8');
    const shown = text.length > 200 ? `${text.slice(0, 200)}...` : text;
    return new KubeApiError(0, '', `${what}: a line that is not a watch event: ${shown}`);
  }

  return { opened, abort: () => finish() };
}
