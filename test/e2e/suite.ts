// What every floatip scenario file does around its scenarios: the suite's floatip configuration, a
// clean slate of FloatingIP objects, its nodes, a fake kubelet, floatip started as the real binary;
// and afterwards everything removed again (pods through their graceful deletion, while floatip
// still runs to see them go).
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { clusterKubeConfig } from './cluster.js';
import { FakeKubelet } from './fake-kubelet.js';
import { FloatipProcess, stopAllFloatips, type FloatipOptions } from './floatip.js';
import { createGroupNodes, deleteGroupNodes, SUITE_CONFIG, type Group } from './groups.js';
import { deleteAllFloatingIPs, writeFloatipConfig } from './ipam-state.js';
import { waitFor } from './wait.js';
import { deleteNamespace, ensureNamespace } from './workloads.js';

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** Before a file's scenarios: config, no FloatingIP objects, its nodes. Call with no floatip running. */
export async function prepareFile(groups: readonly Group[]): Promise<void> {
  await stopAllFloatips();
  await writeFloatipConfig(SUITE_CONFIG);
  await deleteAllFloatingIPs();
  await createGroupNodes(groups);
}

/** After a file: floatip stopped, objects and nodes gone. */
export async function cleanUpFile(groups: readonly Group[]): Promise<void> {
  await stopAllFloatips();
  await deleteGroupNodes(groups);
  await deleteAllFloatingIPs();
}

/** A namespace with a fake kubelet for it. */
export async function startNamespace(namespace: string): Promise<FakeKubelet> {
  await ensureNamespace(namespace);
  const kubelet = new FakeKubelet({ namespace });
  await kubelet.start();
  return kubelet;
}

/**
 * Deletes the namespace and waits until its pods are gone (the kubelet finishes their graceful
 * deletions), then stops the kubelet. floatip should still run, to release their addresses.
 */
export async function endNamespace(namespace: string, kubelet: FakeKubelet | undefined): Promise<void> {
  const core = clusterKubeConfig().makeApiClient(CoreV1Api);
  await deleteNamespace(namespace);
  await waitFor(
    `namespace ${namespace} to be gone`,
    async () => {
      try {
        await core.readNamespace({ name: namespace });
        return undefined;
      } catch {
        return true;
      }
    },
    { timeoutMs: 90_000, intervalMs: 250 },
  );
  await kubelet?.stop();
}

/** Starts floatip on the suite's extender port and waits for /readyz. */
export async function startFloatip(options: FloatipOptions = {}): Promise<FloatipProcess> {
  const floatip = await FloatipProcess.start(options);
  await floatip.ready();
  return floatip;
}

/** Cordons (or uncordons) a node, as `kubectl cordon` does. */
export async function cordon(node: string, unschedulable = true): Promise<void> {
  await clusterKubeConfig()
    .makeApiClient(CoreV1Api)
    .patchNode({ name: node, body: { spec: { unschedulable } } }, MERGE);
}

let nudges = 0;

/**
 * A cluster event that makes kube-scheduler v1.20 retry every pod it set aside: a node label change
 * (MoveAllToActiveOrBackoffQueue). A pod whose extender call failed (floatip down, or no leader yet)
 * waits in the unschedulable queue until such an event, or 60-90 s (podMaxUnschedulableQDuration 60 s,
 * flushed every 30 s); scenarios that kill floatip trigger one rather than wait.
 */
export async function nudgeScheduler(node: string): Promise<void> {
  await clusterKubeConfig()
    .makeApiClient(CoreV1Api)
    .patchNode(
      { name: node, body: { metadata: { labels: { 'floatip-e2e/nudge': String(++nudges) } } } },
      MERGE,
    );
}

/**
 * Runs `work` while nudging the scheduler every `everyMs` (see nudgeScheduler): for waits where a pod
 * was refused because floatip had not yet seen another pod go (a rollout step, a pool at its size),
 * which kube-scheduler v1.20 would otherwise retry only after 60-90 s. Returns the result and how
 * many nudges it took. A real deadlock still never resolves: the refusal would repeat.
 */
export async function whileNudging<T>(
  node: string,
  work: () => Promise<T>,
  everyMs = 5000,
): Promise<{ result: T; nudges: number }> {
  let count = 0;
  const timer = setInterval(() => {
    count++;
    void nudgeScheduler(node).catch(() => undefined);
  }, everyMs);
  try {
    return { result: await work(), nudges: count };
  } finally {
    clearInterval(timer);
  }
}

/** A line on the test run's output, for figures worth reporting (rollout times, failover times). */
export function note(text: string): void {
  process.stderr.write(`e2e: ${text}\n`);
}
