// Requests of another HTTP major version than 1, which node's parser takes for HTTP/1.1 (below), and
// two requests node's HTTP server refuses itself, with a bare status line and no word of why: an
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

/** The words of a 505: which version came, and which this port speaks. */
export const versionRefusal = (version: string) =>
  `http version not supported: ${version}; this port speaks HTTP/1.1 and HTTP/1.0 (no HTTP/2, no h2c)`;

/**
 * `app`, but a request of another HTTP major version than 1 is a 505, and an HTTP/1.1 request without a Host header is a 400 that says so (RFC 9112 3.2, as Go's
 * server answers it); the server is to be made with `requireHostHeader: false`.
 */
export function requiringHost(app: RequestListener): RequestListener {
  return (req, res) => {
    // node's parser takes `GET / HTTP/2.0` and a request line without a version (HTTP/0.9) and
    // answered them as HTTP/1.1; Go's server, galaxy's, answers another major version 505
    if (req.httpVersionMajor !== 1) return refuse(res, 505, versionRefusal(`HTTP/${req.httpVersion}`));
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
