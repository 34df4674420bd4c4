// E2E-M1: `npm run demo` as a new user runs it: started in its own process group (a terminal),
// the Deployment of its printed recipe created with kubectl, 5 pods Running with addresses, then
// Ctrl-C (SIGINT to the group, as a terminal sends it) and no process of the demo left: the
// control plane's, floatip's and the demo's own pids are all gone. Its cluster is a second one,
// beside the suite's: its run directory and ports come from FLOATIP_DEMO_* (the demo's defaults
// otherwise), so set them apart from every other cluster on the machine.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { REPO_ROOT } from './floatip.js';
import { addressesOf } from './ipam-state.js';
import { Pods } from './pods.js';
import { note } from './suite.js';
import { waitFor } from './wait.js';

let demo: ChildProcess | undefined;
let stdout = '';
let stderr = '';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Processes whose command line names `text` (the demo's run directory). */
function processesNaming(text: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmdline.includes(text)) out.push(`${entry} ${cmdline.slice(0, 160)}`);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function sh(command: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('/bin/sh', ['-c', command], { env, timeout: 60_000 }, (err, out, errText) =>
      err ? reject(new Error(`${command}: ${err.message}\n${errText}`)) : resolve(out),
    ),
  );
}

afterAll(() => {
  // a failed run must not leave the demo up: the same Ctrl-C
  if (demo?.pid && demo.exitCode === null && demo.signalCode === null) {
    try {
      process.kill(-demo.pid, 'SIGINT');
    } catch {
      // its group is gone already
    }
  }
});

test('E2E-M1 npm run demo: kubectl create deployment gets 5 Running pods with addresses; Ctrl-C leaves no process behind', async () => {
  demo = spawn('npm', ['run', 'demo'], { cwd: REPO_ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  demo.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  demo.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const started = Date.now();
  await waitFor(
    'the demo to print its instructions',
    async () => (stdout.includes('Ctrl-C stops everything') ? true : undefined),
    {
      timeoutMs: 240_000,
      intervalMs: 250,
      describe: () =>
        `stdout ${JSON.stringify(stdout.slice(-300))}, stderr ${JSON.stringify(stderr.slice(-600))}`,
    },
  );
  note(
    `npm run demo ready after ${((Date.now() - started) / 1000).toFixed(1)} s (build, control plane up, floatip ready)`,
  );

  const kubeconfig = /^ {2}export KUBECONFIG=(.+)$/m.exec(stdout)?.[1];
  const bin = /^ {2}export PATH=(.+):\$PATH/m.exec(stdout)?.[1];
  expect(kubeconfig).toBeDefined();
  expect(stdout).toMatch(/^dashboard and REST API: http:\/\/127\.0\.0\.1:\d+\/$/m);
  const runDir = join(kubeconfig!, '..');
  // the printed recipe, run as printed: three lines joined by their trailing backslashes
  const recipe = /^ {2}(kubectl create deployment web[^\n]*\\\n[^\n]*\\\n[^\n]*)$/m.exec(stdout)?.[1];
  expect(recipe).toBeDefined();
  const env = { ...process.env, KUBECONFIG: kubeconfig!, PATH: `${bin}:/usr/bin:${process.env.PATH}` };
  const t0 = Date.now();
  expect(await sh(recipe!, env)).toBe('deployment.apps/web created\n');
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig!);
  const running = await new Pods('default', kc).running('app=web', 5, 30_000);
  const ms = Date.now() - t0;
  note(`npm run demo: 5 pods Running with addresses ${ms} ms after kubectl apply`);
  const ips = running.flatMap(addressesOf);
  expect(ips).toHaveLength(5);
  expect(new Set(ips).size).toBe(5);
  for (const ip of ips) expect(ip).toMatch(/^10\.17[78]\.0\.\d+$/);
  expect(ms).toBeLessThan(15_000);
  expect(await sh('kubectl get pods -l app=web --no-headers | grep -c Running', env)).toBe('5\n');
  expect(await sh('kubectl fip check', env)).toBe('no problems found\n');

  // every pid the demo started, read while it runs
  const pidFiles = readdirSync(runDir).filter((f) => f.endsWith('.pid'));
  expect(pidFiles.sort()).toEqual(
    [
      'etcd.pid',
      'floatip.pid',
      'kube-apiserver.pid',
      'kube-controller-manager.pid',
      'kube-scheduler.pid',
    ].sort(),
  );
  const pids = pidFiles.map((f) => Number(readFileSync(join(runDir, f), 'utf8').trim()));
  // npm's `sh -c` and the demo's node process
  const demoProcesses = processesNaming('dist/demo/demo.js');
  expect(demoProcesses.some((line) => / node dist\/demo\/demo\.js $/.test(line))).toBe(true);
  const demoNode = demoProcesses.map((line) => Number(line.split(' ')[0]));
  const all = [...pids, ...demoNode, demo.pid!];
  for (const pid of all) expect(alive(pid)).toBe(true);

  process.kill(-demo.pid!, 'SIGINT');
  await waitFor(
    'every process of the demo to exit',
    async () => (all.every((p) => !alive(p)) ? true : undefined),
    {
      timeoutMs: 60_000,
      intervalMs: 200,
      describe: () => `alive: ${all.filter(alive).join(', ')}; stderr ${JSON.stringify(stderr.slice(-400))}`,
    },
  );
  expect(processesNaming(runDir)).toEqual([]);
  expect(stderr).toContain('demo: stopped');
}, 360_000);
