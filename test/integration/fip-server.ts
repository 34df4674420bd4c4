// What kubectl fip's tests run against, shared by its input tests (kubectl-fip-input.test.ts) and
// its property (test/property/fip.property.test.ts): the embedded API server with floatip's CRDs,
// and a kubeconfig naming it as a user writes one for a plain-HTTP server (no
// insecure-skip-tls-verify: kubectl needs none).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EmbeddedApiServer, startApiServer } from '../../src/apiserver/index.js';
import { ensureCrds } from '../../src/kube/crds.js';
import { runFip } from '../../src/fip/program.js';

export interface FipServer {
  readonly server: EmbeddedApiServer;
  /** A directory of the test's own, removed by close(). */
  readonly dir: string;
  /** The kubeconfig file naming the server. */
  readonly kubeconfig: string;
  close(): Promise<void>;
}

export async function startFipServer(): Promise<FipServer> {
  const server = await startApiServer({ port: 0, log: () => undefined });
  await ensureCrds(server.kubeConfig());
  const dir = mkdtempSync(join(tmpdir(), 'floatip-fip-'));
  const kubeconfig = join(dir, 'config');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{ name: c, cluster: { server: "${server.url}" } }]`,
      'users: [{ name: u, user: {} }]',
      'contexts: [{ name: x, context: { cluster: c, user: u } }]',
      'current-context: x',
    ].join('\n'),
  );
  return {
    server,
    dir,
    kubeconfig,
    close: async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface FipRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** `kubectl fip --kubeconfig <kubeconfig> <args>`, in this process: its exit code and what it wrote. */
export async function runFipWith(kubeconfig: string, args: readonly string[]): Promise<FipRun> {
  let out = '';
  let err = '';
  const code = await runFip(['--kubeconfig', kubeconfig, ...args], {
    out: (t) => (out += t),
    err: (t) => (err += t),
  });
  return { code, out, err };
}
