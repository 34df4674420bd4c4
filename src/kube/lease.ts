// The coordination.k8s.io/v1 Lease as client-go's leaderelection writes it, and the calls that read
// and write it. Kept apart from the elector so that the election reads as decisions only (when to
// take, renew, give up), while what each decision writes into the record, and how a call is bounded
// and aborted, stays in one place: operators read these records as they would any client-go
// controller's, so their shape must not drift between the transitions.
import {
  type ConfigurationOptions,
  CoordinationV1Api,
  type KubeConfig,
  type V1Lease,
  type V1LeaseSpec,
  V1MicroTime,
} from '@kubernetes/client-node';
import { withSignal } from './call-signal.js';
import { KubeApiError, kubeError } from './custom-resources.js';
import { apiClient } from './resend.js';

/** Who writes the record, and for how long others must wait on it. */
export interface LeaseHolder {
  readonly identity: string;
  /** Whole seconds, as the field is. */
  readonly leaseDurationSeconds: number;
  /** Where the holder answers what only the leader may do (followers forward there), if anywhere. */
  readonly address?: string;
}

/**
 * The holder's address, on the Lease itself: whoever can read the Lease (every replica can) knows
 * where the leader is in the same read that tells it who leads, so the two never disagree.
 */
export const LEADER_ADDRESS_ANNOTATION = 'floatip.io/leader-address';

/** The address the record's holder published, if any. */
export function leaseAddress(lease: V1Lease): string | undefined {
  return lease.metadata?.annotations?.[LEADER_ADDRESS_ANNOTATION] || undefined;
}

/** `lease`'s metadata with the holder's address (or none: a released Lease names nobody to reach). */
function withAddress(lease: V1Lease, address: string | undefined): V1Lease['metadata'] {
  const { [LEADER_ADDRESS_ANNOTATION]: _previous, ...others } = lease.metadata?.annotations ?? {};
  const annotations = address ? { ...others, [LEADER_ADDRESS_ANNOTATION]: address } : others;
  return { ...lease.metadata, annotations };
}

/** A timestamp as Kubernetes writes it (MicroTime: RFC 3339 with six fractional digits). */
const microTime = (ms: number): V1MicroTime => new V1MicroTime(ms);

/**
 * client-node does not deserialize MicroTime (it is not in its type map), so a Lease read back holds
 * strings where its types say V1MicroTime; accept both.
 */
function timeOf(value: unknown): number | undefined {
  if (value instanceof Date) return value.getTime();
  if (typeof value !== 'string' || value === '') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Whether others may take the Lease over at `now`, judged by this replica's clock from the record's
 * renewTime; a record without a duration counts with `fallbackSeconds`.
 */
export function leaseExpired(spec: V1LeaseSpec, now: number, fallbackSeconds: number): boolean {
  const renewed = timeOf(spec.renewTime) ?? timeOf(spec.acquireTime);
  if (renewed === undefined) return true; // nothing in it says the holder is alive
  const seconds = spec.leaseDurationSeconds ?? fallbackSeconds;
  return renewed + seconds * 1000 <= now;
}

/** The record a candidate creates when there is no Lease yet. */
export function freshLease(namespace: string, name: string, holder: LeaseHolder, now: number): V1Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name,
      namespace,
      ...(holder.address ? { annotations: { [LEADER_ADDRESS_ANNOTATION]: holder.address } } : {}),
    },
    spec: {
      holderIdentity: holder.identity,
      leaseDurationSeconds: holder.leaseDurationSeconds,
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    },
  };
}

/** `current` taken over (expired or released); a new holder counts as a transition. */
export function claimedLease(current: V1Lease, holder: LeaseHolder, now: number): V1Lease {
  const spec: V1LeaseSpec = current.spec ?? {};
  const previous = spec.holderIdentity ?? '';
  return {
    ...current,
    metadata: withAddress(current, holder.address),
    spec: {
      ...spec,
      holderIdentity: holder.identity,
      leaseDurationSeconds: holder.leaseDurationSeconds,
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: (spec.leaseTransitions ?? 0) + (previous === holder.identity ? 0 : 1),
    },
  };
}

/** `lease` renewed by its holder: only renewTime moves. */
export function renewedLease(lease: V1Lease, holder: LeaseHolder, now: number): V1Lease {
  return {
    ...lease,
    metadata: withAddress(lease, holder.address),
    spec: {
      ...lease.spec,
      holderIdentity: holder.identity,
      leaseDurationSeconds: holder.leaseDurationSeconds,
      renewTime: microTime(now),
    },
  };
}

/** client-go's ReleaseOnCancel: an empty holder and a 1 s duration. */
export function releasedLease(lease: V1Lease, now: number): V1Lease {
  return {
    ...lease,
    metadata: withAddress(lease, undefined),
    spec: {
      ...lease.spec,
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: microTime(now),
      renewTime: microTime(now),
    },
  };
}

/** One Lease, read and written as `identity`; every call bounded by `timeoutMs` and abortable. */
export class LeaseClient {
  private readonly api: CoordinationV1Api;
  private readonly requests = new Set<AbortController>();

  constructor(
    kubeConfig: KubeConfig,
    readonly namespace: string,
    readonly name: string,
    private readonly identity: string,
    /** An answer later than this is of no use (the elector's renew deadline). */
    private readonly timeoutMs: number,
  ) {
    this.api = apiClient(kubeConfig, CoordinationV1Api);
  }

  read(): Promise<V1Lease> {
    return this.request('get', (options) =>
      this.api.readNamespacedLease({ name: this.name, namespace: this.namespace }, options),
    );
  }

  create(body: V1Lease): Promise<V1Lease> {
    return this.request('create', (options) =>
      this.api.createNamespacedLease({ namespace: this.namespace, body }, options),
    );
  }

  /** Always conditional: `body.metadata.resourceVersion` is the version the write was decided on. */
  replace(body: V1Lease): Promise<V1Lease> {
    return this.request('update', (options) =>
      this.api.replaceNamespacedLease({ name: this.name, namespace: this.namespace, body }, options),
    );
  }

  /** Aborts every call in flight (they fail as their callers would see any failed call). */
  abortAll(): void {
    for (const request of this.requests) request.abort();
  }

  /** One API call; failures become KubeApiError naming the Lease and the identity. */
  private async request<T>(verb: string, call: (options: ConfigurationOptions) => Promise<T>): Promise<T> {
    const what = `${verb} Lease ${this.namespace}/${this.name} as ${this.identity}`;
    const controller = new AbortController();
    let timedOut = false;
    const timeout = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    this.requests.add(controller);
    try {
      return await call(withSignal(controller.signal));
    } catch (err) {
      if (timedOut) throw new KubeApiError(0, 'Timeout', `${what}: no answer within ${this.timeoutMs} ms`);
      throw kubeError(err, what);
    } finally {
      clearTimeout(timeout);
      this.requests.delete(controller);
    }
  }
}
