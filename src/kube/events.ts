// Kubernetes Events: what an operator sees in `kubectl describe` and `kubectl get events`.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../log.js';
import { apiClient } from './resend.js';

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

/** `message`, or its start and its length when it is over EVENT_MESSAGE_LIMIT. */
export const eventMessage = (message: string): string =>
  message.length <= EVENT_MESSAGE_LIMIT
    ? message
    : `${message.slice(0, EVENT_MESSAGE_LIMIT)}... (${message.length} characters)`;

export interface EventRecorder {
  record(object: InvolvedObject, type: EventType, reason: string, message: string): void;
}

/** Records Events through the API server; a failure to record is logged, never thrown. */
export class KubeEventRecorder implements EventRecorder {
  private readonly api: CoreV1Api;
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    kubeConfig: KubeConfig,
    private readonly log: Logger,
  ) {
    this.api = apiClient(kubeConfig, CoreV1Api);
  }

  record(object: InvolvedObject, type: EventType, reason: string, message: string): void {
    const namespace = object.namespace || 'default';
    const now = new Date();
    const write = this.api
      .createNamespacedEvent({
        namespace,
        body: {
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
      })
      .catch((err: unknown) =>
        this.log.warn(
          { reason, object: object.name, err: (err as Error).message },
          'could not record an Event',
        ),
      )
      .finally(() => this.pending.delete(write));
    this.pending.add(write);
  }

  /** Waits for the Events being written (tests, shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}
