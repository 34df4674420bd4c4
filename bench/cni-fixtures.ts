// What floatip-cni is run against, shared by its benchmark and its tests: a pod as floatip's bind
// leaves it in the API server, and a node's kubeconfig file.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EmbeddedApiServer, KubeObject } from '../src/apiserver/index.js';
import { CNI_ARGS_ANNOTATION } from '../src/cni/args.js';

/** A pod in `default`, with the annotation when given (a string as is, else as JSON); returns its UID. */
export function createPod(server: EmbeddedApiServer, name: string, annotation?: unknown): string {
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
  return pod!.metadata!.uid!;
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
