// Kubernetes Events: what an operator sees in `kubectl describe` and `kubectl get events`.
import type { KubeConfig } from '@kubernetes/client-node';
import { clip, printable } from '../clip.js';
import type { Logger } from '../log.js';
import { LeanClient } from './lean-client.js';

export const COMPONENT = 'floatip';

export interface InvolvedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  /** "" for cluster-scoped objects, whose Events go to `default`. */
  readonly namespace: string;
  readonly uid?: string;
}

export type EventType = 'Normal' | 'Warning';

/**
 * The most characters of an Event's message: a failure's text can carry a caller's names (a bind
 * to a node named by 60,000 characters), and an Event is stored, listed and shown by `kubectl
 * describe`. events.k8s.io holds its note to 1,024 bytes; core/v1 does not check, so floatip does.
 */
export const EVENT_MESSAGE_LIMIT = 4096;

/**
 * `message` as `kubectl describe` may print it raw (kubectl before v1.27 escapes nothing): its
 * terminal-steering characters escaped (a key or a ConfigMap's range is anyone's text), then its
 * start and its length when it is over EVENT_MESSAGE_LIMIT.
 */
export const eventMessage = (message: string): string => clip(printable(message), EVENT_MESSAGE_LIMIT);

export interface EventRecorder {
  record(object: InvolvedObject, type: EventType, reason: string, message: string): void;
}

/**
 * The most Event writes in flight: past it an Event is dropped, as client-go's broadcaster drops
 * what its queue of 1,000 cannot hold, so that a slow API server meets a flood of releases with a
 * bounded backlog (and floatip's memory with it).
 */
export const MAX_PENDING_EVENTS = 1000;

/**
 * Records Events through the API server, by the lean client (lean-client.ts: a release writes one,
 * and client-node's request machinery cost as much as the release's own delete); a failure to
 * record is logged, never thrown.
 */
export class KubeEventRecorder implements EventRecorder {
  private readonly writer: LeanClient;
  private readonly pending = new Set<Promise<unknown>>();
  /** Events dropped since the backlog was last empty. */
  private dropped = 0;

  constructor(
    kubeConfig: KubeConfig,
    private readonly log: Logger,
    private readonly maxPending = MAX_PENDING_EVENTS,
  ) {
    this.writer = new LeanClient(kubeConfig);
  }

  record(object: InvolvedObject, type: EventType, reason: string, message: string): void {
    if (this.pending.size >= this.maxPending) {
      if (this.dropped++ === 0)
        this.log.warn(
          { reason, object: object.name, pending: this.pending.size },
          'Events dropped: the API server has not answered the ones before',
        );
      return;
    }
    const namespace = object.namespace || 'default';
    const now = new Date();
    const write = this.writer
      .post(
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`,
        {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { generateName: `${object.name.replace(/[^a-z0-9.-]/g, '-')}.`, namespace },
          involvedObject: {
            apiVersion: object.apiVersion,
            kind: object.kind,
            name: object.name,
            ...(object.namespace ? { namespace: object.namespace } : {}),
            ...(object.uid ? { uid: object.uid } : {}),
          },
          type,
          reason,
          message: eventMessage(message),
          source: { component: COMPONENT },
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
          reportingComponent: COMPONENT,
        },
        `record Event ${reason} for ${object.kind} ${object.name}`,
      )
      .catch((err: unknown) =>
        this.log.warn(
          { reason, object: object.name, err: (err as Error).message },
          'could not record an Event',
        ),
      )
      .finally(() => {
        this.pending.delete(write);
        if (this.pending.size === 0 && this.dropped > 0) {
          this.log.warn(
            { dropped: this.dropped },
            `${this.dropped} Events were dropped while writes were pending`,
          );
          this.dropped = 0;
        }
      });
    this.pending.add(write);
  }

  /** Waits for the Events being written (tests, shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}
