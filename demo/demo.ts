// `npm run demo`: a real local cluster in one command. The e2e harness's control plane (etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler v1.20.2, test/e2e/kube/e2e.sh) in its
// own run directory and on its own ports, floatip (the built binary) as the scheduler's extender,
// the e2e suite's simulated kubelet marking pods Running with their addresses, demo nodes and a
// demo configuration. It prints the kubeconfig and the dashboard's URL, and Ctrl-C (SIGINT, or
// SIGTERM) stops everything it started: the kubelet, floatip, then the control plane.
import { type ChildProcess, spawn } from 'node:child_process';
import {
  chmodSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { FakeKubelet } from '../test/e2e/fake-kubelet.js';
import { FLOATIP_HOST, exposeFloatipApi, hostAddress } from '../test/e2e/floatip-service.js';
import { createNodes } from '../test/e2e/nodes.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const E2E_SH = join(REPO, 'test/e2e/kube/e2e.sh');
const FLOATIP_MAIN = join(REPO, 'dist/src/main.js');
const ENI_IP = 'tke.cloud.tencent.com/eni-ip';

const env = process.env;
const port = (name: string, fallback: number) => Number(env[`FLOATIP_DEMO_${name}_PORT`] ?? fallback);
/** Its own run directory and ports: neither the e2e suite's (2xxxx) nor `npm start`'s (9040, 9041, 6080). */
const SETTINGS = {
  runDir:
    env.FLOATIP_DEMO_RUN_DIR ??
    join(env.FLOATIP_KUBE_HOME ?? join(homedir(), '.cache/floatip-kube'), 'run-demo'),
  etcd: port('ETCD', 25790),
  etcdPeer: port('ETCD_PEER', 25791),
  apiserver: port('APISERVER', 25443),
  schedSecure: port('SCHED_SECURE', 25259),
  schedHealthz: port('SCHED_HEALTHZ', 25251),
  kcm: port('KCM_SECURE', 25257),
  extender: port('EXTENDER', 25040),
  api: port('API', 25041),
};

/** Two node subnets, three nodes: pods on demo-node-3 get addresses of the second entry. */
const CONFIG = [
  {
    nodeSubnets: ['10.77.0.0/24'],
    ips: ['10.177.0.10~10.177.0.250'],
    subnet: '10.177.0.0/24',
    gateway: '10.177.0.1',
  },
  {
    nodeSubnets: ['10.78.0.0/24'],
    ips: ['10.178.0.10~10.178.0.250'],
    subnet: '10.178.0.0/24',
    gateway: '10.178.0.1',
  },
];
const NODES = ['demo-node-1', 'demo-node-2', 'demo-node-3'];
const NODE_IPS = ['10.77.0.11', '10.77.0.12', '10.78.0.11'];

const say = (text: string) => process.stderr.write(`demo: ${text}\n`);

/** e2e.sh's settings for the demo's cluster (it reads FLOATIP_E2E_*); up.sh's scheduler knobs are the suite's. */
function clusterEnv(): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (
      !/^(FLOATIP_E2E_|EXTENDER_|MANAGED_RESOURCE|NODE_CACHE_CAPABLE$|SCHED_CONFIG$|SCHED_V$|ETCD_DATA$)/.test(
        k,
      )
    )
      out[k] = v;
  }
  return {
    ...out,
    FLOATIP_E2E_RUN_DIR: SETTINGS.runDir,
    FLOATIP_E2E_ETCD_PORT: String(SETTINGS.etcd),
    FLOATIP_E2E_ETCD_PEER_PORT: String(SETTINGS.etcdPeer),
    FLOATIP_E2E_APISERVER_PORT: String(SETTINGS.apiserver),
    FLOATIP_E2E_SCHED_SECURE_PORT: String(SETTINGS.schedSecure),
    FLOATIP_E2E_SCHED_HEALTHZ_PORT: String(SETTINGS.schedHealthz),
    FLOATIP_E2E_KCM_SECURE_PORT: String(SETTINGS.kcm),
    FLOATIP_E2E_EXTENDER_PORT: String(SETTINGS.extender),
    NODE_CACHE_CAPABLE: 'true',
  };
}

/** Runs `e2e.sh <command>` in its own process group (a terminal's Ctrl-C is ours to handle); resolves with stdout. */
function e2e(command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(E2E_SH, [command], {
      env: clusterEnv(),
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('error', (err) => reject(new Error(`${E2E_SH} ${command}: ${err.message}`)));
    child.on('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${E2E_SH} ${command}: exit code ${code}`)),
    );
  });
}

async function waitReady(url: string, timeoutMs: number, floatip: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (floatip.exitCode !== null) throw new Error(`floatip exited (code ${floatip.exitCode}); see its log`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`floatip not ready at ${url} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

let floatip: ChildProcess | undefined;
let kubelet: FakeKubelet | undefined;
let clusterStarted = false;
let stopping: Promise<void> | undefined;

/** Everything the demo started, in reverse order; safe to call twice. */
function stopAll(): Promise<void> {
  stopping ??= (async () => {
    say('stopping');
    await kubelet?.stop().catch(() => undefined);
    if (floatip && floatip.exitCode === null && floatip.signalCode === null) {
      const child = floatip;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    if (clusterStarted) await e2e('down').catch((err: Error) => say(err.message));
    say('stopped');
  })();
  return stopping;
}

async function main(): Promise<void> {
  const { runDir } = SETTINGS;
  mkdirSync(runDir, { recursive: true });
  if (!existsSync(FLOATIP_MAIN)) throw new Error(`${FLOATIP_MAIN} is missing: run \`npm run build\``);
  say(`building or checking the control plane (the first time: about 6 minutes), run directory ${runDir}`);
  await e2e('ensure');
  await e2e('down'); // what an interrupted demo left behind
  clusterStarted = true;
  const up = await e2e('up');
  const kubeconfig = /^export KUBECONFIG=(.+)$/m.exec(up)?.[1];
  if (!kubeconfig) throw new Error(`e2e.sh up printed no KUBECONFIG: ${JSON.stringify(up)}`);
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);

  await core.createNamespacedConfigMap({
    namespace: 'kube-system',
    body: { metadata: { name: 'floatingip-config' }, data: { floatingips: JSON.stringify(CONFIG) } },
  });
  await createNodes(NODES, NODE_IPS, { [ENI_IP]: '32' }, { kubeConfig: kc });

  const log = createWriteStream(join(runDir, 'floatip.log'));
  // bound on every interface: the API server's service proxy reaches it at this machine's address
  const args = [
    'serve',
    '--kubeconfig',
    kubeconfig,
    '--bind',
    '0.0.0.0',
    '--port',
    String(SETTINGS.extender),
  ];
  args.push('--api-port', String(SETTINGS.api), '--leader-elect=false', '--resync-interval=30s');
  floatip = spawn(process.execPath, [FLOATIP_MAIN, ...args], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: { ...env, NODE_OPTIONS: '' },
  });
  floatip.stdout?.pipe(log);
  floatip.stderr?.pipe(log);
  writeFileSync(join(runDir, 'floatip.pid'), `${floatip.pid}\n`);
  await waitReady(`http://127.0.0.1:${SETTINGS.extender}/readyz`, 60_000, floatip);
  floatip.once('exit', (code, signal) => {
    if (!stopping) {
      say(`floatip exited (code ${code}, signal ${signal}); see ${join(runDir, 'floatip.log')}`);
      void stopAll().then(() => process.exit(1));
    }
  });

  let proxy = '';
  try {
    await exposeFloatipApi(kc, SETTINGS.api, hostAddress());
  } catch (err) {
    proxy = ` (not through the service proxy: ${(err as Error).message})`;
  }
  kubelet = new FakeKubelet({ kubeConfig: kc, manages: (node) => node !== FLOATIP_HOST });
  await kubelet.start();

  // kubectl fip for the shell, as `npm install -g` would put it on PATH
  const bin = join(runDir, 'bin');
  mkdirSync(bin, { recursive: true });
  chmodSync(join(REPO, 'dist/src/fip/main.js'), 0o755);
  rmSync(join(bin, 'kubectl-fip'), { force: true });
  symlinkSync(join(REPO, 'dist/src/fip/main.js'), join(bin, 'kubectl-fip'));
  const example = join(runDir, 'web.yaml');
  writeFileSync(example, webYaml());

  process.stdout.write(
    [
      '',
      'floatip demo: Kubernetes v1.20.2 (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) with',
      `floatip as the scheduler's extender, a simulated kubelet, nodes ${NODES.join(', ')}.`,
      '',
      'In another shell:',
      `  export KUBECONFIG=${kubeconfig}`,
      `  export PATH=${bin}:$PATH   # kubectl fip`,
      '',
      `dashboard and REST API: http://127.0.0.1:${SETTINGS.api}/${proxy}`,
      `floatip's log:          ${join(runDir, 'floatip.log')}`,
      '',
      'A Deployment of 5 pods with a floating IP each (the IP is an extended resource in the pod template):',
      '  kubectl create deployment web --image=x --replicas=5 --dry-run=client -o yaml \\',
      `    | kubectl set resources --local -f - --limits=${ENI_IP}=1 -o yaml \\`,
      '    | kubectl apply -f -',
      `  (or: kubectl apply -f ${example})`,
      '  kubectl get pods -o wide',
      '  kubectl fip ls; kubectl fip usage; kubectl fip check',
      '',
      'Ctrl-C stops everything the demo started.',
      '',
    ].join('\n'),
  );
  say('ready');
}

function webYaml(): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: { app: web }
spec:
  replicas: 5
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: x
          image: x
          resources:
            limits: { ${ENI_IP}: "1" }
`;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return; // a second Ctrl-C waits for the first
    void stopAll().then(() => process.exit(0));
  });
}

main().catch(async (err: Error) => {
  say(`failed: ${err.message}`);
  await stopAll();
  process.exit(1);
});
