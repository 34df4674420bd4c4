// The REST API's express app (docs/galaxy.md#rest-api, port 9041): Swagger UI and the public routes, then
// authentication (when plugged in), then JSON bodies, then validation against the OpenAPI document,
// then the route table; every failure ends in galaxy's envelope. Order matters: the description is
// public, and nothing of a caller's is read before it is known who the caller is.
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { bodyPending, closeAfterAnswer } from '../http.js';
import type { DecisionLocks } from '../store/decision-locks.js';
import { type Allocator, type ErrorKind, kindOf } from '../ipam/index.js';
import type { EventRecorder } from '../kube/events.js';
import type { PodLookup } from '../kube/pod-lookup.js';
import type { Logger } from '../log.js';
import type { FloatingIPStore } from '../store/floating-ip-store.js';
import type { PoolStore } from '../store/pool-store.js';
import { acceptJson } from './accept.js';
import { apidocs } from './apidocs.js';
import { ApiError, sendError } from './envelope.js';
import { fractionRefusal, goBodyIntegers } from './go-integers.js';
import { hasBody, jsonBody, type UnreadRefusal } from './json-body.js';
import type { RecentEvents } from './recent-events.js';
import { UsageHistory } from './usage-history.js';
import {
  describeFinding,
  documentedStatuses,
  isValidationFinding,
  openApiDocument,
  requestValidator,
} from './openapi.js';
import { apiRoutes, expressPath } from './routes.js';

export interface RestDeps {
  readonly allocator: Allocator;
  readonly store: Pick<FloatingIPStore, 'release' | 'allocate' | 'unreadable'>;
  /** Pods: the cache, and the API server for what it cannot decide alone (a release). */
  readonly pods: Pick<PodLookup, 'cached' | 'find'>;
  /** Pools in the configured pool namespace. */
  readonly pools: Pick<PoolStore, 'fetch' | 'put' | 'delete' | 'list'>;
  readonly locks: DecisionLocks;
  readonly events: EventRecorder;
  readonly log: Logger;
  /**
   * Authentication: sets `req.identity` (see identity.ts) or answers 401/403 itself. None by
   * default: every caller is anonymous and named by its address in the audit trail.
   */
  readonly authenticate?: RequestHandler;
  /**
   * Why this replica may not change anything now (a follower; a leader still catching up; shutting
   * down), or undefined when it may. Followers still answer reads from their caches; writes get 503
   * with this reason, so that a client retries on the leader.
   */
  readonly notDecidingBecause?: () => string | undefined;
  /** The Prometheus handler for /metrics (galaxy serves metrics on this port). */
  readonly metrics?: RequestHandler;
  /** Check every answer against the OpenAPI document too (tests). */
  readonly validateResponses?: boolean;
  /** The largest request body in bytes, once inflated (default REST_BODY_LIMIT). */
  readonly bodyLimitBytes?: number;
  /** After an address of this key was released through the API. */
  readonly released?: (key: string) => void;
  /** What GET /v1/dashboard shows beyond the allocator: the Events kept, the usage history, --parked-ip-ttl. */
  readonly dashboard?: {
    readonly events?: Pick<RecentEvents, 'latest'>;
    /** Default: one filled by the dashboard's requests only. */
    readonly usage?: UsageHistory;
    readonly parkedTtlMs?: number;
    readonly clock?: () => number;
  };
  /** Where the dashboard page's built files are (default dist/dashboard). */
  readonly dashboardAssets?: string;
}

/**
 * The default body limit: the largest release (10,000 entries, the OpenAPI document's
 * `maxItems`) sent back as GET /v1/ip lists them is about 2.2 MiB, 4.5 MiB with every name 63
 * characters long. Parsing is synchronous, so the limit also bounds how long one body holds the
 * event loop the extender shares.
 */
export const REST_BODY_LIMIT = 5 * 2 ** 20;

export function restApp(deps: RestDeps): express.Express {
  const { log } = deps;
  const app = express();
  app.disable('x-powered-by');
  const document = openApiDocument();
  app.use('/apidocs', apidocs(document));
  const routes = apiRoutes({
    ...deps,
    audit: { events: deps.events, log },
    dashboard: {
      ...(deps.dashboard?.events ? { events: deps.dashboard.events } : {}),
      usage: deps.dashboard?.usage ?? new UsageHistory(),
      parkedTtlMs: deps.dashboard?.parkedTtlMs ?? 0,
      clock: deps.dashboard?.clock ?? Date.now,
    },
  });
  const register = (route: (typeof routes)[number]) =>
    app[route.method](expressPath(route.path), route.handler);
  routes.filter((r) => r.public).forEach(register);
  // who asks is known before anything of theirs is read: an unauthenticated caller cannot make
  // floatip parse and validate megabytes
  if (deps.authenticate) app.use(deps.authenticate);
  app.use(acceptJson);
  const notDeciding = deps.notDecidingBecause && refusingWrites(deps.notDecidingBecause);
  // a POST's body is not read to refuse it: its caller waiting for 100 Continue never sends it
  app.use(jsonBody(deps.bodyLimitBytes ?? REST_BODY_LIMIT, notDeciding));
  app.use(requestValidator({ validateResponses: deps.validateResponses ?? false }));
  app.use(goBodyIntegers);
  // the writes whose bodies are not read (a DELETE), and one whose replica stopped leading while
  // its body came
  if (notDeciding) {
    app.use((req: Request, res: Response, next: NextFunction) => {
      if (!notDeciding(req, res)) next();
    });
  }
  routes.filter((r) => !r.public).forEach(register);

  app.use((req: Request) => {
    throw new ApiError(404, `no route ${req.method} ${req.path}`);
  });
  // express 5 brings thrown errors and rejected promises here
  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    let answer = answerFor(err, req);
    if (deps.validateResponses) answer = documented(answer, req);
    if (answer.status >= 500) {
      log.error(
        { method: req.method, path: req.path, err: (err as Error)?.stack ?? String(err) },
        'REST request failed',
      );
    }
    if (answer.allow) res.setHeader('Allow', answer.allow);
    // refused before its body has all arrived (401 before a byte of it is read, 404, 415): the rest
    // of it is for nobody, and keep-alive would read all that was announced, a terabyte as well
    if (bodyPending(req)) closeAfterAnswer(req, res);
    sendError(res, answer.status, answer.detail);
  });
  return app;
}

/** A write's 503 on a replica that may not change anything now, with `notDecidingBecause`'s reason. */
function refusingWrites(notDecidingBecause: () => string | undefined): UnreadRefusal {
  return (req, res) => {
    // the caller's routing, not this replica failing: answered, not logged as an error with its
    // stack (one line per write sent to a follower, which anyone could send)
    const why = req.method !== 'GET' && req.method !== 'HEAD' ? notDecidingBecause() : undefined;
    if (why === undefined) return false;
    if (bodyPending(req)) closeAfterAnswer(req, res);
    sendError(res, 503, why);
    return true;
  };
}

/**
 * The answer, or a 500 saying that the document does not list its status for the operation (tests:
 * express-openapi-validator checks the answers of requests it validated, and a refusal made before
 * or by its request check, a 406, a 413, never reaches its response check).
 */
function documented(answer: Answer, req: Request): Answer {
  const statuses = documentedStatuses(req.method, req.path);
  if (!statuses || statuses.includes(String(answer.status)) || statuses.includes('default')) return answer;
  return {
    status: 500,
    detail: `response to ${req.method} ${req.originalUrl} does not match the OpenAPI document: status ${answer.status} is not documented (${answer.detail})`,
  };
}

/** The REST API's answer to each kind of error: its one mapping. */
const STATUS_OF_KIND: Readonly<Record<ErrorKind, number>> = {
  validation: 400,
  conflict: 409,
  wait: 409,
  unavailable: 503,
  transient: 503,
};

/** The status and detail for whatever a handler or middleware threw. */
interface Answer {
  readonly status: number;
  readonly detail: string;
  readonly allow?: string;
}

function answerFor(err: unknown, req: Request): Answer {
  if (err instanceof ApiError) return { status: err.status, detail: err.detail };
  if (isValidationFinding(err)) {
    const route = `${req.method} ${req.path}`;
    if (err.status === 404) return { status: 404, detail: `no route ${route}` };
    if (err.status === 405) {
      const allow = (err as { headers?: { Allow?: string } }).headers?.Allow;
      return { status: 405, detail: route, ...(allow ? { allow } : {}) };
    }
    if (err.status === 415) {
      // galaxy's framework checks the Content-Type only of a request with a body; one with none
      // goes on to its Accept check, which answers 406
      const type = req.headers['content-type'];
      if (!hasBody(req))
        return {
          status: 406,
          detail: `${route} takes a JSON body (application/json), and the request has none`,
        };
      return {
        status: 415,
        detail: `${route} takes application/json, not ${type ?? 'a body without a Content-Type'}`,
      };
    }
    if (err.status >= 500) return { status: 500, detail: err.message };
    // `1.5` or `1e400` where an integer goes: what was written, as goBodyIntegers names `1.0`;
    // the validator's `must be integer` alone did not say which number it meant
    const integer = err.errors?.some((e) => /^[./]body[./]/.test(e.path) && e.message === 'must be integer');
    const fraction = integer ? fractionRefusal(req) : undefined;
    if (fraction) return { status: 400, detail: fraction.detail };
    return { status: err.status, detail: describeFinding(err, req) };
  }
  // body-parser's errors carry a status and a type
  const parser = err as { status?: number; type?: string; message?: string };
  if (parser.type === 'entity.too.large')
    return { status: 413, detail: `the request body is over ${(err as { limit: number }).limit} bytes` };
  if (typeof parser.status === 'number' && parser.status >= 400 && parser.status < 500) {
    // a body its Content-Encoding does not inflate: which encoding, as the extender port says it
    const encoding = req.headers['content-encoding']?.trim().toLowerCase();
    const inflating = parser.type === undefined && encoding && encoding !== 'identity';
    return {
      status: parser.status,
      detail: `${inflating ? `${encoding} body: ` : ''}${parser.message ?? 'rejected'}`,
    };
  }
  const kind = kindOf(err);
  if (kind) return { status: STATUS_OF_KIND[kind], detail: (err as Error).message };
  return { status: 500, detail: (err as Error)?.message ?? String(err) };
}
