// What floatip-cni is run against, shared by its benchmark and its tests: a pod as floatip's bind
// leaves it in the API server, and a node's kubeconfig file.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EmbeddedApiServer, KubeObject } from '../src/apiserver/index.js';
import { CNI_ARGS_ANNOTATION } from '../src/cni/args.js';
import { AllocationKey, canonicalAddress } from '../src/ipam/index.js';
import { toFloatingIPObject } from '../src/store/floating-ip-object.js';

/**
 * A pod in `default`, with the annotation when given (a string as is, else as JSON); returns its UID.
 * As floatip's bind leaves it: each address of the annotation's ipinfos has its FloatingIP object,
 * held by the pod's key and UID, unless `holders` is false (a pod whose creator wrote the annotation).
 */
export function createPod(
  server: EmbeddedApiServer,
  name: string,
  annotation?: unknown,
  { holders = true }: { holders?: boolean } = {},
): string {
  const annotations =
    annotation === undefined
      ? undefined
      : { [CNI_ARGS_ANNOTATION]: typeof annotation === 'string' ? annotation : JSON.stringify(annotation) };
  const [pod] = server.createObjects([
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', ...(annotations ? { annotations } : {}) },
      spec: { containers: [{ name: 'app', image: 'app' }] },
    } as KubeObject,
  ]);
  const uid = pod!.metadata!.uid!;
  if (holders) recordHolders(server, name, uid, annotation);
  return uid;
}

/** The FloatingIP objects bind writes for the ipinfos of `annotation` (any it does not parse: none). */
export function recordHolders(
  server: EmbeddedApiServer,
  name: string,
  uid: string,
  annotation: unknown,
): void {
  let ipinfos: unknown;
  try {
    const parsed = (typeof annotation === 'string' ? JSON.parse(annotation) : annotation) as {
      common?: { ipinfos?: unknown };
    };
    ipinfos = parsed?.common?.ipinfos;
  } catch {
    return;
  }
  if (!Array.isArray(ipinfos)) return;
  const key = AllocationKey.forPod({ namespace: 'default', name, ownerReferences: [], pool: '' }).text;
  const objects = ipinfos
    .map((info: { ip?: unknown }) => (typeof info?.ip === 'string' ? info.ip.split('/')[0]! : ''))
    .filter((ip) => {
      try {
        return canonicalAddress(ip) !== '';
      } catch {
        return false;
      }
    })
    .map(
      (ip) =>
        toFloatingIPObject({
          ip: canonicalAddress(ip),
          key,
          policy: 0,
          nodeName: 'node-1',
          podUid: uid,
          updateTime: Date.now(),
          reserved: false,
        }) as unknown as KubeObject,
    );
  if (objects.length > 0) server.createObjects(objects);
}

/**
 * A kubeconfig file in a new directory (relative paths in it are read from there), for `server`
 * with the given cluster and user fields (flow-style YAML values).
 */
export function writeKubeconfig(
  server: string,
  user: Record<string, string> = { token: 'node-token' },
  cluster: Record<string, string | boolean> = {},
  files: Record<string, string | Buffer> = {},
): string {
  const dir = mkdtempSync(join(tmpdir(), 'floatip-cni-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  const fields = (o: Record<string, string | boolean>) =>
    Object.entries(o)
      .map(([k, v]) => `, ${k}: ${JSON.stringify(v)}`)
      .join('');
  const file = join(dir, 'kubeconfig');
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'current-context: node',
      'contexts: [{name: node, context: {cluster: c, user: floatip-cni}}]',
      `clusters: [{name: c, cluster: {server: ${JSON.stringify(server)}${fields(cluster)}}}]`,
      `users: [{name: floatip-cni, user: {${fields(user).slice(2)}}}]`,
      '',
    ].join('\n'),
  );
  return file;
}
