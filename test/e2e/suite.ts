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
    { timeoutMs: 90_000, intervalMs: 250, describe: () => remainingPods(core, namespace, kubelet) },
  );
  await kubelet?.stop();
}

/** What holds a namespace's deletion up, for a timeout's message: its pods and the kubelet's word. */
async function remainingPods(
  core: CoreV1Api,
  namespace: string,
  kubelet: FakeKubelet | undefined,
): Promise<string> {
  const pods = (await core.listNamespacedPod({ namespace })).items;
  const shown = pods.slice(0, 8).map((p) => {
    const m = p.metadata;
    const finalizers = m?.finalizers?.length ? ` finalizers ${m.finalizers.join(',')}` : '';
    return `${m?.name}@${p.spec?.nodeName ?? '-'} ${p.status?.phase ?? '?'}${m?.deletionTimestamp ? ' terminating' : ''}${finalizers}`;
  });
  const said = [...(kubelet?.errors ?? []), ...(kubelet?.warnings ?? [])].slice(-5);
  return `${pods.length} pods left: ${shown.join('; ')}; fake kubelet's last words: ${said.join(' | ') || 'none'}`;
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

/** A line on the test run's output, for figures worth reporting (rollout times, failover times). */
export function note(text: string): void {
  process.stderr.write(`e2e: ${text}\n`);
}
