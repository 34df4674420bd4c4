// The pods the floatip-cni tests configure, as floatip's bind leaves them in the API server.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DEMO_NAMESPACES,
  type EmbeddedApiServer,
  FLOATINGIP_CRD,
  startApiServer,
} from '../../src/apiserver/index.js';
import { CNI_ARGS_ANNOTATION } from '../../src/cni/args.js';
import { recordHolders, writeKubeconfig } from '../../bench/cni-fixtures.js';
import { CNI_BIN } from './setup.js';

export const startPodSource = (): Promise<EmbeddedApiServer> =>
  startApiServer({ port: 0, seed: [...DEMO_NAMESPACES, FLOATINGIP_CRD], log: () => undefined });

export { createPod } from '../../bench/cni-fixtures.js';

/** The annotation written as bind writes it: the addresses' FloatingIP objects first, then the pod's annotation. */
export async function annotate(server: EmbeddedApiServer, name: string, annotation: unknown): Promise<void> {
  const url = `${server.url}/api/v1/namespaces/default/pods/${name}`;
  const pod = (await (await fetch(url)).json()) as { metadata: { uid: string } };
  recordHolders(server, name, pod.metadata.uid, annotation);
  const res = await fetch(url, {
    method: 'PATCH',
    headers: { 'Content-Type': 'application/merge-patch+json' },
    body: JSON.stringify({
      metadata: { annotations: { [CNI_ARGS_ANNOTATION]: JSON.stringify(annotation) } },
    }),
  });
  if (res.status !== 200) throw new Error(`annotating pod ${name}: ${res.status} ${await res.text()}`);
}

/** A kubeconfig file for `server` (a URL as the plugin will see it), with a token. */
export const kubeconfigFor = (server: string): string => writeKubeconfig(server);

export const stateDir = (): string => mkdtempSync(join(tmpdir(), 'floatip-cni-state-'));

/** The CNI_* variables kubelet sets for a pod sandbox. */
export function cniEnv(
  command: string,
  containerId: string,
  netns: string,
  cniArgs: Record<string, string> = {},
  ifname = 'eth0',
): Record<string, string> {
  return {
    CNI_COMMAND: command,
    CNI_CONTAINERID: containerId,
    CNI_NETNS: netns === '' ? '' : `/var/run/netns/${netns}`,
    CNI_IFNAME: ifname,
    CNI_PATH: CNI_BIN,
    CNI_ARGS: ['IgnoreUnknown=1', ...Object.entries(cniArgs).map(([k, v]) => `${k}=${v}`)].join(';'),
  };
}

export const podArgs = (name: string, uid: string): Record<string, string> => ({
  K8S_POD_NAMESPACE: 'default',
  K8S_POD_NAME: name,
  K8S_POD_INFRA_CONTAINER_ID: `sandbox-${name}`,
  K8S_POD_UID: uid,
});
