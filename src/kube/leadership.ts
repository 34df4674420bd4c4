// Leadership as the rest of floatip sees it: how to ask for it (the options, galaxy-ipam's defaults,
// and client-go's timing rules they must keep, which are the safety argument of the whole election),
// what it reports (the callbacks), and the refusal a write gets without it. Apart from the elector's
// machinery (leader-elector.ts) so that callers and tests read the contract without the state
// machine; leader-election.ts re-exports it.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';

/** galaxy-ipam's defaults (its --leader-elect-* flags). */
export const LEADER_ELECTION_DEFAULTS = {
  namespace: 'kube-system',
  name: 'galaxy-ipam',
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
} as const;

/** `<hostname>_<uuid>`, as galaxy-ipam names itself: unique per process, readable per host. */
export const defaultIdentity = (): string => `${hostname()}_${randomUUID()}`;

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The subset of a pino logger the elector uses. */
export interface ElectionLogger {
  debug?(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface LeaderElectorOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace?: string;
  readonly name?: string;
  readonly identity?: string;
  /**
   * Published on the Lease while this replica holds it (annotation floatip.io/leader-address):
   * where followers send what only the leader may do.
   */
  readonly address?: string;
  /** How long others wait after the last renew before taking over. Written as whole seconds, rounded up. */
  readonly leaseDurationMs?: number;
  /** How long the leader keeps leading without a successful renew. */
  readonly renewDeadlineMs?: number;
  /** How often the leader renews and candidates try to acquire. */
  readonly retryPeriodMs?: number;
  readonly log?: ElectionLogger;
  readonly clock?: Clock;
}

/**
 * Called on the elector's own transitions. A callback that throws or rejects is logged, never
 * propagated: election goes on regardless.
 */
export interface LeaderCallbacks {
  /** This replica now leads; `epoch` identifies this term (see `assertLeader`). */
  onStartedLeading?(epoch: number): void | Promise<void>;
  /** This replica no longer leads; `isLeader()` is already false when this runs. */
  onStoppedLeading?(): void | Promise<void>;
  /** The Lease is held, unexpired, by another identity than before (this replica's own included). */
  onNewLeader?(identity: string): void | Promise<void>;
}

/** A write was refused because this replica does not lead (any more, or not in the term the caller started in). */
export class NotLeaderError extends Error {
  /** This replica cannot act; the leader can (a kind of src/ipam/errors.ts). */
  readonly kind = 'unavailable';

  constructor(
    /** `namespace/name` of the Lease. */
    readonly lease: string,
    readonly identity: string,
    /** The leader this replica last saw, if any. */
    readonly leader: string | undefined,
    detail: string,
  ) {
    super(
      `not the leader of Lease ${lease} (this replica is ${identity}, ` +
        `${leader ? `the leader is ${leader}` : 'no leader is known'}): ${detail}`,
    );
  }
  override get name(): string {
    return 'NotLeaderError';
  }
}

/** The options with their defaults filled in and checked, and the duration as the Lease records it (whole seconds). */
export type ElectionSettings = Required<Omit<LeaderElectorOptions, 'kubeConfig' | 'address'>> & {
  readonly leaseDurationSeconds: number;
};

const noLog: ElectionLogger = { info: () => undefined, warn: () => undefined };
const systemClock: Clock = { now: () => Date.now() };

/** Fills in the defaults; throws when the timings could let two replicas lead at once. */
export function electionSettings(options: LeaderElectorOptions): ElectionSettings {
  const namespace = options.namespace ?? LEADER_ELECTION_DEFAULTS.namespace;
  const name = options.name ?? LEADER_ELECTION_DEFAULTS.name;
  const identity = options.identity ?? defaultIdentity();
  const leaseDurationMs = options.leaseDurationMs ?? LEADER_ELECTION_DEFAULTS.leaseDurationMs;
  const renewDeadlineMs = options.renewDeadlineMs ?? LEADER_ELECTION_DEFAULTS.renewDeadlineMs;
  const retryPeriodMs = options.retryPeriodMs ?? LEADER_ELECTION_DEFAULTS.retryPeriodMs;
  // client-go's checks: a leader must give up before others may take over, and must get more than
  // one renew attempt in before it does.
  const lease = `Lease ${namespace}/${name}`;
  if (!identity) throw new Error(`leader election on ${lease}: the identity must not be empty`);
  if (!(retryPeriodMs > 0)) {
    throw new Error(`leader election on ${lease}: retry period ${retryPeriodMs} ms must be > 0`);
  }
  if (!(renewDeadlineMs > 1.2 * retryPeriodMs)) {
    throw new Error(
      `leader election on ${lease}: renew deadline ${renewDeadlineMs} ms must exceed ` +
        `1.2 × the retry period (${retryPeriodMs} ms)`,
    );
  }
  if (!(leaseDurationMs > renewDeadlineMs)) {
    throw new Error(
      `leader election on ${lease}: lease duration ${leaseDurationMs} ms must exceed ` +
        `the renew deadline (${renewDeadlineMs} ms)`,
    );
  }
  return {
    namespace,
    name,
    identity,
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
    // The field is whole seconds; rounding down would eat into the margin that keeps two leaders apart.
    leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
    log: options.log ?? noLog,
    clock: options.clock ?? systemClock,
  };
}
