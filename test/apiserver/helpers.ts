// Shared test plumbing: a server per test file, Status extraction from client-node errors, polling, kubectl.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiException } from '@kubernetes/client-node';
import { startApiServer, type ApiServerOptions, type EmbeddedApiServer } from '../../src/apiserver/index.js';

export async function withServer(opts: ApiServerOptions = {}): Promise<EmbeddedApiServer> {
  return startApiServer({ port: 0, log: () => undefined, ...opts });
}

export interface StatusLike {
  kind?: string;
  code?: number;
  reason?: string;
  message?: string;
  details?: Record<string, unknown>;
}

/** The HTTP code and the parsed Status body of a failed client-node call. */
export async function failure(call: Promise<unknown>): Promise<{ code: number; status: StatusLike }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof ApiException) {
      const body: unknown = err.body;
      const status = (typeof body === 'string' ? JSON.parse(body) : body) as StatusLike;
      return { code: err.code, status };
    }
    throw err;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

export async function waitFor(what: string, check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Plain HTTP against the server, for what client-node cannot express. */
export async function http(
  server: EmbeddedApiServer,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; json: Record<string, unknown>; text: string }> {
  const init: RequestInit = { method, headers: { 'Content-Type': contentType } };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
  const res = await fetch(server.url + path, init);
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON (a watch stream, or plain text)
  }
  return { status: res.status, json, text };
}

export const KUBECTL = '/usr/bin/kubectl';

/** Where kubectl is missing the kubectl cases log why and pass without running (never a silent skip). */
export function kubectlAvailable(): boolean {
  if (existsSync(KUBECTL)) return true;
  console.log(`kubectl cases not run: ${KUBECTL} is not installed on this machine`);
  return false;
}

export interface Kubectl {
  run(
    args: string[],
    env?: Record<string, string>,
  ): Promise<{ code: number; stdout: string; stderr: string }>;
  apply(
    manifest: string,
    verb?: 'create' | 'apply',
  ): Promise<{ code: number; stdout: string; stderr: string }>;
  cleanup(): Promise<void>;
}

/** kubectl with an empty kubeconfig and private caches (discovery, OpenAPI), so runs do not leak into each other. */
export async function kubectlFor(server: EmbeddedApiServer): Promise<Kubectl> {
  const dir = await mkdtemp(join(tmpdir(), 'floatip-kubectl-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, '');
  let n = 0;
  const run = (
    args: string[],
    env: Record<string, string> = {},
  ): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(
        KUBECTL,
        ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), '--server', server.url, ...args],
        { timeout: 20_000, env: { ...process.env, KUBECONFIG: kubeconfig, HOME: dir, ...env } },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  return {
    run,
    async apply(manifest, verb = 'apply') {
      const file = join(dir, `manifest-${n++}.json`);
      await writeFile(file, manifest);
      // kubectl's defaults: --validate=strict, which the server's OpenAPI and fieldValidation serve
      return run([verb, '-f', file]);
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
