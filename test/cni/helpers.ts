// The pods the floatip-cni tests configure, as floatip's bind leaves them in the API server.
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
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
import { ip } from './netns.js';
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

/**
 * The network most tests configure: `underlay`, floatip-cni delegating to macvlan on `master`, its
 * state in `dir`, a short wait for the annotation; `extra` overrides or adds fields.
 */
export const underlay = (
  dir: string,
  master: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  cniVersion: '1.0.0',
  name: 'underlay',
  type: 'floatip-cni',
  stateDir: dir,
  annotationTimeoutSeconds: 0.3,
  delegate: { type: 'macvlan', master, mode: 'bridge' },
  ...extra,
});

/** The attachments of `underlay` that have state in `dir`, as their file names, sorted. */
export const statesIn = (dir: string): string[] =>
  existsSync(`${dir}/underlay`) ? readdirSync(`${dir}/underlay`).sort() : [];

/** The interfaces of network namespace `pod` but lo, by name. */
export const linksIn = async (pod: string): Promise<string[]> =>
  (await ip('-n', pod, '-o', 'link'))
    .split('\n')
    .filter((l) => l !== '' && !/^\d+: lo:/.test(l))
    .map((l) => l.split(':')[1]!.trim().split('@')[0]!);

/** ipinfos handed over in CNI_ARGS, as galaxy's daemon passes them. */
export const handedOver = (...infos: unknown[]): Record<string, string> => ({
  ipinfos: JSON.stringify(infos),
});

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
