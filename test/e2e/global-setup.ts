// jest globalSetup for the e2e suite: build the control plane of FLOATIP_E2E_KUBE (v1.20 or current)
// on first use (v1.20.2 about 6 minutes on 2 cores, current about 15; afterwards well under a second) and floatip (`npm run build`: the scenarios run the real
// binary, dist/src/main.js), clear what an interrupted run left behind, and start a fresh cluster. Self-contained on purpose: jest loads this file outside its module system, where
// relative TypeScript imports do not resolve.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

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
  process.stderr.write(
    `e2e: Kubernetes ${process.env.FLOATIP_E2E_KUBE ?? 'v1.20'}: floatip built in ${(builtMs / 1000).toFixed(1)} s; control plane ready (ensure and build ${((t1 - t0) / 1000).toFixed(1)} s, ` +
      `up ${((Date.now() - t1) / 1000).toFixed(1)} s), KUBECONFIG=${kubeconfig}\n`,
  );
}
