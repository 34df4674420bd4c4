// kube-scheduler v1.20 puts a pod whose bind the extender refused in its unschedulable queue, where it
// waits up to 60 s (flushed every 30 s) unless the pod itself or the cluster changes. Some refusals
// are floatip's own to clear: the UID rule (a re-created pod waits until its previous incarnation's
// deletion has been processed). Such pods are remembered, and once floatip has dealt with the old
// incarnation the waiting one is touched (an annotation with the time), which sends it back to the
// scheduler's active queue at once.
import type { Logger } from '../log.js';

/** Set on a pod floatip sent back to the scheduler; the value is when (RFC 3339). */
export const REQUEUED_ANNOTATION = 'floatip.io/requeued-at';

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

  /** How many pods wait (for tests and metrics). */
  get size(): number {
    return this.waiting.size;
  }
}
