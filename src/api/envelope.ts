// galaxy's response envelope (docs/galaxy.md#rest-api): `{"code": <HTTP status>, "message": "<kind>: <detail>"}`,
// with the kind galaxy's helpers put in front of the detail. Every answer of the REST API goes
// through here, so the status and the body's `code` never disagree.
//
// A detail often quotes what the caller sent (a bad ip, updateTime or pool name), and a body may be
// megabytes: the detail is clipped as a log line's strings are, so a refusal stays a few kilobytes.
import type { Response } from 'express';
import { clipString } from '../log.js';

const KINDS: Readonly<Record<number, string>> = {
  400: 'bad request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not found',
  405: 'method not allowed',
  406: 'not acceptable',
  409: 'conflict',
  413: 'request entity too large',
  415: 'unsupported media type',
  500: 'server error',
  503: 'service unavailable',
};

/** An answer other than success, thrown by a handler; the app's error handler writes it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    /** What went wrong, without the kind (`"pool name is empty"`). */
    readonly detail: string,
  ) {
    super(`${KINDS[status] ?? 'error'}: ${detail}`);
  }

  override get name(): string {
    return 'ApiError';
  }
}

export const badRequest = (detail: string) => new ApiError(400, detail);
export const notFound = (detail: string) => new ApiError(404, detail);

/**
 * JSON text as galaxy's framework answered it: `Content-Type: application/json` with no charset
 * (express's `res.json` and `res.send` add one) and its length; node sends no body to a HEAD.
 */
export function sendJsonText(res: Response, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

export const sendJson = (res: Response, status: number, value: unknown): void =>
  sendJsonText(res, status, JSON.stringify(value));

export function sendError(res: Response, status: number, detail: string): void {
  sendJson(res, status, { code: status, message: `${KINDS[status] ?? 'error'}: ${clipString(detail)}` });
}

/** `{"code":<status>,"message":<message>, ...fields}`; galaxy's OK is `{"code":200,"message":""}`. */
export function sendEnvelope(
  res: Response,
  status: number,
  message = '',
  fields: Readonly<Record<string, unknown>> = {},
): void {
  sendJson(res, status, { code: status, message, ...fields });
}
