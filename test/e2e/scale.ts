// Scheduling throughput on the real control plane, for bench:e2e: create N Deployments of R
// replicas at once and time until every pod is bound. The clock covers the whole path a user waits
// for: Deployment and ReplicaSet controllers, the scheduler, the extender's filter/prioritize/bind.
import { AppsV1Api, CoreV1Api, makeInformer, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { clusterKubeConfig } from './cluster.js';
import { CNI_ARGS_ANNOTATION } from './fake-kubelet.js';
import { runInformer } from './informers.js';
import { describeError } from './kube-errors.js';
import { waitFor } from './wait.js';
import { createDeployment, deployment } from './workloads.js';

export const SCALE_RUN_LABEL = 'floatip-e2e/scale-run';

export interface ScaleOptions {
  /** Must exist. */
  readonly namespace: string;
  readonly deployments: number;
  readonly replicas: number;
  /** Bounded wait from the first create; default 5 minutes. */
  readonly timeoutMs?: number;
  /** Names the run's Deployments (`<run>-<i>`) and labels its pods; default a fresh `scale-<time>`. */
  readonly run?: string;
  /**
   * A pod counts as bound once spec.nodeName is set and, when true (default), it carries the
   * `k8s.v1.cni.galaxy.io/args` annotation. false for a scheduler without extender (baseline).
   */
  readonly requireAnnotation?: boolean;
  /** Container limits; default one ENI IP. */
  readonly limits?: Readonly<Record<string, string>>;
  readonly kubeConfig?: KubeConfig;
}

export interface ScaleResult {
  readonly run: string;
  readonly pods: number;
  /** From the first create request until the last Deployment was accepted. */
  readonly createMs: number;
  /** From the first create request until every pod was seen bound. */
  readonly totalMs: number;
  readonly podsPerSecond: number;
  /** Per pod, from when the watch first saw it until it was seen bound. */
  readonly latencyMs: {
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
    readonly max: number;
  };
}

/** Runs one measurement; the pods stay (deleteScaleRun removes them). */
export async function measureBinding(options: ScaleOptions): Promise<ScaleResult> {
  const kc = options.kubeConfig ?? clusterKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const { namespace, deployments, replicas } = options;
  const run = options.run ?? `scale-${Date.now().toString(36)}`;
  const expected = deployments * replicas;
  const timeoutMs = options.timeoutMs ?? 300_000;
  const requireAnnotation = options.requireAnnotation ?? true;
  const selector = `${SCALE_RUN_LABEL}=${run}`;

  const firstSeen = new Map<string, number>();
  const boundAt = new Map<string, number>();
  let done: () => void = () => undefined;
  const allBound = new Promise<void>((resolve) => (done = resolve));
  const observe = (pod: V1Pod) => {
    const uid = pod.metadata?.uid;
    if (!uid) return;
    const now = performance.now();
    if (!firstSeen.has(uid)) firstSeen.set(uid, now);
    if (boundAt.has(uid) || !pod.spec?.nodeName) return;
    if (requireAnnotation && pod.metadata?.annotations?.[CNI_ARGS_ANNOTATION] === undefined) return;
    boundAt.set(uid, now);
    if (boundAt.size >= expected) done();
  };
  const informer = makeInformer<V1Pod>(
    kc,
    `/api/v1/namespaces/${namespace}/pods`,
    () => core.listNamespacedPod({ namespace, labelSelector: selector }),
    selector,
  );
  informer.on('add', observe);
  informer.on('update', observe);
  const watchFailures: string[] = [];
  const watch = await runInformer(informer, (message) => watchFailures.push(message));

  let timer: NodeJS.Timeout | undefined;
  try {
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: deployments }, (_, i) =>
        createDeployment(
          deployment(namespace, `${run}-${i}`, {
            replicas,
            labels: { [SCALE_RUN_LABEL]: run },
            ...(options.limits ? { limits: options.limits } : {}),
          }),
          kc,
        ),
      ),
    );
    const createMs = performance.now() - t0;
    const timedOut = new Promise<'timeout'>(
      (resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)),
    );
    if (expected > 0 && (await Promise.race([allBound.then(() => 'ok' as const), timedOut])) === 'timeout') {
      const why = watchFailures.length > 0 ? `; pod watch: ${watchFailures.join('; ')}` : '';
      throw new Error(
        `scale run ${run} in ${namespace}: ${boundAt.size} of ${expected} pods bound ` +
          `(${firstSeen.size} created) after ${timeoutMs} ms${why}`,
      );
    }
    let last = expected > 0 ? t0 : performance.now();
    for (const at of boundAt.values()) last = Math.max(last, at);
    const totalMs = last - t0;
    const latencies = [...boundAt].map(([uid, at]) => at - (firstSeen.get(uid) ?? at)).sort((a, b) => a - b);
    return {
      run,
      pods: expected,
      createMs: round(createMs),
      totalMs: round(totalMs),
      podsPerSecond: round(expected / (totalMs / 1000)),
      latencyMs: {
        p50: round(percentile(latencies, 0.5)),
        p90: round(percentile(latencies, 0.9)),
        p99: round(percentile(latencies, 0.99)),
        max: round(latencies.at(-1) ?? 0),
      },
    };
  } finally {
    clearTimeout(timer);
    await watch.stop();
  }
}

/**
 * Deletes a run's Deployments, waits for the garbage collector to remove their ReplicaSets (so
 * nothing re-creates pods), then deletes the pods with grace period 0, so no kubelet is needed.
 */
export async function deleteScaleRun(namespace: string, run: string, kubeConfig?: KubeConfig): Promise<void> {
  const kc = kubeConfig ?? clusterKubeConfig();
  const apps = kc.makeApiClient(AppsV1Api);
  const labelSelector = `${SCALE_RUN_LABEL}=${run}`;
  const step = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      throw new Error(`deleting scale run ${run} in ${namespace}: ${what}: ${describeError(err)}`);
    }
  };
  await step('deployments', () =>
    apps.deleteCollectionNamespacedDeployment({ namespace, labelSelector, propagationPolicy: 'Background' }),
  );
  // ReplicaSets carry the pod template's labels, the run label included
  await waitFor(
    `the ReplicaSets of scale run ${run} to be garbage-collected`,
    async () =>
      (await apps.listNamespacedReplicaSet({ namespace, labelSelector })).items.length === 0
        ? true
        : undefined,
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  await step('pods', () =>
    kc
      .makeApiClient(CoreV1Api)
      .deleteCollectionNamespacedPod({ namespace, labelSelector, gracePeriodSeconds: 0 }),
  );
}

function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
