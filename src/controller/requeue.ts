// kube-scheduler v1.20 puts a pod whose bind the extender refused (or whose extender call failed) in
// its unschedulable queue, where it waits up to 60 s (flushed every 30 s) unless the pod itself or
// the cluster changes. Two such waits are floatip's own to end: the UID rule (a re-created pod waits
// until its previous incarnation's deletion has been processed), and floatip being away (restarting,
// or no leader). Refused pods are remembered and touched (an annotation with the time) once the old
// incarnation is dealt with; pods put aside while floatip was away are touched when it takes over.
// A touch sends the pod back to the scheduler's active queue at once.
import type { Logger } from '../log.js';

/** Set on a pod floatip sent back to the scheduler; the value is when (RFC 3339). */
export const REQUEUED_ANNOTATION = 'floatip.io/requeued-at';

/** Touches in flight when many pods wait: enough to be quick, few enough not to crowd the API server. */
const KICK_CONCURRENCY = 4;

/** Writes annotations on the pod, only while it is still the incarnation `uid`. */
export type AnnotatePod = (
  namespace: string,
  name: string,
  uid: string,
  annotations: Record<string, string>,
) => Promise<void>;

export class Requeue {
  /** "namespace/name" → the UID of the incarnation that was refused. */
  private readonly waiting = new Map<string, string>();

  constructor(
    private readonly annotate: AnnotatePod,
    private readonly log: Logger,
  ) {}

  /** A bind of this pod was refused until its previous incarnation is dealt with. */
  refused(namespace: string, name: string, uid: string): void {
    if (uid) this.waiting.set(`${namespace}/${name}`, uid);
  }

  /** The pod was bound after all: nothing to do for it any more. */
  bound(namespace: string, name: string): void {
    this.waiting.delete(`${namespace}/${name}`);
  }

  /** An incarnation of namespace/name has been dealt with: a waiting one is touched. */
  async settled(namespace: string, name: string): Promise<void> {
    const who = `${namespace}/${name}`;
    const uid = this.waiting.get(who);
    if (uid === undefined) return;
    this.waiting.delete(who);
    try {
      await this.annotate(namespace, name, uid, { [REQUEUED_ANNOTATION]: new Date().toISOString() });
      this.log.info({ pod: who, uid }, 'sent a pod refused by the UID rule back to the scheduler');
    } catch (err) {
      // gone or re-created again: the scheduler has a new pod to schedule anyway
      this.log.info({ pod: who, uid, err: (err as Error).message }, 'could not touch a refused pod');
    }
  }

  /**
   * Touches these pods (a few at a time): floatip has just started serving the scheduler, and they
   * were put aside while it could not. Resolves with how many were touched.
   */
  async kick(pods: readonly { namespace: string; name: string; uid: string }[]): Promise<number> {
    let next = 0;
    let touched = 0;
    const at = new Date().toISOString();
    const worker = async () => {
      while (next < pods.length) {
        const { namespace, name, uid } = pods[next++]!;
        try {
          await this.annotate(namespace, name, uid, { [REQUEUED_ANNOTATION]: at });
          touched++;
        } catch (err) {
          this.log.info(
            { pod: `${namespace}/${name}`, err: (err as Error).message },
            'could not touch a pod put aside by the scheduler',
          );
        }
      }
    };
    await Promise.all(Array.from({ length: KICK_CONCURRENCY }, worker));
    if (pods.length > 0) {
      this.log.info(
        { touched, of: pods.length },
        'sent pods put aside while floatip was away back to the scheduler',
      );
    }
    return touched;
  }

  /** How many pods wait (for tests and metrics). */
  get size(): number {
    return this.waiting.size;
  }
}
