// The REST API's JSON bodies: express.json (body-parser: charsets, Content-Encoding, the limit once
// inflated), with a body over the limit answered 413 as soon as it is known to be, and the
// connection closed. body-parser alone answers only after it has read the refused body off the
// connection to its end: a caller announcing gigabytes, or streaming without end, held its request
// (and floatip's reading of it) until it chose to stop, with no answer.
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { closeAfterAnswer } from '../http.js';
import { ApiError } from './envelope.js';

/**
 * The most bytes an encoded body may take on the wire for a limit on its inflated size: deflate's
 * worst case (zlib's deflateBound, stored blocks) plus a gzip header and trailer, with room to spare.
 */
const wireLimitOf = (limit: number, encoded: boolean) =>
  encoded ? limit + Math.ceil(limit / 1024) + 1024 : limit;

function tooLarge(req: Request, res: Response, limit: number): ApiError {
  // what follows on the connection is the rest of a body nobody will read: nothing to keep it for
  closeAfterAnswer(req, res);
  return new ApiError(413, `the request body is over ${limit} bytes`);
}

/** Whether a request carries a body, as Go's ContentLength > 0 or a chunked one tells it. */
export const hasBody = (req: Request): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/** Each JSON body's bytes as they came (inflated) and their charset, for what JSON.parse forgets. */
const rawBodies = new WeakMap<Request, { readonly bytes: Buffer; readonly charset: string }>();

/**
 * The request's JSON body as the text body-parser parsed; undefined when there was none. A charset
 * that body-parser's iconv reads and the platform's TextDecoder does not (UTF-7, UTF-32, which no
 * JSON client sends) is refused (415) rather than left unread by the checks that need the text.
 */
export function rawJsonBody(req: Request): string | undefined {
  const raw = rawBodies.get(req);
  if (!raw) return undefined;
  try {
    return new TextDecoder(raw.charset).decode(raw.bytes);
  } catch {
    throw new ApiError(415, `unsupported charset ${JSON.stringify(raw.charset.toUpperCase())}`);
  }
}

/** express.json with `limitBytes`, which refuses an oversized body without reading the rest of it. */
export function jsonBody(limitBytes: number): RequestHandler {
  const parse = express.json({
    limit: limitBytes,
    verify: (req, _res, bytes, charset) => {
      rawBodies.set(req as Request, { bytes, charset });
    },
  });
  return (req: Request, res: Response, next: NextFunction) => {
    const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    const wireLimit = wireLimitOf(limitBytes, encoding !== 'identity' && encoding !== '');
    // announced too large: refused before a byte of it is read
    if (Number(req.headers['content-length']) > wireLimit) return next(tooLarge(req, res, limitBytes));
    let refused = false;
    let settled = false;
    let seen = 0;
    const watch = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen <= wireLimit || refused) return;
      refused = true;
      req.off('data', watch);
      next(tooLarge(req, res, limitBytes));
    };
    parse(req, res, (err?: unknown) => {
      settled = true;
      req.off('data', watch);
      // the parser's own word comes once the connection is gone: the 413 has been answered
      if (!refused) next(err);
    });
    // the parser reads the body in flowing mode by now: this only counts the same chunks
    if (!settled) req.on('data', watch);
  };
}
