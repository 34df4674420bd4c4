// Two requests node's HTTP server refuses itself, with a bare status line and no word of why: an
// HTTP/1.1 request without a Host header (400) and an Expect other than 100-continue (417). Every
// other refusal of the ports says what was wrong (clientErrorAnswer in ports.ts), and so do these,
// in plain text as those do, closing the connection.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { bodyPending, closeAfterAnswer } from './http.js';

function refuse(res: ServerResponse, status: number, body: string): void {
  if (bodyPending(res.req)) closeAfterAnswer(res.req, res);
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  res.end(body);
}

/**
 * `app`, but an HTTP/1.1 request without a Host header is a 400 that says so (RFC 9112 3.2, as Go's
 * server answers it); the server is to be made with `requireHostHeader: false`.
 */
export function requiringHost(app: RequestListener): RequestListener {
  return (req, res) => {
    if (req.httpVersion === '1.1' && req.headers.host === undefined)
      return refuse(res, 400, 'bad request: missing required Host header');
    app(req, res);
  };
}

/** The server's `checkExpectation` listener: an Expect it does not know is a 417 that names it. */
export function refuseExpectation(req: IncomingMessage, res: ServerResponse): void {
  const expect = String(req.headers.expect).slice(0, 200);
  refuse(res, 417, `expectation failed: only 100-continue is understood, not ${JSON.stringify(expect)}`);
}
