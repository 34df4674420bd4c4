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

/** An Expect that asks for 100 Continue, as node's server reads it. */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;

/** The words of a 505: which version came, and which this port speaks. */
export const versionRefusal = (version: string) =>
  `http version not supported: ${version}; this port speaks HTTP/1.1 and HTTP/1.0 (no HTTP/2, no h2c)`;

/**
 * `app`, but what Go's server, galaxy's, refuses and node's parser lets through is refused in
 * words: another HTTP major version than 1 (505), an HTTP/1.1 request without a Host header or with
 * two (400; the server is to be made with `requireHostHeader: false`), a Transfer-Encoding other
 * than chunked (501: node passed `gzip, chunked` bodies on still gzipped, read as JSON), and an
 * HTTP/1.0 request's Expect other than 100-continue (417, which node answers in HTTP/1.1 only).
 */
export function requiringHost(app: RequestListener): RequestListener {
  return (req, res) => {
    // node's parser takes `GET / HTTP/2.0` and a request line without a version (HTTP/0.9) and
    // answered them as HTTP/1.1
    if (req.httpVersionMajor !== 1) return refuse(res, 505, versionRefusal(`HTTP/${req.httpVersion}`));
    const hosts = req.headersDistinct.host?.length ?? 0;
    if (req.httpVersion === '1.1' && hosts === 0)
      return refuse(res, 400, 'bad request: missing required Host header');
    // node keeps the first: which host was meant is anyone's guess
    if (hosts > 1) return refuse(res, 400, 'bad request: too many Host headers');
    // node looks at Expect in HTTP/1.1 only; Go's server refuses an unknown one in HTTP/1.0 too (and
    // sends HTTP/1.0's callers no 100, which node's default does not either)
    if (req.httpVersion === '1.0' && req.headers.expect !== undefined && !CONTINUE.test(req.headers.expect))
      return refuseExpectation(req, res);
    const coding = req.headers['transfer-encoding'];
    if (coding !== undefined && coding.trim().toLowerCase() !== 'chunked')
      return refuse(
        res,
        501,
        `not implemented: Transfer-Encoding ${JSON.stringify(coding.slice(0, 200))}; only chunked is`,
      );
    app(req, res);
  };
}

/** The server's `checkExpectation` listener: an Expect it does not know is a 417 that names it. */
export function refuseExpectation(req: IncomingMessage, res: ServerResponse): void {
  const expect = String(req.headers.expect).slice(0, 200);
  refuse(res, 417, `expectation failed: only 100-continue is understood, not ${JSON.stringify(expect)}`);
}
