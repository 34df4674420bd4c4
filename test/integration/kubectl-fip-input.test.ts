// kubectl fip as a stranger types it, against the embedded API server (plain HTTP, as a kubeconfig
// kubectl accepts names it): names that would steer a request elsewhere, selectors that conflict,
// and a reader that closes the pipe early are usage errors or a quiet end, never a stack trace.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type EmbeddedApiServer, startApiServer } from '../../src/apiserver/index.js';
import { ensureCrds } from '../../src/kube/crds.js';
import { runFip } from '../../src/fip/program.js';

let server: EmbeddedApiServer;
let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  server = await startApiServer({ port: 0, log: () => undefined });
  await ensureCrds(server.kubeConfig());
  dir = mkdtempSync(join(tmpdir(), 'floatip-fip-'));
  kubeconfig = join(dir, 'config');
  // as a user writes it for a plain-HTTP server: no insecure-skip-tls-verify (kubectl needs none)
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
  await promisify(execFile)('npx', ['tsc', '-p', 'tsconfig.build.json']);
}, 120_000);

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function fip(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runFip(['--kubeconfig', kubeconfig, ...args], {
    out: (t) => (out += t),
    err: (t) => (err += t),
  });
  return { code, out, err };
}

test('a kubeconfig naming an http:// server is used as kubectl uses it', async () => {
  const { code, err } = await fip('ls');
  expect([code, err]).toEqual([0, '']);
});

test.each([
  [['-n', '..', 'ls'], '-n "..": not a Kubernetes name'],
  [['--pool-namespace', 'a/b', 'ls'], '--pool-namespace "a/b": not a Kubernetes name'],
  [['--config-map', 'kube-system/../kube-system/floatingip-config', 'check'], 'expected <namespace>/<name>'],
  [['--config-map', 'a/b/c', 'check'], '--config-map "a/b/c": expected <namespace>/<name>'],
  [['--config-map', 'kube-system/..', 'check'], '--config-map "kube-system/..": expected <namespace>/<name>'],
  [['release', '--pod', 'web1', '--app', 'x'], 'name addresses, --pod or --app: one of them'],
  [['release', '10.0.0.1', '--pod', 'web1'], 'name addresses, --pod or --app: one of them'],
  [['release', '--pod', '..'], '--pod "..": not a Kubernetes name'],
])('%j is a usage error (exit 2) naming what is wrong', async (args, message) => {
  const { code, out, err } = await fip(...args);
  expect([code, out]).toEqual([2, '']);
  expect(err).toContain(message);
  expect(err.split('\n').filter(Boolean)).toHaveLength(1);
});

test('a reader that closes the pipe early ends the output quietly, without a stack trace', async () => {
  const script = `node dist/src/fip/main.js --kubeconfig '${kubeconfig}' ls -o yaml | head -c 1 >/dev/null; node dist/src/fip/main.js --kubeconfig '${kubeconfig}' --help | head -c 1 >/dev/null`;
  const { stderr } = await promisify(execFile)('bash', ['-o', 'pipefail', '-c', script]).catch(
    (e: { stderr: string }) => e,
  );
  expect(stderr).toBe('');
});

test('release where the API server has no service proxy (the embedded one of npm start) says the API server refused, not floatip', async () => {
  const res = await fetch(`${server.url}/apis/galaxy.k8s.io/v1alpha1/floatingips`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      apiVersion: 'galaxy.k8s.io/v1alpha1',
      kind: 'FloatingIP',
      metadata: { name: '10.0.100.10' },
      spec: { key: 'NULL_default_NULL_gone', attribute: '', policy: 0, updateTime: '2026-01-01T00:00:00Z' },
    }),
  });
  expect(res.status).toBe(201);
  const { code, err } = await fip('release', '10.0.100.10');
  expect(code).toBe(2);
  expect(err).toMatch(
    /^kubectl fip: the API server answered 405 to POST \/api\/v1\/namespaces\/kube-system\/services\/floatip:api-port\/proxy\/v1\/ip, before floatip: /,
  );
  expect(err).toContain('service proxy');
});
