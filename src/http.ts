// Answering before a request's body has all arrived (a 413 past the limit, a 404 or 401 that reads
// none of it), on every port: the connection is closed, or keep-alive would read all that was
// announced, a terabyte as well, for nobody. And it is closed gently: node destroys the socket once
// the answer is written, and a socket destroyed while the caller's body still arrives is reset by
// the kernel, a reset that can throw away the answer before the caller has read it (the caller sees
// ECONNRESET, not the 413). So the answer goes out with a FIN, what still comes is read and dropped,
// and the socket is destroyed when the caller closes its side or LINGER_MS later (Apache's
// lingering close; Go's server reads up to 256 KiB of an unread body for the same reason). A caller
// that waits for `100 Continue` before it sends its body gets one only once a handler reads it.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

const LINGER_MS = 2_000;

/**
 * Whether the request has a body that has not all arrived. A bodiless GET is not complete yet while
 * its handler runs, and keeps its connection.
 */
export const bodyPending = (req: IncomingMessage): boolean =>
  !req.complete &&
  (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0);

/** Marks the answer `Connection: close` and closes the connection after it gently (above). */
export function closeAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('Connection', 'close');
  const socket = req.socket;
  socket.destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once('close', () => clearTimeout(timer));
  };
}

/**
 * The answers whose callers wait for `100 Continue` before they send their body (`Expect:
 * 100-continue`). Go's server, galaxy's, sends the 100 when a handler first reads the body, so a
 * request refused unread (too large, no route, the wrong method or type) is told so and its body
 * never comes; node sends it as the request arrives, unless the server has a 'checkContinue'
 * listener, and a caller announcing a body over the limit was asked for it, then refused.
 */
const awaitingContinue = new WeakSet<ServerResponse>();

/**
 * The 'checkContinue' listener of a port: `app`, with the 100 left to whichever handler reads the
 * body (continueBody). A request without a body is never sent one, as Go sends none.
 */
export function continuingOnRead(app: RequestListener): RequestListener {
  return (req, res) => {
    if (bodyPending(req)) awaitingContinue.add(res);
    app(req, res);
  };
}

/**
 * Called just before a handler reads the body: the 100 its caller waits for, once. An answer queued
 * behind others of its connection (pipelined) sends it when its turn comes: written before, node
 * put the answer's head in front of it, a 100 after the 200 it preceded. By then a handler that
 * has answered (its body came without waiting for the 100) needs none.
 */
export function continueBody(res: ServerResponse): void {
  if (!awaitingContinue.delete(res)) return;
  if (res.socket) return res.writeContinue();
  res.once('socket', () => {
    if (!res.headersSent) res.writeContinue();
  });
}
