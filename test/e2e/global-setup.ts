// jest globalSetup for the e2e suite: build the control plane of FLOATIP_E2E_KUBE (v1.20 or current)
// on first use (v1.20.2 about 6 minutes on 2 cores, current about 15; afterwards well under a second) and floatip (`npm run build`: the scenarios run the real
// binary, dist/src/main.js), clear what an interrupted run left behind, and start a fresh cluster. Self-contained on purpose: jest loads this file outside its module system, where
// relative TypeScript imports do not resolve.
import { execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const E2E_SH = fileURLToPath(new URL('./kube/e2e.sh', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Our environment without up.sh's scheduler knobs: a developer's own EXTENDER_URL or
 * NODE_CACHE_CAPABLE must not reshape the suite's cluster (cluster.ts strips the same).
 */
export function suiteEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (
      /^(EXTENDER_|MANAGED_RESOURCE|NODE_CACHE_CAPABLE$|SCHED_CONFIG$|SCHED_SHIPPED$|SCHED_PERCENTAGE_OF_NODES_TO_SCORE$|SCHED_V$|K8S_SCHEDULER$|ETCD_DATA$)/.test(
        key,
      )
    ) {
      delete env[key];
    }
  }
  return env;
}

/** Runs `kube/e2e.sh <command>` with its progress on our stderr; resolves with its stdout. */
export function e2eScript(command: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(E2E_SH, [command], { env: suiteEnv(), stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${E2E_SH} ${command}: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else {
        const why = signal ? `killed by ${signal} after ${timeoutMs} ms` : `exit code ${code}`;
        reject(new Error(`${E2E_SH} ${command}: ${why}`));
      }
    });
  });
}

/** `npm run build` (tsc, a few seconds): the scenarios start floatip from dist/. */
export function buildFloatip(timeoutMs = 5 * 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const child = spawn(npm, ['run', 'build', '--silent'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`npm run build: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`npm run build: ${signal ?? `exit code ${code}`}\n${output.trimEnd()}`));
    });
  });
}

type Kubectl = (...args: string[]) => Promise<string>;

/** v1.20's token controller writes the ServiceAccount's token Secret a moment after it exists. */
async function secretToken(run: Kubectl): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const secret = await run(
      '-n',
      'kube-system',
      'get',
      'sa',
      'floatip',
      '-o',
      'jsonpath={.secrets[0].name}',
    );
    if (secret) {
      const data = await run('-n', 'kube-system', 'get', 'secret', secret, '-o', 'jsonpath={.data.token}');
      const token = Buffer.from(data, 'base64').toString();
      if (token) return token;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('no token Secret for ServiceAccount kube-system/floatip after 20 s');
}

/** Since v1.24 no token Secret is made: a token from the TokenRequest API, as a pod would get. */
async function requestedToken(run: Kubectl): Promise<string> {
  const token = (await run('-n', 'kube-system', 'create', 'token', 'floatip', '--duration=24h')).trim();
  if (!token) throw new Error('kubectl create token floatip -n kube-system printed no token');
  return token;
}

/**
 * The shipped RBAC (manifests/base/rbac.yaml) applied, and a kubeconfig that is floatip's
 * ServiceAccount (its token), next to the admin one: every floatip the suite starts runs with exactly
 * the permissions the manifests give it, so a missing one fails a scenario (floatip.ts uses it).
 */
export async function serviceAccountKubeconfig(adminKubeconfig: string): Promise<string> {
  const kubectl = (
    JSON.parse(readFileSync(join(dirname(adminKubeconfig), 'cluster.json'), 'utf8')) as {
      KUBECTL: string;
    }
  ).KUBECTL;
  const run = async (...args: string[]) =>
    (await promisify(execFile)(kubectl, ['--kubeconfig', adminKubeconfig, ...args], { cwd: REPO_ROOT }))
      .stdout;
  await run('apply', '-f', 'manifests/base/rbac.yaml');
  const token =
    process.env.FLOATIP_E2E_KUBE === 'current' ? await requestedToken(run) : await secretToken(run);
  const file = join(dirname(adminKubeconfig), 'floatip-sa.kubeconfig');
  const admin = JSON.parse(await run('config', 'view', '--raw', '--minify', '-o', 'json')) as {
    clusters: {
      cluster: { server: string; 'certificate-authority'?: string; 'certificate-authority-data'?: string };
    }[];
  };
  const cluster = admin.clusters[0]!.cluster;
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'e2e', cluster }],
    users: [{ name: 'floatip', user: { token } }],
    contexts: [{ name: 'floatip', context: { cluster: 'e2e', user: 'floatip' } }],
    'current-context': 'floatip',
  };
  writeFileSync(file, JSON.stringify(config, null, 2), { mode: 0o600 });
  return file;
}

export default async function globalSetup(): Promise<void> {
  process.stderr.write('\n');
  const t0 = Date.now();
  // tsc and the control plane's build or check run side by side
  let builtMs = 0;
  await Promise.all([
    buildFloatip().then(() => (builtMs = Date.now() - t0)),
    e2eScript('ensure', 50 * 60_000),
  ]);
  const t1 = Date.now();
  await e2eScript('down', 60_000);
  const up = await e2eScript('up', 180_000);
  const kubeconfig = /^export KUBECONFIG=(.+)$/m.exec(up)?.[1];
  if (!kubeconfig) throw new Error(`${E2E_SH} up printed no KUBECONFIG line: ${JSON.stringify(up)}`);
  // test files start after globalSetup and inherit it (the helpers also read run-e2e/cluster.json)
  process.env.KUBECONFIG = kubeconfig;
  const floatipKubeconfig = await serviceAccountKubeconfig(kubeconfig);
  process.stderr.write(
    `e2e: Kubernetes ${process.env.FLOATIP_E2E_KUBE ?? 'v1.20'}: floatip built in ${(builtMs / 1000).toFixed(1)} s; control plane ready (ensure and build ${((t1 - t0) / 1000).toFixed(1)} s, ` +
      `up ${((Date.now() - t1) / 1000).toFixed(1)} s), KUBECONFIG=${kubeconfig}; floatip runs as ` +
      `ServiceAccount kube-system/floatip (${floatipKubeconfig})\n`,
  );
}
