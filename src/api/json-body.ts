// The REST API's JSON bodies: read by body-parser (Content-Encoding, the limit once inflated) and
// parsed here as galaxy's Go decoder read them: as UTF-8 whatever charset the Content-Type names
// (RFC 8259 defines none for JSON; go-restful handed the bytes to encoding/json as they came), and
// a byte-order mark is no white space (Go's `invalid character 'ï'`). A body over the limit is
// answered 413 as soon as it is known to be, and the connection closed. body-parser alone answers
// only after it has read the refused body off the connection to its end: a caller announcing
// gigabytes, or streaming without end, held its request (and floatip's reading of it) until it
// chose to stop, with no answer.
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { bodyPending, closeAfterAnswer, continueBody } from '../http.js';
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

/** Each JSON body's text as parsed, for what JSON.parse forgets. */
const texts = new WeakMap<Request, string>();

/** The request's JSON body as the text that was parsed; undefined when there was none. */
export const rawJsonBody = (req: Request): string | undefined => texts.get(req);

/** UTF-8 as Go reads it: a malformed byte is U+FFFD, and a leading byte-order mark stays in the text. */
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** The body's bytes parsed as the JSON object or list galaxy's decoder would read, or why not (400). */
function parsed(req: Request, bytes: Buffer): unknown {
  const text = utf8.decode(bytes);
  texts.set(req, text);
  // no bytes at all (a chunked body that ended at once): no fields, as the validator then says
  if (text.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ApiError(400, `invalid JSON: ${(err as Error).message}`);
  }
  // JSON, only not a request (`null`, `5`): the validator's words for `[]`
  if (typeof value !== 'object' || value === null) throw new ApiError(400, 'body: must be object');
  return value;
}

/** The Content-Encodings a body may come in: as sent, gzip or deflate. */
const INFLATED = new Set(['identity', '', 'gzip', 'deflate']);

/**
 * Answers, before its body is read, a request whose answer the body cannot change (a write sent to
 * a replica that does not lead); true when it answered.
 */
export type UnreadRefusal = (req: Request, res: Response) => boolean;

/**
 * A JSON body parsed, with `limitBytes`; an oversized body is refused without reading the rest of it,
 * and so is one `refuseUnread` answers.
 */
export function jsonBody(limitBytes: number, refuseUnread?: UnreadRefusal): RequestHandler {
  const read = express.raw({ type: 'application/json', limit: limitBytes });
  const parse: RequestHandler = (req, res, next) =>
    read(req, res, (err?: unknown) => {
      if (err || !Buffer.isBuffer(req.body)) return next(err);
      try {
        req.body = parsed(req, req.body);
      } catch (refusal) {
        return next(refusal);
      }
      next();
    });
  return (req: Request, res: Response, next: NextFunction) => {
    // go-restful routes a request before its handler reads the body: a POST that names no
    // operation is its 404 or 405 (the validator's), whatever its body's size, and not read
    if (!READS_BODY.has(req.method) || !isOperation(req)) {
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
    // not JSON: the validator's 415 (a 406 without a body), before its size, as go-restful checks
    // the type when it routes; body-parser would not read it either
    if (hasBody(req) && !JSON_TYPE.test(req.headers['content-type'] ?? '')) return next();
    const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    // galaxy's framework undid gzip and deflate, and so does the extender port; body-parser would
    // also take br, which one port then took and the other refused
    if (!INFLATED.has(encoding)) {
      // refused unread: the rest of the body is for nobody
      if (bodyPending(req)) closeAfterAnswer(req, res);
      return next(new ApiError(415, `unsupported content encoding ${JSON.stringify(encoding)}`));
    }
    const wireLimit = wireLimitOf(limitBytes, encoding !== 'identity' && encoding !== '');
    // announced too large: refused before a byte of it is read
    if (Number(req.headers['content-length']) > wireLimit) return next(tooLarge(req, res, limitBytes));
    if (refuseUnread?.(req, res)) return;
    // read from here on: a caller waiting for 100 Continue sends its body now
    continueBody(res);
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
