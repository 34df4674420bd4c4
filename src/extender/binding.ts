// The binding write of a bind: galaxy's retries, bounded by the bind's deadline, and what an
// undecided binding means. A binding whose answer never came, or that failed inside the API server
// (a 5xx: etcd timed out or went away, and the write may still have been applied), may have landed:
// the pod is read back before anything is undone, and while it may still land nothing is (an address
// undone there could go to another pod while this one runs with it).
import type { V1Pod } from '@kubernetes/client-node';
import { type AllocationKey, type ErrorKind, kindOf } from '../ipam/index.js';
import type { ClusterWorld } from '../kube/cluster-world.js';
import { KubeApiError } from '../kube/custom-resources.js';
import type { Logger } from '../log.js';
import { errorText } from './pod-placement.js';

/** A bind refused or failed for a reason of the extender's own, with what the caller should do. */
export class BindError extends Error {
  constructor(
    message: string,
    readonly kind: ErrorKind,
  ) {
    super(message);
  }
}

/** galaxy retries the binding for up to 3 s every 500 ms. */
const BINDING_RETRY_MS = 500;
const BINDING_DEADLINE_MS = 3000;
/**
 * How long a bind may take, from its arrival to its binding's answer, unless configured: below
 * kube-scheduler's extender httpTimeout (5 s unless set). A binding that lands after the scheduler
 * gave up the call can contradict what it decided next (v1.37 exits: "scheduler cache is corrupted").
 */
export const DEFAULT_BIND_BUDGET_MS = 4000;
/** A binding is not started with less time than this left: it would most likely end unanswered. */
export const BINDING_MIN_MS = 250;

/**
 * The binding's answer never came (the call timed out or its connection died) or was a 5xx: it may
 * have landed.
 * The pod keeps its addresses (undoing could hand them to another pod while this one runs with
 * them); a later bind of the pod reuses them, and its deletion releases them by its policy.
 */
export class BindingOutcomeUnknown extends BindError {}

/**
 * The pod was deleted while its binding was written (the Binding, or the pod read back, is
 * NotFound). As galaxy (docs/galaxy.md#bind), nothing is undone: the pod's deletion puts the
 * addresses bind gave it through its release policy (a pool pod's parked at the pool), as for any
 * pod deleted after its bind.
 */
export class PodDeletedWhileBinding extends BindError {}

export class PodBinding {
  constructor(
    private readonly world: Pick<ClusterWorld, 'pods' | 'bind'>,
    private readonly log: Logger,
    private readonly clock: () => number,
  ) {}

  /**
   * galaxy retries the binding for up to 3 s every 500 ms, but not when the pod is gone; here no
   * attempt outlives the bind's deadline either. An attempt whose answer never came, or was a 5xx,
   * may have landed: the pod is read back before anything is undone.
   */
  async bind(
    pod: V1Pod,
    key: AllocationKey,
    uid: string,
    nodeName: string,
    annotations: Record<string, string>,
    deadline: number,
  ): Promise<void> {
    const namespace = pod.metadata?.namespace ?? 'default';
    const name = pod.metadata?.name ?? '';
    const until = Math.min(deadline, this.clock() + BINDING_DEADLINE_MS);
    let undecided: unknown;
    for (;;) {
      const left = until - this.clock();
      let err: unknown;
      if (left < BINDING_MIN_MS) {
        err = new Error(`no time left for the binding (${left} ms before the bind's deadline)`);
      } else {
        try {
          await this.world.bind(namespace, name, uid, nodeName, annotations, left);
          return;
        } catch (failed) {
          err = failed;
        }
      }
      const status = err instanceof KubeApiError ? err.status : undefined;
      if (mayHaveLanded(status)) undecided = err;
      const gone = status === 404 || status === 409;
      if (gone || left < BINDING_MIN_MS || this.clock() + BINDING_RETRY_MS > until) {
        // a 409 after an undecided attempt is most likely that attempt, landed
        if (undecided !== undefined && status !== 404) {
          return this.settle(pod, key, uid, nodeName, undecided, err);
        }
        const failure = status === 404 ? PodDeletedWhileBinding : BindError;
        throw new failure(`update pod ${key.text}: ${errorText(err)}`, kindOf(err) ?? 'transient');
      }
      await new Promise((r) => setTimeout(r, BINDING_RETRY_MS));
    }
  }

  /**
   * After an undecided binding attempt, and a last one that failed: what the API server has. Bound
   * here: the bind succeeded. Gone, another incarnation, or bound elsewhere: it did not land, and
   * undoing is safe. Unbound or unreadable: it may still land, so nothing is undone.
   */
  private async settle(
    pod: V1Pod,
    key: AllocationKey,
    uid: string,
    nodeName: string,
    undecided: unknown,
    last: unknown,
  ): Promise<void> {
    const what = `the binding to ${nodeName} ${undecidedText(undecided)}`;
    const namespace = pod.metadata?.namespace ?? 'default';
    const name = pod.metadata?.name ?? '';
    let now: V1Pod | undefined;
    try {
      now = await this.world.pods.fetch(namespace, name);
    } catch (err) {
      throw new BindingOutcomeUnknown(
        `update pod ${key.text}: ${what} and the pod could not be read back (${errorText(err)}); its addresses stay held for it`,
        'transient',
      );
    }
    const incarnation = uid || pod.metadata?.uid;
    if (now && now.metadata?.uid === incarnation && now.spec?.nodeName === nodeName) {
      this.log.info(
        { pod: `${namespace}/${name}`, node: nodeName, err: errorText(undecided) },
        'binding was undecided but landed',
      );
      return;
    }
    if (!now)
      throw new PodDeletedWhileBinding(
        `update pod ${key.text}: ${errorText(last)}`,
        kindOf(last) ?? 'transient',
      );
    if (now.metadata?.uid !== incarnation || now.spec?.nodeName) {
      throw new BindError(`update pod ${key.text}: ${errorText(last)}`, kindOf(last) ?? 'transient');
    }
    throw new BindingOutcomeUnknown(
      `update pod ${key.text}: ${what} and the pod is not bound yet; its addresses stay held for it`,
      'transient',
    );
  }
}

/** No answer (status 0), or a failure inside the API server (5xx): the write may have been applied. */
const mayHaveLanded = (status: number | undefined): boolean =>
  status === 0 || (status !== undefined && status >= 500);

function undecidedText(err: unknown): string {
  const status = err instanceof KubeApiError ? err.status : undefined;
  const how = status === 0 ? 'was not answered' : 'failed inside the API server, which may have applied it';
  return `${how} (${errorText(err)})`;
}
