// The extender's HTTP face (docs/galaxy.md#scheduler-extender, port 9040): kube-scheduler's four verbs, galaxy's health check,
// and readiness (= this replica answers the scheduler; every replica does, bind and preempt by way of
// the leader: leader-forward.ts). Each handler decodes its message with the
// one decoder for it; a body that is not JSON or not the right shape is a 400 with the reason, never
// a crash and never a 500 for the caller's mistake.
import express, { type NextFunction, type Request, type Response } from 'express';
import { kindOf } from '../ipam/index.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Binder } from './bind.js';
import {
  type AskedVerb,
  BUDGET_HEADER,
  type DecidedVerb,
  FORWARDED_BY_HEADER,
  type ForwardedAnswer,
} from './leader-forward.js';
import type { SchedulingQueries } from './queries.js';
import {
  decodeBindingArgs,
  decodeExtenderArgs,
  decodePreemptionArgs,
  encodeBindingResult,
  encodeFilterResult,
  type FilterResult,
  encodePreemptionResult,
  encodePriorities,
} from './wire.js';

export interface ExtenderHttpOptions {
  /** The largest request body accepted, in bytes; a full-Node filter for 5,000 nodes is tens of MB. */
  readonly bodyLimitBytes?: number;
  /**
   * Why this replica cannot answer the scheduler now (no configuration in force), or undefined when
   * it can; the verbs and /readyz answer 503 with the reason.
   */
  readonly notServingBecause?: () => string | undefined;
  /** Why /readyz alone answers 503 although the verbs still answer (shutting down: send no more here). */
  readonly notReadyBecause?: () => string | undefined;
  /**
   * Where bind and preempt are decided: undefined answers here, anything else is the answer to send
   * (the leader's, relayed). Without it this replica decides everything.
   */
  readonly route?: (
    verb: DecidedVerb,
    body: Buffer,
    forwardedBy: string | undefined,
  ) => Promise<ForwardedAnswer | undefined>;
  /**
   * Whether the filter call just answered refused its pod for later (a follower then asks the
   * leader, which remembers such pods and sends them back), and how to ask.
   */
  readonly refusedForLater?: () => boolean;
  readonly askLeader?: (
    verb: AskedVerb,
    body: Buffer,
    forwardedBy: string | undefined,
  ) => Promise<ForwardedAnswer | undefined>;
  readonly metrics?: Metrics;
  /** Called for every call this replica answers itself: the scheduler reaches it. */
  readonly onServe?: () => void;
}

/** Sends another replica's answer on as it came. */
function relay(res: Response, answer: ForwardedAnswer): void {
  res.writeHead(answer.status, {
    ...answer.headers,
    'Content-Type': JSON_TYPE,
    'Content-Length': answer.body.length,
  });
  res.end(answer.body);
}

/** Requests being answered, so that a graceful shutdown can wait for the binds in flight. */
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  enter(): void {
    this.count++;
  }

  leave(): void {
    if (--this.count === 0) for (const resolve of this.waiters.splice(0)) resolve();
  }

  drained(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}

/**
 * Liveness (/healthz, galaxy's /healthy) and readiness (/readyz: 503 with the reason, else 200), on
 * the extender port and on the plain health port that kubelet probes when the extender port wants a
 * client certificate.
 */
export function healthRoutes(app: express.Express, notReadyBecause: () => string | undefined): void {
  app.get(['/healthy', '/healthz'], (_req, res) => {
    res.type('text/plain').send('ok');
  });
  // a Service in front of the replicas sends kube-scheduler to every replica that is ready
  app.get('/readyz', (_req, res) => {
    const why = notReadyBecause();
    res
      .status(why === undefined ? 200 : 503)
      .type('text/plain')
      .send(why === undefined ? 'ok' : `not ready: ${why}`);
  });
}

type Verb = 'filter' | 'prioritize' | 'bind' | 'preempt';

const VERB_PATHS = ['/v1/filter', '/v1/prioritize', '/v1/priority', '/v1/bind', '/v1/preempt'];

const JSON_TYPE = 'application/json; charset=utf-8';

/** A request the caller got wrong: answered with this status and message. */
class BadRequest extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The bytes of each request's body, for answers that echo parts of it. */
const rawBodies = new WeakMap<Request, Buffer>();

/**
 * Reads a POST body as JSON into req.body. Not body-parser: on the scheduler's hot path every call
 * paid for its content-type negotiation and charset decoding stream (3 % of floatip's CPU per
 * scheduled pod, profiled in bench:e2e); the scheduler always sends UTF-8 JSON.
 */
function jsonBody(limit: number) {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (req.method !== 'POST') return next();
    const declared = Number(req.headers['content-length']);
    if (declared > limit) return next(new BadRequest(413, `the request body is over ${limit} bytes`));
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        if (!failed) next(new BadRequest(413, `the request body is over ${limit} bytes`));
        failed = true;
        chunks.length = 0;
      } else if (!failed) chunks.push(chunk);
    });
    req.on('error', (err) => {
      if (!failed) next(new BadRequest(400, `bad request: ${err.message}`));
      failed = true;
    });
    req.on('end', () => {
      if (failed) return;
      const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      rawBodies.set(req, raw);
      try {
        req.body = JSON.parse(raw.toString('utf8')) as unknown;
      } catch (err) {
        return next(new BadRequest(400, `bad request: ${(err as Error).message}`));
      }
      next();
    });
  };
}

/** The four verbs: the read-only ones and bind. */
export type ExtenderVerbs = Pick<SchedulingQueries, 'filter' | 'prioritize' | 'preempt'> &
  Pick<Binder, 'bind'>;

export function extenderApp(
  extender: ExtenderVerbs,
  log: Logger,
  options: ExtenderHttpOptions = {},
  inFlight = new InFlight(),
) {
  const app = express();
  app.disable('x-powered-by');
  // an ETag hashes every answer: megabytes per full-Node filter, for a client that never caches
  app.set('etag', false);
  const notServing = () => options.notServingBecause?.();
  healthRoutes(app, () => notServing() ?? options.notReadyBecause?.());
  app.use((req, res, next) => {
    if (req.method !== 'POST') return next();
    inFlight.enter();
    res.on('close', () => inFlight.leave());
    next();
  });
  // only the verbs read a body: a POST anywhere else is a 404, not a JSON error
  app.use(VERB_PATHS, jsonBody(options.bodyLimitBytes ?? 256 * 2 ** 20));

  const json = (res: Response, body: string | Buffer) => {
    res.writeHead(200, { 'Content-Type': JSON_TYPE, 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  };
  const answering = (_req: Request, res: Response, next: NextFunction) => {
    const why = notServing();
    if (why !== undefined) {
      res
        .status(503)
        .type('application/json')
        .send(JSON.stringify({ Error: `not serving: ${why}` }));
      return;
    }
    options.onServe?.();
    next();
  };
  // what a forwarding replica says is left of the scheduler's wait; the binder caps it by its own
  const budgetOf = (req: Request) => {
    const value = req.headers[BUDGET_HEADER];
    return typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : undefined;
  };
  const forwardedByOf = (req: Request) => {
    const by = req.headers[FORWARDED_BY_HEADER];
    return typeof by === 'string' ? by : undefined;
  };
  // bind and preempt: decided by the leader; relayed there unless this replica is it
  const decided = (verb: DecidedVerb) => async (req: Request, res: Response, next: NextFunction) => {
    const answer = await options.route?.(verb, rawBodies.get(req)!, forwardedByOf(req));
    if (answer === undefined) return answering(req, res, next);
    relay(res, answer);
  };
  const observe = (verb: Verb, start: bigint, failure: string | undefined) =>
    options.metrics?.observeExtender(
      verb,
      Number(process.hrtime.bigint() - start) / 1e9,
      failure || undefined,
    );

  // names-only answers are shared between pods (NodeFacts.listOf), and so are their bytes
  const encoded = new WeakMap<FilterResult, Buffer>();
  app.post('/v1/filter', answering, async (req, res) => {
    const start = process.hrtime.bigint();
    const raw = rawBodies.get(req)!;
    const args = decodeExtenderArgs(req.body, raw);
    options.refusedForLater?.();
    const result = extender.filter(args.pod, args.nodes, args.nodeNames);
    observe('filter', start, result.error);
    if (options.refusedForLater?.()) {
      const answer = await options.askLeader?.('filter', raw, forwardedByOf(req));
      if (answer) return relay(res, answer);
    }
    let bytes = result.nodeNames ? encoded.get(result) : undefined;
    if (!bytes) {
      // passing Nodes are echoed as the very bytes the caller sent, never another request's
      const spans = result.nodes?.length ? args.nodeSpans!() : [];
      const where = new Map(args.nodes?.map((node, i) => [node, spans[i]!]));
      bytes = encodeFilterResult(result, (node) => {
        const [from, to] = where.get(node)!;
        return raw.subarray(from, to);
      });
      if (result.nodeNames) encoded.set(result, bytes);
    }
    json(res, bytes);
  });
  const prioritize = (req: Request, res: Response) => {
    const start = process.hrtime.bigint();
    const args = decodeExtenderArgs(req.body);
    const result = extender.prioritize(args.pod, args.nodes, args.nodeNames);
    observe('prioritize', start, undefined);
    json(res, encodePriorities(result));
  };
  app.post('/v1/prioritize', answering, prioritize);
  app.post('/v1/priority', answering, prioritize);
  app.post('/v1/bind', decided('bind'), async (req, res) => {
    const start = process.hrtime.bigint();
    const args = decodeBindingArgs(req.body);
    const error = await extender.bind(args.podNamespace, args.podName, args.podUID, args.node, budgetOf(req));
    observe('bind', start, error);
    json(res, encodeBindingResult(error));
  });
  app.post('/v1/preempt', decided('preempt'), (req, res) => {
    const start = process.hrtime.bigint();
    const args = decodePreemptionArgs(req.body);
    const result = extender.preempt(args.pod, args.victims);
    observe('preempt', start, undefined);
    json(res, encodePreemptionResult(result));
  });

  app.use((req, res) => {
    res
      .status(404)
      .type('application/json')
      .send(JSON.stringify({ Error: `no route ${req.method} ${req.path}` }));
  });
  // express 5 passes thrown errors and rejected promises here
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const status = (err as { status?: number }).status;
    if (res.headersSent) return;
    // the one mapping of this port: a caller's mistake is a 4xx with the reason, anything else a 500
    const validation = kindOf(err) === 'validation';
    if (validation || (status !== undefined && status >= 400 && status < 500)) {
      const message =
        validation || err instanceof BadRequest
          ? (err as Error).message
          : `bad request: ${(err as Error).message}`;
      res
        .status(status && status !== 500 ? status : 400)
        .type('application/json')
        .send(JSON.stringify({ Error: message }));
      return;
    }
    log.error({ path: req.path, err: (err as Error)?.stack ?? String(err) }, 'extender request failed');
    res
      .status(500)
      .type('application/json')
      .send(JSON.stringify({ Error: `server error: ${(err as Error)?.message}` }));
  });
  return app;
}
