// The extender's HTTP face (docs/galaxy.md#scheduler-extender, port 9040): kube-scheduler's four verbs, galaxy's health check,
// and readiness (= this replica answers the scheduler; every replica does, bind and preempt by way of
// the leader: leader-forward.ts). Each handler decodes its message with the
// one decoder for it; a body that is not JSON or not the right shape is a 400 with the reason, never
// a crash and never a 500 for the caller's mistake.
// On node's http directly, not express: a handful of fixed paths on the scheduler's hot path, where
// express's router and response helpers were per-call work for nothing (bench:e2e's profile). Paths
// are matched as express matched them, so nothing a caller sees changed: case-insensitively, one
// trailing slash allowed, the query ignored.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { kindOf } from '../ipam/index.js';
import type { Logger } from '../log.js';
import { NO_LEADER_DECIDED, type Metrics } from '../metrics/metrics.js';
import type { Binder } from './bind.js';
import {
  type AskedVerb,
  BUDGET_HEADER,
  type DecidedVerb,
  FORWARDED_BY_HEADER,
  type ForwardedAnswer,
} from './leader-forward.js';
import type { SchedulingQueries } from './queries.js';
import { InFlight } from './in-flight.js';
import { JSON_TYPE, answerHealth, pathOf, routeOf, send, sendError } from './plain-answers.js';
import { refusedForWantOfAddress } from './pod-placement.js';
import { BodyBuffers, type BufferLease } from './body-buffers.js';
import { BodyBudget, type BodyShare } from './body-budget.js';
import { BadRequest, busy, decoded, readBody, readRequest } from './request-body.js';
import { FullNodeReader, type ReadRequest } from './full-nodes.js';
import { decodeBindingArgs, decodeExtenderArgs, decodeRequestNode, decodePreemptionArgs } from './wire.js';
import {
  encodeBindingResult,
  encodeFilterResult,
  type FilterResult,
  type HostPriority,
  encodePreemptionResult,
  encodePriorities,
} from './wire-answers.js';

export interface ExtenderHttpOptions {
  /** The largest request body accepted, in bytes; a full-Node filter for 5,000 nodes is tens of MB. */
  readonly bodyLimitBytes?: number;
  /** The most bytes of bodies read at once, over all connections (default: twice bodyLimitBytes). */
  readonly bodyBudgetBytes?: number;
  /** A body of at most this many bytes is small (default 1 MiB)... */
  readonly smallBodyBytes?: number;
  /** ...and small ones may take this many more past the budget (default 64 MiB): body-budget.ts. */
  readonly smallBodyReserveBytes?: number;
  /**
   * The most a gzip or deflate body may inflate to (default 16 MiB, below the plain limit):
   * kube-scheduler never compresses, and 490 KB of gzip inflating to 252 MB of node names held the
   * event loop 17 s parsing them, past the Lease's renew deadline.
   */
  readonly inflatedBodyLimitBytes?: number;
  /**
   * Why this replica cannot answer the scheduler now (no configuration in force), or undefined when
   * it can; the verbs and /readyz answer 503 with the reason.
   */
  readonly notServingBecause?: () => string | undefined;
  /**
   * Whether `route` would answer here now (this replica decides): a bind or preempt is then refused
   * for want of a configuration before its body is read. Without it, a replica that routes reads
   * the body first, in case it is the leader's to decide.
   */
  readonly decidesHere?: () => boolean;
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
  /** Where full-Node bodies and answers are written (body-buffers.ts); its own by default. */
  readonly bodyBuffers?: BodyBuffers;
  /** Called for every call this replica answers itself: the scheduler reaches it. */
  readonly onServe?: () => void;
}

/** Sends another replica's answer on as it came. */
function relay(res: ServerResponse, answer: ForwardedAnswer): void {
  res.writeHead(answer.status, {
    ...answer.headers,
    'Content-Type': JSON_TYPE,
    'Content-Length': answer.body.length,
  });
  res.end(answer.body);
}

/** Whether the caller has closed its connection: kube-scheduler's client does when it stops waiting. */
const callerGone = (req: IncomingMessage) => req.socket.destroyed || !req.socket.writable;

type VerbName = 'filter' | 'prioritize' | 'bind' | 'preempt';

/** A bind's body (ExtenderBindingArgs: four short strings) is never near this. */
const BIND_BODY_LIMIT = 64 * 1024;

/** The four verbs: the read-only ones and bind. */
export type ExtenderVerbs = Pick<SchedulingQueries, 'filter' | 'prioritize' | 'preempt'> &
  Partial<Pick<SchedulingQueries, 'ready'>> &
  Pick<Binder, 'bind'>;

/**
 * A verb's path: its handler, the reader of its full Nodes, its own body limit if smaller, whether
 * the leader decides it.
 */
interface Verb {
  readonly handler: VerbHandler;
  readonly reader?: FullNodeReader;
  readonly limit?: number;
  readonly decided?: boolean;
}

/**
 * One verb's answer, from the request as read (its parsed body; its full Nodes when known) and its
 * bytes; the verbs that read full Nodes have a lease for their answer's bytes.
 */
type VerbHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  read: ReadRequest,
  raw: Buffer,
  lease?: BufferLease,
) => Promise<void> | void;

export function extenderApp(
  extender: ExtenderVerbs,
  log: Logger,
  options: ExtenderHttpOptions = {},
  inFlight = new InFlight(),
): RequestListener {
  const limit = options.bodyLimitBytes ?? 256 * 2 ** 20;
  const budget = new BodyBudget({
    limitBytes: options.bodyBudgetBytes ?? 2 * limit,
    smallBytes: options.smallBodyBytes ?? 2 ** 20,
    smallReserveBytes: options.smallBodyReserveBytes ?? 64 * 2 ** 20,
  });
  const inflatedLimit = options.inflatedBodyLimitBytes ?? 16 * 2 ** 20;
  const notServing = () => options.notServingBecause?.();
  const notReady = () => notServing() ?? options.notReadyBecause?.();
  const json = (res: ServerResponse, body: string | Buffer) => send(res, 200, JSON_TYPE, body);
  const forwardedByOf = (req: IncomingMessage) => {
    const by = req.headers[FORWARDED_BY_HEADER];
    return typeof by === 'string' ? by : undefined;
  };
  // what a forwarding replica says is left of the scheduler's wait; the binder caps it by its own
  const budgetOf = (req: IncomingMessage) => {
    const value = req.headers[BUDGET_HEADER];
    return typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : undefined;
  };
  const observe = (verb: VerbName, start: bigint, failure: string | undefined, wantsAddress = true) =>
    options.metrics?.observeExtender(
      verb,
      Number(process.hrtime.bigint() - start) / 1e9,
      failure || undefined,
      wantsAddress,
    );

  // names-only answers are shared between pods (NodeFacts.listOf), and so are their bytes
  const encoded = new WeakMap<FilterResult, Buffer>();
  const filter: VerbHandler = async (req, res, read, raw, lease) => {
    const start = process.hrtime.bigint();
    const args = decodeExtenderArgs(read.body, raw, read.known, read.podText);
    const waiting = extender.ready?.(args.pod);
    if (waiting) await waiting;
    options.refusedForLater?.();
    const result = extender.filter(args.pod, args.nodes, args.nodeNames);
    if (options.refusedForLater?.()) {
      const answer = await options.askLeader?.('filter', raw, forwardedByOf(req));
      // the leader answered, and counted, this call: counted here too, a sum over replicas doubles it
      if (answer) return relay(res, answer);
    }
    observe('filter', start, result.error, !result.notWanted);
    if (refusedForWantOfAddress(result)) options.metrics?.refusedForWantOfAddress('filter');
    let bytes = result.nodeNames ? encoded.get(result) : undefined;
    if (!bytes) {
      // passing Nodes are echoed as the very bytes the caller sent, never another request's
      const spans = result.nodes?.length ? args.nodeSpans!() : [];
      const where = new Map(args.nodes?.map((node, i) => [node, spans[i]!]));
      bytes = encodeFilterResult(
        result,
        (node) => {
          const [from, to] = where.get(node)!;
          return raw.subarray(from, to);
        },
        // a shared names-only answer is kept: never in a leased buffer
        result.nodeNames ? undefined : lease?.take,
        args.nodeListType,
      );
      if (result.nodeNames) encoded.set(result, bytes);
    }
    json(res, bytes);
  };
  // names-only scores are shared between pods (SchedulingQueries.prioritize), and so are their bytes
  const scored = new WeakMap<readonly HostPriority[], Buffer>();
  const prioritize: VerbHandler = (_req, res, read, raw) => {
    const start = process.hrtime.bigint();
    const args = decodeExtenderArgs(read.body, raw, read.known, read.podText);
    const result = extender.prioritize(args.pod, args.nodes, args.nodeNames);
    observe('prioritize', start, undefined);
    let bytes = args.nodeNames ? scored.get(result) : undefined;
    if (!bytes) {
      bytes = Buffer.from(encodePriorities(result));
      if (args.nodeNames) scored.set(result, bytes);
    }
    json(res, bytes);
  };
  const bind: VerbHandler = async (req, res, read) => {
    const start = process.hrtime.bigint();
    const args = decodeBindingArgs(read.body);
    const error = await extender.bind(
      args.podNamespace,
      args.podName,
      args.podUID,
      args.node,
      budgetOf(req),
      () => callerGone(req),
    );
    observe('bind', start, error);
    json(res, encodeBindingResult(error));
  };
  const preempt: VerbHandler = async (_req, res, read, raw) => {
    const start = process.hrtime.bigint();
    const args = decodePreemptionArgs(read.body, raw);
    const waiting = extender.ready?.(args.pod);
    if (waiting) await waiting;
    const result = extender.preempt(args.pod, args.victims);
    observe('preempt', start, undefined);
    json(res, encodePreemptionResult(result));
  };
  // bind and preempt: decided by the leader; relayed there unless this replica is it
  const decided =
    (verb: DecidedVerb, handler: VerbHandler): VerbHandler =>
    async (req, res, read, raw, lease) => {
      // nobody waits for the answer: neither decide nor relay it (a replica paused for seconds
      // meets requests its caller gave up on)
      if (callerGone(req)) {
        log.warn({ path: pathOf(req.url) }, `${verb} not started: its caller stopped waiting`);
        return;
      }
      const start = process.hrtime.bigint();
      const answer = await options.route?.(verb, raw, forwardedByOf(req));
      if (answer === undefined) return handler(req, res, read, raw, lease);
      // no leader decided it (a decision is a 200): the bind fails, and only this first hop can count it
      if (verb === 'bind' && answer.status !== 200 && forwardedByOf(req) === undefined)
        observe('bind', start, NO_LEADER_DECIDED);
      relay(res, answer);
    };
  // a replica without a configuration in force answers 503 with the reason (after forwarding what
  // the leader decides)
  const notServingRefusal = () => {
    const why = notServing();
    return why === undefined ? undefined : new BadRequest(503, `not serving: ${why}`);
  };
  const serving =
    (handler: VerbHandler): VerbHandler =>
    (req, res, read, raw, lease) => {
      const refusal = notServingRefusal();
      if (refusal) return sendError(res, refusal.status, refusal.message);
      options.onServe?.();
      return handler(req, res, read, raw, lease);
    };
  // refused before the body is read, as the 404, 405 and 413 are: a caller waiting for 100
  // Continue is not asked for a body that cannot change the answer (README, "Compatibility with
  // galaxy-ipam"). What may be the leader's to decide is read: handing it on takes the body.
  const unreadRefusal = (verb: Verb) =>
    verb.decided && options.route && !options.decidesHere?.() ? undefined : notServingRefusal();
  // the verbs that carry nodes read full Nodes through the reader, which remembers them by their bytes
  const nodes = new FullNodeReader(decodeRequestNode);
  const verbs = new Map<string, Verb>([
    ['/v1/filter', { handler: serving(filter), reader: nodes }],
    ['/v1/prioritize', { handler: serving(prioritize), reader: nodes }],
    ['/v1/priority', { handler: serving(prioritize), reader: nodes }],
    // a bind names a pod and a node: no reason to read megabytes of anything else before refusing it
    ['/v1/bind', { handler: decided('bind', serving(bind)), limit: BIND_BODY_LIMIT, decided: true }],
    ['/v1/preempt', { handler: decided('preempt', serving(preempt)), decided: true }],
  ]);

  const buffers = options.bodyBuffers ?? new BodyBuffers();
  const answer = async (
    req: IncomingMessage,
    res: ServerResponse,
    verb: Verb,
    lease: BufferLease | undefined,
    share: BodyShare,
    bodyRead: () => void,
  ) => {
    const most = Math.min(limit, verb.limit ?? limit);
    const body = await readBody(req, res, most, share, budget, lease, () => unreadRefusal(verb));
    bodyRead();
    const plainOrInflating = decoded(req, body, Math.min(most, inflatedLimit));
    const raw = plainOrInflating instanceof Buffer ? plainOrInflating : await plainOrInflating;
    // an inflated body is held beside its bytes on the wire
    if (raw !== body && !share.take(raw.length)) throw busy(budget);
    await verb.handler(req, res, readRequest(raw, verb.reader), raw, lease);
  };

  // the one mapping of this port: a caller's mistake is a 4xx with the reason, anything else a 500
  const failed = (req: IncomingMessage, res: ServerResponse, err: unknown) => {
    if (res.headersSent) return;
    const status = (err as { status?: number }).status;
    // too many bodies at once: the caller retries, and nothing here failed
    if (err instanceof BadRequest && status === 503) return sendError(res, 503, err.message);
    const validation = kindOf(err) === 'validation';
    if (validation || (status !== undefined && status >= 400 && status < 500)) {
      const message =
        validation || err instanceof BadRequest
          ? (err as Error).message
          : `bad request: ${(err as Error).message}`;
      return sendError(res, status && status !== 500 ? status : 400, message);
    }
    log.error(
      { path: pathOf(req.url), err: (err as Error)?.stack ?? String(err) },
      'extender request failed',
    );
    sendError(res, 500, `server error: ${(err as Error)?.message}`);
  };

  return (req, res) => {
    const route = routeOf(req.url);
    if (answerHealth(req, res, route, notReady)) return;
    const verb = verbs.get(route);
    // only the verbs read a body: a POST anywhere else is a 404, not a JSON error
    if (!verb) return sendError(res, 404, `no route ${req.method} ${pathOf(req.url)}`);
    // a verb's path with another method: 405, as galaxy's framework answers
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return sendError(res, 405, `method not allowed: ${req.method} ${pathOf(req.url)} takes POST`);
    }
    // in flight once its body is read: a shutdown waits for what is being answered or relayed, not
    // for a body still arriving (a caller sending a byte a second held SIGTERM for minutes)
    let entered = false;
    let closed = false;
    const bodyRead = () => {
      if (closed) return;
      inFlight.enter();
      entered = true;
    };
    const lease = verb.reader && buffers.lease();
    const share = budget.share();
    const done = answer(req, res, verb, lease, share, bodyRead).catch((err: unknown) =>
      failed(req, res, err),
    );
    res.on('close', () => {
      closed = true;
      if (entered) inFlight.leave();
      // the body's and the answer's buffers are free once the answer is sent (or can no longer be)
      // and the handler is done with the body (a follower's filter forwards it to the leader)
      void done.then(() => {
        lease?.end();
        share.release();
      });
    });
  };
}
