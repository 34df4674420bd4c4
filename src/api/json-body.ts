// The REST API's JSON bodies: express.json (body-parser: charsets, Content-Encoding, the limit once
// inflated), with a body over the limit answered 413 as soon as it is known to be, and the
// connection closed. body-parser alone answers only after it has read the refused body off the
// connection to its end: a caller announcing gigabytes, or streaming without end, held its request
// (and floatip's reading of it) until it chose to stop, with no answer.
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { bodyPending, closeAfterAnswer } from '../http.js';
import { ApiError } from './envelope.js';
import { documentedStatuses } from './openapi.js';

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

/** A body's Content-Type the validator takes; any other is its 415, which comes first (go-restful). */
export const JSON_TYPE = /^application\/json\s*(;|$)/i;

/** Whether the request names a /v1 operation of the document (other paths take no JSON). */
const isOperation = (req: Request) =>
  /^\/v1\//i.test(req.path) &&
  documentedStatuses(req.method === 'HEAD' ? 'GET' : req.method, req.path) !== undefined;

/** The methods of the routes that read a body (POST /v1/ip, POST /v1/pool). */
const READS_BODY: ReadonlySet<string> = new Set(['POST']);

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
    if (!READS_BODY.has(req.method)) {
      // galaxy's handlers of these never read a body: it is not parsed, nor refused for what it
      // says; what of it has not come is for nobody (Go's server drops such a connection too)
      if (bodyPending(req)) closeAfterAnswer(req, res);
      // but its type is checked, as go-restful checks it for every /v1 route (all consume JSON);
      // a body without a Content-Type passes, as go-restful lets it pass for these methods
      const type = req.headers['content-type'];
      if (hasBody(req) && type && !JSON_TYPE.test(type) && isOperation(req)) {
        return next(new ApiError(415, `${req.method} ${req.path} takes application/json, not ${type}`));
      }
      return next();
    }
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
