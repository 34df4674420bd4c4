// Kubernetes Events: what an operator sees in `kubectl describe` and `kubectl get events`.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../log.js';

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
    this.api = kubeConfig.makeApiClient(CoreV1Api);
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
          message,
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
