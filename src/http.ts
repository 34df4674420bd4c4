// Answering before a request's body has all arrived (a 413 past the limit, a 404 or 401 that reads
// none of it), on every port: the connection is closed, or keep-alive would read all that was
// announced, a terabyte as well, for nobody. And it is closed gently: node destroys the socket once
// the answer is written, and a socket destroyed while the caller's body still arrives is reset by
// the kernel, a reset that can throw away the answer before the caller has read it (the caller sees
// ECONNRESET, not the 413). So the answer goes out with a FIN, what still comes is read and dropped,
// and the socket is destroyed when the caller closes its side or LINGER_MS later (Apache's
// lingering close; Go's server reads up to 256 KiB of an unread body for the same reason).
import type { IncomingMessage, ServerResponse } from 'node:http';

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
