// Requests pipelined on one connection (sent one after another without waiting for the answers)
// are handled a few at a time. node parses all it has received and hands every request to the
// handler at once, answers queued in memory behind the first: a caller that pipelined 100,000
// `GET /v1/ip?size=1000` (4 MB sent) and never read made floatip compute and hold every answer,
// hundreds of MB, and the event loop answered nobody else for seconds, after the caller had left
// too. Go's server, galaxy's, reads a connection's next request only once the last is answered.
// Here a connection's requests beyond MAX_ANSWERING wait, unhandled, until answers before them
// are done, and reading from the connection stops meanwhile (what was received in one read is
// still parsed). kube-scheduler never pipelines: each of its connections carries one call at a time.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** The most requests of one connection handled at once. */
export const MAX_ANSWERING = 8;

/** node's own marks on a connection of its HTTP server (the same it sets to pause one). */
type ServedSocket = Socket & {
  _paused?: boolean;
  parser?: { pause(): void; resume(): void } | null;
};

interface Connection {
  answering: number;
  readonly waiting: [IncomingMessage, ServerResponse][];
  /** The answers begun and not closed. */
  readonly open: Set<ServerResponse>;
}

/**
 * Tells the handlers of an answer that it can no longer be sent, as node tells them of the one
 * it is writing when the connection closes: node says nothing of the answers queued behind that
 * one, and the extender port's accounting (a body's share of the budget, the requests a shutdown
 * waits for) waited for their 'close' for ever. Three binds pipelined by a caller that left held
 * their bodies' bytes, and SIGTERM, past the process's life.
 */
function closeUnsent(res: ServerResponse): void {
  const unsent = res as ServerResponse & { _closed?: boolean; destroyed: boolean };
  if (unsent._closed) return;
  unsent._closed = true;
  unsent.destroyed = true;
  res.emit('close');
}

const connections = new WeakMap<Socket, Connection>();

/** `app`, handling at most MAX_ANSWERING requests of a connection at once. */
export function boundedPipeline(app: RequestListener): RequestListener {
  const run = (connection: Connection, req: IncomingMessage, res: ServerResponse) => {
    connection.answering++;
    connection.open.add(res);
    let done = false;
    // 'close' comes once the answer is sent, or can no longer be
    res.once('close', () => {
      if (done) return;
      done = true;
      connection.answering--;
      connection.open.delete(res);
      next(connection, req.socket as ServedSocket);
    });
    app(req, res);
  };
  const next = (connection: Connection, socket: ServedSocket) => {
    while (connection.answering < MAX_ANSWERING && connection.waiting.length > 0) {
      const [req, res] = connection.waiting.shift()!;
      // a request of a connection gone is answered by nobody
      if (!socket.destroyed) run(connection, req, res);
    }
    // read again once what waits is handled, unless node paused the connection for its own reasons
    if (connection.waiting.length === 0 && socket._paused && !socket.writableNeedDrain) {
      socket._paused = false;
      socket.parser?.resume();
      socket.resume();
    }
  };
  return (req, res) => {
    const socket = req.socket as ServedSocket;
    let connection = connections.get(socket);
    if (!connection) {
      const made: Connection = { answering: 0, waiting: [], open: new Set() };
      connections.set(socket, made);
      socket.once('close', () => {
        made.waiting.length = 0;
        // the one being written is node's to close
        const writing = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
        for (const unsent of [...made.open]) if (unsent !== writing) closeUnsent(unsent);
      });
      connection = made;
    }
    if (connection.answering < MAX_ANSWERING && connection.waiting.length === 0)
      return run(connection, req, res);
    connection.waiting.push([req, res]);
    // as node pauses a connection whose answers are not read: the parser stops after this read
    if (!socket._paused) {
      socket._paused = true;
      socket.pause();
    }
  };
}
