// Plumbing shared by the integration tests (which run floatip's pieces against the embedded API server).
import { Writable } from 'node:stream';
import { pino } from 'pino';
import {
  FLOATINGIP_CRD,
  POOL_CRD,
  type EmbeddedApiServer,
  type KubeObject,
} from '../../src/apiserver/index.js';
import type { Logger } from '../../src/log.js';
import { kubectlAvailable, kubectlFor } from '../apiserver/helpers.js';

import type { ExtenderVerbs } from '../../src/extender/http.js';
export { waitFor } from '../apiserver/helpers.js';

/** Runs kubectl against the server; fails the test on a non-zero exit. Where kubectl is absent it says so and throws. */
export async function kubectl(server: EmbeddedApiServer, args: string[], manifest?: string): Promise<string> {
  if (!kubectlAvailable()) throw new Error('kubectl is not installed: this case needs it');
  const k = await kubectlFor(server);
  try {
    const result =
      manifest !== undefined ? await k.apply(manifest, args[0] as 'create' | 'apply') : await k.run(args);
    if (result.code !== 0)
      throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
    return result.stdout;
  } finally {
    await k.cleanup();
  }
}

/** Polls an async check until it holds (or fails the test after `timeoutMs`). */
export async function eventually(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 5000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A logger whose lines the test reads, parsed, in `lines`. */
export function capturedLog(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    }),
  );
  return { log, lines };
}

/** Extender verbs whose filter passes every node it is given, asking nobody: the HTTP face alone. */
export const passingFilter = {
  filter: (_pod: unknown, _nodes: unknown, nodeNames: string[]) => ({
    nodeNames,
    failedNodes: {},
    error: '',
  }),
} as unknown as ExtenderVerbs;

/**
 * One of galaxy's CRDs as its example manifest installs it: apiextensions v1beta1 without
 * validation, which kube-apiserver serves as a schema that lets any field hold anything. On such a
 * cluster kubectl stores what floatip's CRDs refuse (a Pool of size 1.5, a FloatingIP of policy 3),
 * so the tests of floatip reading such objects install these; floatip leaves an existing CRD alone.
 */
export function schemalessCrd(crd: Readonly<KubeObject>): KubeObject {
  const copy = structuredClone(crd) as KubeObject & { spec: { versions: KubeObject[] } };
  for (const version of copy.spec.versions)
    version.schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
  return copy;
}

/** Both of galaxy's schema-less CRDs, on a server that has none yet. */
export function installSchemalessCrds(server: EmbeddedApiServer): void {
  server.createObjects([FLOATINGIP_CRD, POOL_CRD].map(schemalessCrd));
}

/** Replaces floatip's CRD of that name (created by ensureCrds) by galaxy's schema-less one. */
export async function useSchemalessCrd(server: EmbeddedApiServer, crd: Readonly<KubeObject>): Promise<void> {
  const name = crd.metadata?.name ?? '';
  const res = await fetch(`${server.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`, {
    method: 'DELETE',
  });
  if (!res.ok) throw new Error(`deleting CRD ${name} answered ${res.status}: ${await res.text()}`);
  server.createObjects([schemalessCrd(crd)]);
}
