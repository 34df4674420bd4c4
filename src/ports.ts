// The ports floatip serves (the extender, the REST API, the health port, the admission webhook),
// opened alike: every refusal a caller's bytes earn before any handler runs is answered in words,
// and no caller may keep a socket longer than INBOUND_REQUEST_TIMEOUT_MS to send its request.
import {
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
  createServer,
  maxHeaderSize,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { continuingOnRead } from './http.js';
import { refuseExpectation, requiringHost, versionRefusal } from './http-refusals.js';
import type { Logger } from './log.js';
import { boundedPipeline } from './pipeline.js';

/**
 * A request's headers and body must all have arrived within this, on every port. node's default
 * is 300 s, so a caller sending a byte now and then held a socket and its buffers five minutes on
 * ports anyone may reach. A minute is far above what a real caller needs: kube-scheduler's calls
 * end within its httpTimeout, a REST body is at most 5 MiB, an admission review far less.
 */
export const INBOUND_REQUEST_TIMEOUT_MS = 60_000;

/** How long an idle kept-alive connection to a port of floatip's stays open. */
const KEEP_ALIVE_MS = 120_000;

/** The most connections a port keeps open, whatever the process may open (see connectionLimit). */
const MOST_CONNECTIONS = 4096;

/**
 * The most connections one port keeps open: an eighth of the file descriptors the process may
 * open (RLIMIT_NOFILE's soft limit, the `Max open files` row of /proc/self/limits), at most
 * MOST_CONNECTIONS. Without a bound, anyone who reaches a port could open connections until the
 * process had no descriptor left, and floatip could no longer reach the API server (its watches,
 * a bind's writes); the four ports together keep at most half. An idle connection that has made a
 * request holds about 12 KiB of the process (5,000 on node 20: 59 MB), so 4,096 about 48 MB;
 * kube-scheduler keeps a handful.
 */
export function connectionLimit(limits: string | undefined): number {
  const soft = /^Max open files\s+(\d+|unlimited)/m.exec(limits ?? '')?.[1];
  if (soft === undefined || soft === 'unlimited') return MOST_CONNECTIONS;
  return Math.max(16, Math.min(MOST_CONNECTIONS, Math.floor(Number(soft) / 8)));
}

/** connectionLimit of this process (MOST_CONNECTIONS where /proc is not there to say). */
export function processConnectionLimit(): number {
  let limits: string | undefined;
  try {
    limits = readFileSync('/proc/self/limits', 'utf8');
  } catch {
    limits = undefined;
  }
  return connectionLimit(limits);
}

/** How often at most a port logs the connections it refused at its bound. */
const DROP_LOG_INTERVAL_MS = 10_000;

/**
 * Connections refused at the port's bound (node closes them unanswered as they arrive), told in one
 * warning per DROP_LOG_INTERVAL_MS with their count: a flood of them must not flood the log too.
 */
function loggingDrops(what: string, server: Server, log: Logger): void {
  let dropped = 0;
  let timer: NodeJS.Timeout | undefined;
  const tell = () => {
    timer = undefined;
    if (dropped === 0) return;
    log.warn(
      { port: what, refused: dropped, open: server.maxConnections },
      `${what}: refused ${dropped} connection(s) unanswered, ${server.maxConnections} being open, the most it keeps`,
    );
    dropped = 0;
    timer = setTimeout(tell, DROP_LOG_INTERVAL_MS).unref();
  };
  server.on('drop', () => {
    dropped++;
    if (!timer) tell();
  });
  server.once('close', () => clearTimeout(timer));
}

/**
 * The answer to a request node's HTTP parser refused before any handler saw it (a raw non-ASCII
 * byte in the request line, two Content-Lengths, Transfer-Encoding beside Content-Length, headers
 * over node's limit): node's own is a bare status line, which leaves the caller guessing. Plain
 * text on every port, as the CONNECT answer: the parser failed before the path was known, so the
 * port's JSON shape would be a guess too. The connection is closed, since what follows the bad
 * bytes cannot be framed.
 */
export function clientErrorAnswer(err: Error & { code?: string; reason?: string }): string {
  const [status, text, body] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'Request Header Fields Too Large',
          `request header fields too large: over ${maxHeaderSize} bytes`,
        ]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'HPE_HEADER_TIMEOUT'
        ? [408, 'Request Timeout', 'request timeout: the request did not arrive in time']
        : // HTTP/2's preface on a plain port: node's own words were "Pause on PRI/Upgrade"
          err.code === 'HPE_PAUSED_H2_UPGRADE'
          ? [505, 'HTTP Version Not Supported', versionRefusal('HTTP/2.0')]
          : // the caller closed its side mid-request: node's words were "Invalid EOF state"
            err.code === 'HPE_INVALID_EOF_STATE'
            ? [400, 'Bad Request', 'bad request: the connection was closed before the request was whole']
            : [400, 'Bad Request', `bad request: ${err.reason ?? err.message}`];
  return (
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** The connections whose bytes node's parser refused: answered once. */
const refused = new WeakSet<Duplex>();

/** What node keeps on a connection of its HTTP server: the answer being written on it. */
type Answering = ServerResponse & { readonly req: IncomingMessage };

/**
 * Answers node's refusal of the bytes on `socket` in its turn. The requests before the bad bytes
 * (pipelined in the same write) were parsed and are being answered: their answers go first, in
 * order, as Go's server answers them one by one before it reads the bad one. Written at once, the
 * refusal took the place of the first answer (a bind that was decided, answered 400 for the bytes
 * after it) and the connection closed under the others. A request whose own body holds the bad
 * bytes is answered with the refusal, unless its answer has begun: then the connection is cut.
 */
function refuseInTurn(err: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable) return void socket.destroy();
  const answering = (socket as { _httpMessage?: Answering | null })._httpMessage;
  if (answering?.req.complete) {
    // node hands the connection to the next answer when this one finishes (before this listener)
    let turned = false;
    const next = () => {
      if (turned) return;
      turned = true;
      refuseInTurn(err, socket);
    };
    answering.once('finish', next);
    answering.once('close', next);
    return;
  }
  if (answering?.headersSent) return void socket.destroy();
  socket.end(clientErrorAnswer(err));
}

/** A port floatip was told to serve on could not be opened (in use, not permitted). */
export class ListenError extends Error {
  readonly kind = 'unavailable';
}

export function listen(
  what: string,
  app: RequestListener,
  {
    host,
    requestTimeoutMs,
    maxConnections,
    log,
  }: {
    readonly host: string;
    readonly requestTimeoutMs: number;
    /** The most open connections (default processConnectionLimit()). */
    readonly maxConnections?: number;
    /** Where connections refused at that bound are told. */
    readonly log?: Logger;
  },
  port: number,
  tls?: { readonly cert: string; readonly key: string },
): Promise<Server> {
  return new Promise((resolve, reject) => {
    const guarded = boundedPipeline(requiringHost(app));
    const timeouts = {
      requestTimeout: requestTimeoutMs,
      headersTimeout: requestTimeoutMs,
      // longer than kube-scheduler's Go client keeps an idle connection (90 s), so that the client
      // closes it first: node's 5 s closed it under a request sent as it closed (or on a replica
      // paused past it, whose timers run before it reads), and a reset POST is not sent again.
      // galaxy's Go server kept idle connections without a bound.
      keepAliveTimeout: KEEP_ALIVE_MS,
      // node checks the deadlines only this often (its default, 30 s, is half the bound again)
      connectionsCheckingInterval: Math.min(5000, Math.max(100, requestTimeoutMs / 4)),
    };
    const server = tls
      ? createHttpsServer(
          { ...tls, ...timeouts, handshakeTimeout: requestTimeoutMs, requireHostHeader: false },
          guarded,
        )
      : createServer({ ...timeouts, requireHostHeader: false }, guarded);
    // a caller expecting 100-continue is sent it when its body is read, not as it arrives (http.ts)
    server.on('checkContinue', continuingOnRead(guarded));
    server.on('checkExpectation', refuseExpectation);
    // node drops the headers after its 2000th, a Host or Content-Type among them, while its parser
    // still frames the body by them; node's 16 KiB for all headers is the bound, as 1 MiB is Go's
    server.maxHeadersCount = 0;
    server.maxConnections = maxConnections ?? processConnectionLimit();
    if (log) loggingDrops(what, server, log);
    // CONNECT asks for a tunnel, which no port of floatip offers; without this node drops the
    // connection without a word, where every other method a path does not take gets a 405
    server.on('connect', (_req, socket: Duplex) => {
      socket.on('error', () => undefined);
      socket.end(
        'HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\n' +
          'Content-Length: 27\r\nConnection: close\r\n\r\nmethod not allowed: CONNECT',
      );
    });
    server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
      if (err.code === 'ECONNRESET') return void socket.destroy();
      // the parser repeats its error for every later chunk on the connection: answered once
      if (refused.has(socket)) return;
      refused.add(socket);
      socket.on('error', () => undefined);
      refuseInTurn(err, socket);
    });
    server.once('error', (err: NodeJS.ErrnoException) => {
      const where = `${host}:${port}`;
      const why =
        err.code === 'EADDRINUSE'
          ? 'is already in use'
          : err.code === 'EACCES'
            ? 'may not be opened by this user'
            : `cannot be opened: ${err.message}`;
      reject(new ListenError(`${what} ${where} ${why}`));
    });
    server.listen(port, host, () => resolve(server));
  });
}

export function urlOf(bind: string, server: Server, tls?: unknown): string {
  const { port } = server.address() as AddressInfo;
  return `${tls ? 'https' : 'http'}://${bind === '0.0.0.0' ? '127.0.0.1' : bind}:${port}`;
}

export function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
