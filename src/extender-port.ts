// The scheduler extender's port: the four verbs behind it, over TLS with client certificates when
// asked (the same mutual TLS a follower reaches the leader with), what a follower hands to the
// leader (bind, preempt, a filter that refused its pod for later), and its part of a shutdown: the
// binds this replica decides end before the Lease is handed on, and what is still in flight before
// the port closes.
import type { Binder } from './extender/bind.js';
import { DEFAULT_BIND_BUDGET_MS } from './extender/binding.js';
import { extenderApp } from './extender/http.js';
import { InFlight } from './extender/in-flight.js';
import { LeaderForward, type LeaderView } from './extender/leader-forward.js';
import type { NotedRefusals } from './extender/pod-placement.js';
import type { SchedulingQueries } from './extender/queries.js';
import type { FloatipOptions } from './floatip-options.js';
import type { Logger } from './log.js';
import type { Metrics } from './metrics/metrics.js';
import { close, listen, urlOf } from './ports.js';

export interface ExtenderPortDeps {
  readonly verbs: { readonly queries: SchedulingQueries; readonly binder: Binder };
  /** Notes a filter's refusal for later: a follower then hands that filter to the leader (http.ts). */
  readonly refusals: NotedRefusals;
  /** The election as a follower's forward reads it (with leader election only). */
  readonly leader: LeaderView;
  /** Hands the Lease on, once the binds this replica decides have ended. */
  readonly handOver: () => Promise<void>;
  readonly notServingBecause: () => string | undefined;
  readonly notReadyBecause: () => string | undefined;
  readonly onServe: () => void;
  readonly metrics: Metrics;
  readonly log: Logger;
}

/** The extender listening: its base URL, and how to stop it. */
export interface ExtenderPort {
  readonly url: string;
  stop(): Promise<void>;
}

export async function listenExtender(
  options: FloatipOptions,
  {
    verbs,
    refusals,
    leader,
    handOver,
    notServingBecause,
    notReadyBecause,
    onServe,
    metrics,
    log,
  }: ExtenderPortDeps,
  at: Parameters<typeof listen>[2],
): Promise<ExtenderPort> {
  const inFlight = new InFlight();
  // binds this replica decides: a shutdown waits for them before it hands the Lease on
  const deciding = new InFlight();
  const bind = async (...args: Parameters<Binder['bind']>) => {
    deciding.enter();
    try {
      return await verbs.binder.bind(...args);
    } finally {
      deciding.leave();
    }
  };
  const forwardTls =
    options.tls && options.extenderClientCa !== undefined
      ? { ...options.tls, ca: options.extenderClientCa }
      : undefined;
  const forward = options.leaderElection
    ? new LeaderForward(leader, {
        ...(forwardTls ? { tls: forwardTls } : {}),
        deadlineMs: options.forwardDeadlineMs ?? options.bindTimeoutMs ?? DEFAULT_BIND_BUDGET_MS,
      })
    : undefined;
  const server = await listen(
    'the scheduler extender port (--port)',
    extenderApp(
      {
        ready: (pod) => verbs.queries.ready(pod),
        filter: (...args) => verbs.queries.filter(...args),
        prioritize: (...args) => verbs.queries.prioritize(...args),
        preempt: (...args) => verbs.queries.preempt(...args),
        bind,
      },
      log,
      {
        notServingBecause,
        notReadyBecause,
        metrics,
        onServe,
        ...(forward
          ? {
              route: (...args) => forward.route(...args),
              decidesHere: () => leader.decides(),
              refusedForLater: () => refusals.take(),
              askLeader: (...args) => forward.ask(...args),
            }
          : {}),
      },
      inFlight,
    ),
    at,
    options.port,
    options.tls && {
      ...options.tls,
      ...(options.extenderClientCa !== undefined
        ? { ca: options.extenderClientCa, requestCert: true, rejectUnauthorized: true }
        : {}),
    },
  );
  const url = urlOf(options.bind, server, options.tls);
  log.info(
    {
      clientCertificates: options.extenderClientCa !== undefined,
      url,
      leaderElection: options.leaderElection !== undefined,
    },
    'scheduler extender listening',
  );
  return {
    url,
    // after SIGTERM: still serving while not ready (shutdownDelayMs), then the binds being decided
    // finish, the Lease is handed on, and what is still in flight is relayed before the port closes
    async stop() {
      if (options.shutdownDelayMs) await new Promise((r) => setTimeout(r, options.shutdownDelayMs));
      await deciding.drained();
      await handOver();
      await inFlight.drained();
      await close(server);
      forward?.close();
    },
  };
}
