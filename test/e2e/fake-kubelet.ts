// A fake kubelet for a control plane that has none: it plays the kubelet's part of the pod
// lifecycle through the API, so floatip sees what it would see in a real cluster (pods that run and
// get their IP, graceful deletions that finish, evictions, completed pods, nodes that stop
// reporting), without containers.
import {
  CoreV1Api,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type Informer,
  type KubeConfig,
  type ObjectCache,
  type V1Pod,
  type V1Taint,
} from '@kubernetes/client-node';
import { clusterKubeConfig, ENI_IP } from './cluster.js';
import { runInformer, type RunningInformer } from './informers.js';
import { describeError, httpCode, isGoneOrReplaced } from './kube-errors.js';
import { readyCondition } from './nodes.js';

export const CNI_ARGS_ANNOTATION = 'k8s.v1.cni.galaxy.io/args';

export interface FakeKubeletOptions {
  readonly kubeConfig?: KubeConfig;
  /** Watch only this namespace (default: all). */
  readonly namespace?: string;
  /** Which nodes this kubelet runs (default: all), so a test can leave some nodes to itself. */
  readonly manages?: (nodeName: string) => boolean;
  /**
   * Called before each pod action's API call; an error returned is taken as that call's failure
   * (a test's stand-in for an API server that is briefly away).
   */
  readonly interfere?: (action: PodAction, pod: string) => Error | undefined;
}

/** What the kubelet does to a pod on its own: start it, or finish its graceful deletion. */
export type PodAction = 'start' | 'finish-deletion';

/** A failed pod action is tried again after this long, doubling up to the cap, as a kubelet's sync loop would. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 8_000;

export interface HeartbeatStop {
  /** Unknown: what the node lifecycle controller writes when a kubelet goes silent. False: the kubelet reports NotReady. */
  readonly status?: 'Unknown' | 'False';
  /**
   * Also add the NoSchedule taint the node lifecycle controller would (node.kubernetes.io/unreachable
   * or not-ready). The v1.20 scheduler looks only at taints, not at conditions: without it, new pods
   * still land on the node. Default false.
   */
  readonly taint?: boolean;
}

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const STRATEGIC = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const NOT_READY_TAINTS = ['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready'];

/**
 * What it does, per pod (in the watched namespace, on a managed node whose kubelet is up):
 * - bound (spec.nodeName) and Pending: marks it Running and Ready, with podIP(s) from the
 *   `k8s.v1.cni.galaxy.io/args` annotation (`common.ipinfos[*].ip` without the prefix). A pod that
 *   requests tke.cloud.tencent.com/eni-ip waits for that annotation, as galaxy's CNI would;
 * - deletionTimestamp set: finishes the graceful deletion (gracePeriodSeconds 0, UID precondition);
 * - on demand: evict, fail, succeed.
 * An action that fails for a reason that can pass (the API server away, a reset, a 5xx or 429) is
 * tried again with backoff until it succeeds or the pod is gone, as the kubelet's sync loop does:
 * without that, a pod whose deletion failed while kube-apiserver restarted stays Terminating for
 * good, and its address with it.
 * A node whose heartbeat is stopped has a dead kubelet: its pods are neither started nor is their
 * deletion finished, until resumeHeartbeat.
 * Problems go to `errors` (a scenario can assert it stays empty) rather than being thrown, as a
 * kubelet keeps going.
 */
export class FakeKubelet {
  readonly errors: string[] = [];
  /** Watch failures it recovered from by restarting the watch. */
  readonly warnings: string[] = [];
  private readonly kc: KubeConfig;
  private readonly core: CoreV1Api;
  private informer: (Informer<V1Pod> & ObjectCache<V1Pod>) | undefined;
  private running = false;
  private readonly deadNodes = new Set<string>();
  /** Per pod UID, the action under way; events arriving meanwhile only mark the pod dirty. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly dirty = new Set<string>();
  /** UIDs this kubelet already started, or that a test made terminal, or whose deletion it finished. */
  private readonly started = new Set<string>();
  private readonly terminal = new Set<string>();
  private readonly deleted = new Set<string>();
  private readonly hostIPs = new Map<string, Promise<string | undefined>>();
  /** Per pod UID, the delay before the next retry of its failed action, and its timer. */
  private readonly retries = new Map<string, { delayMs: number; timer?: NodeJS.Timeout }>();
  private watch: RunningInformer | undefined;

  constructor(private readonly options: FakeKubeletOptions = {}) {
    this.kc = options.kubeConfig ?? clusterKubeConfig();
    this.core = this.kc.makeApiClient(CoreV1Api);
  }

  /** Resolves once the initial list is processed and the watch is open. */
  async start(): Promise<void> {
    if (this.running) return;
    const ns = this.options.namespace;
    const path = ns ? `/api/v1/namespaces/${ns}/pods` : '/api/v1/pods';
    const list = () =>
      ns ? this.core.listNamespacedPod({ namespace: ns }) : this.core.listPodForAllNamespaces();
    const informer = makeInformer<V1Pod>(this.kc, path, list);
    const onPod = (pod: V1Pod) => this.kick(pod);
    informer.on('add', onPod);
    informer.on('update', onPod);
    this.informer = informer;
    this.running = true;
    this.watch = await runInformer(informer, (message) => this.warnings.push(`pod ${message}`));
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const r of this.retries.values()) clearTimeout(r.timer);
    this.retries.clear();
    const watch = this.watch;
    this.watch = undefined; // a second stop has nothing to stop
    await watch?.stop();
    await this.idle();
  }

  /** Waits until no action is under way. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()]);
  }

  /** Phase Failed, reason Evicted: what the kubelet writes when it evicts a pod under node pressure. */
  async evict(
    namespace: string,
    name: string,
    message = 'The node was low on resource: memory.',
  ): Promise<void> {
    await this.finish(namespace, name, 'Failed', 'Evicted', message);
  }

  /** Phase Failed with another reason, e.g. a container that exited non-zero. */
  async fail(
    namespace: string,
    name: string,
    reason = 'Error',
    message = 'fake kubelet: failed',
  ): Promise<void> {
    await this.finish(namespace, name, 'Failed', reason, message);
  }

  /** Phase Succeeded: all containers exited 0 (a completed Job pod). */
  async succeed(namespace: string, name: string): Promise<void> {
    await this.finish(namespace, name, 'Succeeded', undefined, undefined);
  }

  /**
   * The node's kubelet goes silent: Ready becomes Unknown (or False), and this kubelet stops
   * acting for the node's pods. Nothing else changes: there is no node lifecycle controller.
   */
  async stopHeartbeat(node: string, how: HeartbeatStop = {}): Promise<void> {
    const status = how.status ?? 'Unknown';
    this.deadNodes.add(node);
    await this.patchReady(node, status);
    if (how.taint) {
      const key = status === 'Unknown' ? 'node.kubernetes.io/unreachable' : 'node.kubernetes.io/not-ready';
      await this.updateTaints(node, (taints) => [
        ...taints.filter((t) => t.key !== key),
        { key, effect: 'NoSchedule', timeAdded: new Date() },
      ]);
    }
  }

  /** The kubelet is back: Ready True, the not-ready taints gone, and its pods are caught up on. */
  async resumeHeartbeat(node: string): Promise<void> {
    await this.patchReady(node, 'True');
    await this.updateTaints(node, (taints) => taints.filter((t) => !NOT_READY_TAINTS.includes(t.key)));
    this.deadNodes.delete(node);
    for (const pod of this.informer?.list() ?? []) {
      if (pod.spec?.nodeName === node) this.kick(pod);
    }
  }

  // ---- the reconcile loop

  private kick(pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    if (!uid || !this.running) return;
    if (this.inFlight.has(uid)) {
      this.dirty.add(uid);
      return;
    }
    const action = this.reconcile(pod)
      .then(
        () => {
          this.retries.delete(uid);
        },
        (err: unknown) => {
          if (isTransient(err)) this.retryLater(pod, err);
          else this.report(`${podName(pod)}: ${describeError(err)}`);
        },
      )
      .finally(() => {
        this.inFlight.delete(uid);
        if (!this.dirty.delete(uid)) return;
        const latest = this.current(pod);
        if (latest) this.kick(latest);
      });
    this.inFlight.set(uid, action);
  }

  /** The informer's copy of this incarnation of the pod, if it is still there. */
  private current(pod: V1Pod): V1Pod | undefined {
    const latest = this.informer?.get(pod.metadata?.name ?? '', pod.metadata?.namespace);
    return latest?.metadata?.uid === pod.metadata?.uid ? latest : undefined;
  }

  private retryLater(pod: V1Pod, err: unknown): void {
    const uid = pod.metadata?.uid ?? '';
    const retry = this.retries.get(uid) ?? { delayMs: RETRY_FIRST_MS };
    this.retries.set(uid, retry);
    this.warnings.push(`${podName(pod)}: ${describeError(err)}; trying again in ${retry.delayMs} ms`);
    clearTimeout(retry.timer);
    retry.timer = setTimeout(() => {
      const latest = this.current(pod);
      if (latest && this.running) this.kick(latest);
      else this.retries.delete(uid);
    }, retry.delayMs);
    retry.timer.unref();
    retry.delayMs = Math.min(retry.delayMs * 2, RETRY_MAX_MS);
  }

  private async reconcile(pod: V1Pod): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    const node = pod.spec?.nodeName;
    if (!node || this.deadNodes.has(node) || !(this.options.manages?.(node) ?? true)) return;
    if (pod.metadata?.deletionTimestamp) {
      if (!this.deleted.has(uid)) await this.finishDeletion(pod);
      return;
    }
    const phase = pod.status?.phase ?? 'Pending';
    if (phase !== 'Pending' || this.started.has(uid) || this.terminal.has(uid)) return;
    const ips = podIPs(pod);
    if (ips === undefined) return; // its CNI would wait for the annotation; so do we (the next update kicks)
    await this.markRunning(pod, node, ips);
  }

  private async finishDeletion(pod: V1Pod): Promise<void> {
    const { name, namespace, uid } = ids(pod);
    try {
      this.interfered('finish-deletion', pod);
      await this.core.deleteNamespacedPod({
        name,
        namespace,
        body: { gracePeriodSeconds: 0, preconditions: { uid } },
      });
      this.deleted.add(uid);
    } catch (err) {
      if (!isGoneOrReplaced(err)) throw err;
    }
  }

  private async markRunning(pod: V1Pod, node: string, ips: readonly string[]): Promise<void> {
    const { name, namespace, uid } = ids(pod);
    const now = rfc3339(new Date());
    const hostIP = await this.hostIP(node);
    const status = {
      phase: 'Running',
      ...(hostIP ? { hostIP } : {}),
      ...(ips.length > 0 ? { podIP: ips[0], podIPs: ips.map((ip) => ({ ip })) } : {}),
      startTime: now,
      conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
        type,
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: now,
      })),
      containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
        name: c.name,
        image: c.image ?? '',
        imageID: `fake://${c.image ?? ''}`,
        containerID: `fake://${uid}/${c.name}`,
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: now } },
      })),
    };
    try {
      this.interfered('start', pod);
      // the UID in the patch makes it fail, rather than touch a newer pod of the same name
      await this.core.patchNamespacedPodStatus(
        { name, namespace, body: { metadata: { uid }, status } },
        MERGE,
      );
      this.started.add(uid);
    } catch (err) {
      if (!isGoneOrReplaced(err)) throw err;
    }
  }

  /** Evict, fail, succeed: ordered after any action under way for the pod, and final. */
  private async finish(
    namespace: string,
    name: string,
    phase: 'Failed' | 'Succeeded',
    reason: string | undefined,
    message: string | undefined,
  ): Promise<void> {
    const what = `${phase}${reason ? `/${reason}` : ''} ${namespace}/${name}`;
    let pod: V1Pod;
    try {
      pod = await this.core.readNamespacedPod({ name, namespace });
    } catch (err) {
      throw new Error(`fake kubelet: cannot mark ${what}: ${describeError(err)}`);
    }
    const uid = pod.metadata?.uid ?? '';
    this.terminal.add(uid);
    await this.inFlight.get(uid);
    const now = rfc3339(new Date());
    const exitCode = phase === 'Succeeded' ? 0 : 137;
    const status = {
      phase,
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'PodCompleted',
          lastProbeTime: null,
          lastTransitionTime: now,
        },
        {
          type: 'ContainersReady',
          status: 'False',
          reason: 'PodCompleted',
          lastProbeTime: null,
          lastTransitionTime: now,
        },
      ],
      containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
        name: c.name,
        image: c.image ?? '',
        imageID: `fake://${c.image ?? ''}`,
        ready: false,
        started: false,
        restartCount: 0,
        state: {
          terminated: {
            exitCode,
            reason: phase === 'Succeeded' ? 'Completed' : (reason ?? 'Error'),
            finishedAt: now,
          },
        },
      })),
    };
    try {
      await this.core.patchNamespacedPodStatus(
        { name, namespace, body: { metadata: { uid }, status } },
        STRATEGIC,
      );
    } catch (err) {
      throw new Error(`fake kubelet: cannot mark ${what}: ${describeError(err)}`);
    }
  }

  // ---- nodes

  private async patchReady(node: string, status: 'True' | 'False' | 'Unknown'): Promise<void> {
    const condition = readyCondition(status, new Date());
    const body = {
      status: {
        conditions: [
          {
            ...condition,
            lastHeartbeatTime: rfc3339(condition.lastHeartbeatTime),
            lastTransitionTime: rfc3339(condition.lastTransitionTime),
          },
        ],
      },
    };
    try {
      // strategic merge: conditions merge by type, so other conditions stay
      await this.core.patchNodeStatus({ name: node, body }, STRATEGIC);
    } catch (err) {
      throw new Error(`fake kubelet: cannot set node ${node} Ready=${status}: ${describeError(err)}`);
    }
  }

  private async updateTaints(node: string, change: (taints: V1Taint[]) => V1Taint[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const current = await this.core.readNode({ name: node });
        const before = current.spec?.taints ?? [];
        const after = change(before);
        if (JSON.stringify(after) === JSON.stringify(before)) return;
        current.spec = { ...current.spec, taints: after };
        await this.core.replaceNode({ name: node, body: current });
        return;
      } catch (err) {
        // 409: someone else wrote the node between our read and write
        if (attempt < 5 && httpCode(err) === 409) continue;
        throw new Error(`fake kubelet: cannot change the taints of node ${node}: ${describeError(err)}`);
      }
    }
  }

  private hostIP(node: string): Promise<string | undefined> {
    let ip = this.hostIPs.get(node);
    if (!ip) {
      ip = this.core
        .readNode({ name: node })
        .then((n) => n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address)
        .catch(() => {
          this.hostIPs.delete(node); // ask again next time
          return undefined;
        });
      this.hostIPs.set(node, ip);
    }
    return ip;
  }

  private interfered(action: PodAction, pod: V1Pod): void {
    const err = this.options.interfere?.(action, `${pod.metadata?.namespace}/${pod.metadata?.name}`);
    if (err) throw err;
  }

  private report(message: string): void {
    this.errors.push(message);
  }
}

/** A failure that can pass: a 5xx or 429, or no answer (refused, reset, timed out: a system error code). */
function isTransient(err: unknown): boolean {
  const code = httpCode(err);
  if (code !== undefined) return code >= 500 || code === 429;
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  return [err, cause].some(
    (e) =>
      typeof (e as { code?: unknown } | undefined)?.code === 'string' ||
      (e as Error | undefined)?.name === 'FetchError',
  );
}

/**
 * The pod's addresses from the galaxy annotation, without prefix lengths. [] for a pod that needs
 * none; undefined for one that requests the ENI IP resource but has no address yet.
 */
export function podIPs(pod: V1Pod): string[] | undefined {
  const raw = pod.metadata?.annotations?.[CNI_ARGS_ANNOTATION];
  let ips: string[] = [];
  if (raw) {
    try {
      const args = JSON.parse(raw) as { common?: { ipinfos?: { ip?: unknown }[] } };
      ips = (args.common?.ipinfos ?? [])
        .map((info) => (typeof info.ip === 'string' ? (info.ip.split('/')[0] ?? '') : ''))
        .filter((ip) => ip !== '');
    } catch {
      ips = [];
    }
  }
  if (ips.length === 0 && requestsEniIP(pod)) return undefined;
  return ips;
}

function requestsEniIP(pod: V1Pod): boolean {
  return (pod.spec?.containers ?? []).some(
    (c) => c.resources?.limits?.[ENI_IP] !== undefined || c.resources?.requests?.[ENI_IP] !== undefined,
  );
}

function ids(pod: V1Pod): { name: string; namespace: string; uid: string } {
  return {
    name: pod.metadata?.name ?? '',
    namespace: pod.metadata?.namespace ?? 'default',
    uid: pod.metadata?.uid ?? '',
  };
}

function podName(pod: V1Pod): string {
  return `pod ${pod.metadata?.namespace}/${pod.metadata?.name}`;
}

/** RFC 3339 to the second, as Kubernetes writes its timestamps. */
export function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
