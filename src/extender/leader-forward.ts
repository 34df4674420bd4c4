// Every replica answers kube-scheduler; only the lease holder decides. filter and prioritize are
// answered from this replica's warm caches; bind and preempt are decided by the leader alone, so a
// follower hands them, byte for byte, to the address the leader published on the Lease and relays
// its answer. A forwarded call never travels further: a replica that receives one without leading
// refuses it (503, `floatip-not-leader`), and the forwarding replica retries, a bounded number of
// times, while the leadership moves. Nothing here writes: the lease check on every write stays the
// guarantee that no two replicas decide one address.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { DEFAULT_BIND_BUDGET_MS } from './binding.js';
import { answeredError } from './wire-answers.js';

/** What this module needs to know about the election. */
export interface LeaderView {
  /** This replica's identity on the Lease (named in refusals and in the forwarded header). */
  readonly identity: string;
  /** Whether this replica decides now: it holds the Lease and is not shutting down. */
  decides(): boolean;
  /** The address the leader published on the Lease (a URL), if one is known. */
  leaderAddress(): string | undefined;
  /** Why no leader is asked when none is known (this replica leads but does not decide yet). */
  noLeaderBecause?(): string | undefined;
  /** Reads the Lease afresh (after a failed attempt: the leadership may have moved). */
  refresh?(): Promise<void>;
}

/** The client side of the extender port's mutual TLS: this replica's certificate, and the CA it trusts. */
export interface ForwardTls {
  readonly cert: string;
  readonly key: string;
  readonly ca: string;
}

export interface LeaderForwardOptions {
  /** How long a call waits for a leader to answer, retries included (below the scheduler's httpTimeout). */
  readonly deadlineMs?: number;
  /** The pause between attempts while no leader answers. */
  readonly retryMs?: number;
  readonly tls?: ForwardTls;
}

/** An answer for the caller, as the leader (or this module) gave it. */
export interface ForwardedAnswer {
  readonly status: number;
  readonly body: Buffer;
  readonly headers?: Readonly<Record<string, string>>;
}

export type DecidedVerb = 'bind' | 'preempt';
/** Answered by any replica, but asked of the leader when its answer leaves the leader work to do. */
export type AskedVerb = 'filter';

/** Set on a forwarded call (to the forwarding replica's identity): the receiver never forwards it again. */
export const FORWARDED_BY_HEADER = 'floatip-forwarded-by';
/**
 * Set on a forwarded call: the milliseconds left of the scheduler's wait, so that the leader's bind
 * never writes after the scheduler stopped waiting for it.
 */
export const BUDGET_HEADER = 'floatip-budget-ms';
/** Set on a refusal by a replica that does not lead: the caller may retry elsewhere. */
export const NOT_LEADER_HEADER = 'floatip-not-leader';

const DEFAULT_RETRY_MS = 200;
/** What a forwarded call's budget keeps back for the way back to this replica. */
const BUDGET_MARGIN_MS = 200;

const errorBody = (message: string): Buffer => Buffer.from(JSON.stringify({ Error: answeredError(message) }));

/** The attempt failed before the leader decided anything (it was unreachable, or not the leader). */
class NotAnswered extends Error {}

export class LeaderForward {
  private readonly deadlineMs: number;
  private readonly retryMs: number;
  private readonly agents: { http: HttpAgent; https: HttpsAgent };
  /** One Lease read shared by every call waiting for a leader, at most one per retry period. */
  private refreshing: Promise<void> | undefined;
  private refreshedAt = 0;

  constructor(
    private readonly view: LeaderView,
    private readonly options: LeaderForwardOptions = {},
  ) {
    this.deadlineMs = options.deadlineMs ?? DEFAULT_BIND_BUDGET_MS;
    this.retryMs = options.retryMs ?? DEFAULT_RETRY_MS;
    const tls = options.tls;
    this.agents = {
      http: new HttpAgent({ keepAlive: true }),
      // The leader's address is a pod IP, which no certificate names: the chain to the extender's
      // own CA is the check (that CA signs floatip and kube-scheduler only).
      https: new HttpsAgent({
        keepAlive: true,
        ...(tls ? { cert: tls.cert, key: tls.key, ca: tls.ca, checkServerIdentity: () => undefined } : {}),
      }),
    };
  }

  /**
   * undefined: this replica decides, answer here. Otherwise the answer to send: the leader's, or a
   * refusal (a forwarded call reached a replica that does not lead), or why no leader answered.
   */
  async route(
    verb: DecidedVerb,
    body: Buffer,
    forwardedBy: string | undefined,
  ): Promise<ForwardedAnswer | undefined> {
    if (this.view.decides()) return undefined;
    if (forwardedBy !== undefined) {
      const why = this.view.noLeaderBecause?.();
      return {
        status: 503,
        headers: { [NOT_LEADER_HEADER]: this.view.identity },
        body: errorBody(
          why === undefined
            ? `not the leader: ${this.view.identity} does not hold the Lease (${verb} forwarded by ${forwardedBy}); retry`
            : `not deciding: ${this.view.identity}: ${why} (${verb} forwarded by ${forwardedBy})`,
        ),
      };
    }
    const deadline = Date.now() + this.deadlineMs;
    let why = 'no leader is known';
    for (;;) {
      if (this.view.decides()) return undefined;
      const address = this.view.leaderAddress();
      if (address === undefined) why = this.view.noLeaderBecause?.() ?? 'no leader is known';
      else {
        try {
          return await this.post(address, verb, body, deadline - Date.now());
        } catch (err) {
          if (!(err instanceof NotAnswered)) return { status: 503, body: errorBody((err as Error).message) };
          why = err.message;
        }
      }
      if (Date.now() + this.retryMs >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, this.retryMs));
      await this.refresh();
    }
    return {
      status: 503,
      body: errorBody(
        `no leader decided this ${verb} within ${this.deadlineMs} ms (${why}); the scheduler retries the pod`,
      ),
    };
  }

  private refresh(): Promise<void> {
    if (!this.view.refresh) return Promise.resolve();
    if (!this.refreshing && Date.now() - this.refreshedAt >= this.retryMs) {
      this.refreshing = this.view.refresh().finally(() => {
        this.refreshedAt = Date.now();
        this.refreshing = undefined;
      });
    }
    return this.refreshing ?? Promise.resolve();
  }

  /**
   * One attempt at the leader, for a call this replica can answer itself (a filter that refused a
   * pod for later): the leader's answer when it gave one, else undefined (answer here). Never
   * for a call that was itself forwarded, and not while this replica decides.
   */
  async ask(
    verb: AskedVerb,
    body: Buffer,
    forwardedBy: string | undefined,
  ): Promise<ForwardedAnswer | undefined> {
    if (forwardedBy !== undefined || this.view.decides()) return undefined;
    const address = this.view.leaderAddress();
    if (address === undefined) return undefined;
    const answer = await this.post(address, verb, body, this.deadlineMs).catch(() => undefined);
    return answer?.status === 200 ? answer : undefined;
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /** One attempt. NotAnswered when retrying is safe: nothing reached a leader that could decide. */
  private post(
    address: string,
    verb: DecidedVerb | AskedVerb,
    body: Buffer,
    timeoutMs: number,
  ): Promise<ForwardedAnswer> {
    const url = new URL(`v1/${verb}`, address.endsWith('/') ? address : `${address}/`);
    const https = url.protocol === 'https:';
    const send = https ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      let answered = false;
      const req = send(
        url,
        {
          method: 'POST',
          agent: https ? this.agents.https : this.agents.http,
          headers: {
            'content-type': 'application/json',
            'content-length': body.length,
            [FORWARDED_BY_HEADER]: this.view.identity,
            // a little less than this replica waits, so that the leader's answer still finds it waiting
            [BUDGET_HEADER]: String(Math.max(0, Math.floor(timeoutMs - BUDGET_MARGIN_MS))),
          },
          timeout: Math.max(1, timeoutMs),
        },
        (res: IncomingMessage) => {
          answered = true;
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', (err) =>
            reject(new Error(`${verb} forwarded to the leader at ${address}: ${err.message}`)),
          );
          res.on('end', () => {
            const answer = Buffer.concat(chunks);
            if (res.headers[NOT_LEADER_HEADER] !== undefined) {
              reject(new NotAnswered(`${address} no longer leads`));
            } else resolve({ status: res.statusCode ?? 502, body: answer });
          });
        },
      );
      req.on('timeout', () => {
        // the leader may be deciding: retrying now could only race it
        req.destroy(new Error(`no answer within ${timeoutMs} ms`));
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (answered) return;
        // refused or reset before any answer: a leader that died, or is gone; the next one is safe
        // to ask, since a pod it already bound is refused by the bind itself (already assigned)
        if (err.code === 'ECONNREFUSED' || err.code === 'ECONNRESET' || err.code === 'EHOSTUNREACH') {
          reject(new NotAnswered(`the leader at ${address} is unreachable (${err.code})`));
        } else {
          reject(new Error(`${verb} forwarded to the leader at ${address}: ${err.message}`));
        }
      });
      req.end(body);
    });
  }
}
