// A request's body read and an answer written, as kube-apiserver does both: bodies bounded in size and
// decoded (JSON, or protobuf for the kinds kubectl's typed commands send), answers as JSON with its
// headers. Apart from the routing (handler.ts) so that every route reads and writes the same way.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bodyFormat } from './media.js';
import { decodeProtobuf } from './protobuf.js';
import { ApiError, badRequest } from './status.js';

/** Bodies above this are refused, like kube-apiserver's 3 MiB object limit (with room for bulk requests). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export function send(res: ServerResponse, code: number, json: string, warnings: string[] = []): void {
  if (warnings.length > 0) res.setHeader('Warning', warnings);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Content-Length': Buffer.byteLength(json),
  });
  res.end(json);
}

export function sendObject(res: ServerResponse, code: number, body: unknown): void {
  send(res, code, JSON.stringify(body));
}

/** Each request's body, read once: a held write reads it before its hold (bufferBody). */
const bodies = new WeakMap<IncomingMessage, Promise<Buffer>>();

function readBody(req: IncomingMessage): Promise<Buffer> {
  let body = bodies.get(req);
  if (!body) {
    body = readBodyOnce(req);
    bodies.set(req, body);
  }
  return body;
}

/**
 * Reads the request's body now, for a later readJson or readObject: a write held by a fault is
 * then applied even if its caller stopped waiting meanwhile, as a write stalled inside
 * kube-apiserver can be. A failure is left for that later read to report.
 */
export async function bufferBody(req: IncomingMessage): Promise<void> {
  await readBody(req).catch(() => undefined);
}

function readBodyOnce(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new ApiError(413, 'RequestEntityTooLarge', `request body exceeds ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export async function readJson(req: IncomingMessage, what: string, optional = false): Promise<unknown> {
  const text = (await readBody(req)).toString('utf8');
  if (text.trim() === '') {
    if (optional) return undefined;
    throw badRequest(`the request body for ${what} is empty`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw badRequest(`error decoding the request body for ${what}: ${(err as Error).message}`);
  }
}

/** A POST or PUT body: JSON, or protobuf for the kinds kubectl's typed commands send (protobuf.ts). */
export async function readObject(req: IncomingMessage, what: string): Promise<unknown> {
  if (bodyFormat(req.headers['content-type']) === 'json') return readJson(req, what);
  return decodeProtobuf(await readBody(req), what);
}
