// The extender port's plain answers: health and readiness (on the health port too), errors as JSON
// `{"Error": ...}`, and the path as express matched it; what is not one of the four verbs.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { bodyPending, closeAfterAnswer } from '../http.js';
import { answeredError } from './wire-answers.js';

export const JSON_TYPE = 'application/json';
export const TEXT_TYPE = 'text/plain; charset=utf-8';

/**
 * The request target's path: a target in absolute form (`POST http://host/v1/filter`, as a proxy
 * sends it) is its path, as Go's server read it for galaxy and express reads it on the REST port.
 */
const targetOf = (url: string | undefined) =>
  (url ?? '/').replace(/^[a-z][a-z\d+.-]*:\/\/[^/?#]*/i, '') || '/';

/** The path as express routed it: without the query, one trailing slash dropped, lower case. */
export function routeOf(url: string | undefined): string {
  const raw = targetOf(url);
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  return (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).toLowerCase();
}

/** The path for a 404's message, as the caller sent it (without the query). */
export const pathOf = (url: string | undefined) => targetOf(url).split('?')[0]!;

export function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  // answered before the request's body has all arrived (a 404, 405 or 413 reads none of it)
  if (bodyPending(res.req)) closeAfterAnswer(res.req, res);
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

export const sendError = (res: ServerResponse, status: number, message: string) =>
  send(res, status, JSON_TYPE, JSON.stringify({ Error: answeredError(message) }));

/**
 * Liveness (/healthz, galaxy's /healthy) and readiness (/readyz: 503 with the reason, else 200), on
 * the extender port and on the plain health port that kubelet probes when the extender port wants a
 * client certificate. true when it answered.
 */
export function answerHealth(
  req: IncomingMessage,
  res: ServerResponse,
  route: string,
  notReadyBecause: () => string | undefined,
): boolean {
  if (route === '/healthy' && req.method !== 'GET') {
    // galaxy's route, on its framework: GET alone, any other method (HEAD too) a 405
    res.setHeader('Allow', 'GET');
    sendError(res, 405, `method not allowed: ${req.method} ${pathOf(req.url)} takes GET`);
    return true;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (route === '/healthy' || route === '/healthz') {
    send(res, 200, TEXT_TYPE, 'ok');
    return true;
  }
  // a Service in front of the replicas sends kube-scheduler to every replica that is ready
  if (route === '/readyz') {
    const why = notReadyBecause();
    send(res, why === undefined ? 200 : 503, TEXT_TYPE, why === undefined ? 'ok' : `not ready: ${why}`);
    return true;
  }
  return false;
}

/** The health port's whole server: the health checks, and 404 for anything else. */
export function healthHandler(notReadyBecause: () => string | undefined): RequestListener {
  return (req, res) => {
    if (answerHealth(req, res, routeOf(req.url), notReadyBecause)) return;
    sendError(res, 404, `no route ${req.method} ${pathOf(req.url)}`);
  };
}
