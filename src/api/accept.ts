// The Accept header of the REST API's /v1 operations, which answer JSON alone. galaxy's framework
// (go-restful) answered 406 to an Accept without a range that takes JSON, after its 404, 405 and
// 415 and before the handler; so does this. Read as RFC 9110 reads it where go-restful fell short:
// `application/*` takes JSON (go-restful matched only `*/*` and the exact type), media types are
// case-insensitive, and a quality of 0 refuses (go-restful dropped the quality unread), the most
// specific range deciding (`application/json;q=0, */*` takes no JSON).
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from './envelope.js';
import { hasBody, JSON_TYPE } from './json-body.js';
import { documentedStatuses } from './openapi.js';

/** How specifically each range names JSON; ranges that do not take it are absent. */
const SPECIFICITY: Readonly<Record<string, number>> = {
  'application/json': 3,
  'application/*': 2,
  '*/*': 1,
};

/** Whether an Accept header takes application/json; no header, or an empty one, takes anything. */
export function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  let best: { specificity: number; quality: number } | undefined;
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';');
    const specificity = SPECIFICITY[type.trim().toLowerCase()];
    if (specificity === undefined) continue;
    const q = params.map((p) => p.trim()).find((p) => /^q=/i.test(p));
    // an unreadable quality is no quality: the default, 1
    const quality = q === undefined || Number.isNaN(Number(q.slice(2))) ? 1 : Number(q.slice(2));
    if (!best || specificity > best.specificity) best = { specificity, quality };
  }
  return best !== undefined && best.quality > 0;
}

/**
 * 406 for a /v1 operation whose caller's Accept takes no JSON. Other paths (the metrics' text, the
 * Swagger UI and the dashboard's HTML, the document) are what they are; a path or method no
 * operation has goes on to its 404 or 405, and a body that is not JSON to its 415.
 */
export function acceptJson(req: Request, _res: Response, next: NextFunction): void {
  if (!/^\/v1\//i.test(req.path) || acceptsJson(req.headers.accept)) return next();
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  if (documentedStatuses(method, req.path) === undefined) return next();
  if (hasBody(req) && !JSON_TYPE.test(req.headers['content-type'] ?? '')) return next();
  throw new ApiError(
    406,
    `${req.method} ${req.path} answers application/json, and the request's Accept (${req.headers.accept}) does not take it`,
  );
}
