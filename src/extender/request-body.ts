// The extender's request bodies: read whole within a verb's bound and the bytes of all bodies at
// once (body-budget.ts), undone of their Content-Encoding, and parsed; every refusal a BadRequest
// with the status and words the caller gets.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';
import { continueBody } from '../http.js';
import { type BufferLease, joined } from './body-buffers.js';
import type { BodyBudget, BodyShare } from './body-budget.js';
import type { FullNodeReader, ReadRequest } from './full-nodes.js';

/** A request the caller got wrong: answered with this status and message. */
export class BadRequest extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A body that would take the bodies being read at once over the budget: retried later. */
export const busy = (budget: BodyBudget) =>
  new BadRequest(
    503,
    `too many request bodies at once: ${budget.used} bytes are being read, of at most ${budget.limitBytes}; retry`,
  );

/**
 * A POST body, whole. Not body-parser: on the scheduler's hot path every call paid for its
 * content-type negotiation and charset decoding stream; the scheduler always sends UTF-8 JSON.
 * Its chunks joined in the lease's buffer when there is one (body-buffers.ts). `refuseUnread`
 * names a refusal the body cannot change, made before a byte of it is asked for.
 */
export function readBody(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
  share: BodyShare,
  budget: BodyBudget,
  lease?: BufferLease,
  refuseUnread?: () => BadRequest | undefined,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (declared > limit) {
      req.resume();
      return reject(new BadRequest(413, `the request body is over ${limit} bytes`));
    }
    const refusal = refuseUnread?.();
    if (refusal) return reject(refusal);
    // read from here on: a caller waiting for 100 Continue sends its body now
    continueBody(res);
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (failed) return;
      // a body counts for what has come, not for what it announced (body-budget.ts)
      const within = share.take(chunk.length);
      if (size > limit || !within) {
        reject(size > limit ? new BadRequest(413, `the request body is over ${limit} bytes`) : busy(budget));
        failed = true;
        chunks.length = 0;
        share.release();
      } else chunks.push(chunk);
    });
    req.on('error', (err) => {
      if (!failed) reject(new BadRequest(400, `bad request: ${err.message}`));
      failed = true;
    });
    req.on('end', () => {
      if (!failed) resolve(chunks.length === 1 ? chunks[0]! : joined(chunks, lease?.take));
    });
  });
}

const gunzipped = promisify(gunzip);
const inflated = promisify(inflate);
/**
 * One body inflates at a time, as when inflating ran on the event loop, so that what inflating
 * holds at once stays one limit's worth (four at once on libuv's threads would be four).
 */
let lastInflation: Promise<unknown> = Promise.resolve();

/**
 * The body as sent, undone of its Content-Encoding as galaxy's framework undid it (gzip, deflate),
 * never larger than `limit` once inflated; an encoding it does not know is a 415 (as on the REST
 * port), rather than its bytes taken for JSON. Inflating runs on libuv's threads: done on the event
 * loop, four 300 KB bodies inflating to 256 MiB each held it a second apiece, past the Lease's
 * renew deadline. A plain body is returned as it is, without a promise (every scheduler call).
 */
export function decoded(req: IncomingMessage, raw: Buffer, limit: number): Buffer | Promise<Buffer> {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity' || encoding === '') return raw;
  if (encoding !== 'gzip' && encoding !== 'deflate')
    throw new BadRequest(415, `unsupported content encoding ${JSON.stringify(encoding)}`);
  const options = { maxOutputLength: limit };
  const inflation = lastInflation.then(() =>
    encoding === 'deflate' ? inflated(raw, options) : gunzipped(raw, options),
  );
  lastInflation = inflation.catch(() => undefined);
  return inflation.catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      throw new BadRequest(413, `the request body is over ${limit} bytes once inflated`);
    throw new BadRequest(400, `bad request: ${encoding} body: ${(err as Error).message}`);
  });
}

/** The request as read; JSON.parse's words for a body that is not JSON. */
export function readRequest(raw: Buffer, reader?: FullNodeReader): ReadRequest {
  try {
    return reader ? reader.read(raw) : { body: JSON.parse(raw.toString('utf8')) as unknown };
  } catch (err) {
    if (err instanceof SyntaxError) throw new BadRequest(400, `bad request: ${err.message}`);
    throw err;
  }
}
