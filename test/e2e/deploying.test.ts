// E2E-D1..D3: floatip as an operator deploys it (README, "Deploying"). D1: every manifest and both
// kustomize overlays pass `kubectl apply --dry-run=server`. D2: the shipped ServiceAccount may do
// exactly what the code calls (every floatip of this suite runs as it: global-setup.ts). D3: the
// real kube-scheduler with the shipped extender entry (https, tlsConfig) in front of two replicas,
// both Ready, binding over mutual TLS; a rolling replace (new replica up, SIGTERM to the leader)
// and then a SIGKILL of the leader while pods are being created: every pod bound with its own IP.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import {
  clusterKubeConfig,
  ENI_IP,
  extenderPort,
  kubeLine,
  loadCluster,
  restartScheduler,
  runDir,
} from './cluster.js';
import type { FakeKubelet } from './fake-kubelet.js';
import { freePort } from '../harness/free-port.js';
import { startFailoverProxy, type FailoverProxy } from './failover-proxy.js';
import { FAST_LEADER_ELECTION, FloatipProcess, REPO_ROOT, scenario, stopAllFloatips } from './floatip.js';
import { GROUPS, onGroup } from './groups.js';
import { addressesOf, expectConsistent } from './ipam-state.js';
import { Pods } from './pods.js';
import { cleanUpFile, endNamespace, note, prepareFile, startFloatip, startNamespace } from './suite.js';
import { sleep, waitFor } from './wait.js';

const exec = promisify(execFile);
/** A kubectl whose kustomize knows components (the machine's v1.32). */
const KUSTOMIZE_KUBECTL = process.env.FLOATIP_E2E_KUSTOMIZE_KUBECTL ?? '/usr/bin/kubectl';
const kc = clusterKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const ns = 'e2e-deploy';
const pods = new Pods(ns);
let kubelet: FakeKubelet | undefined;
let proxy: FailoverProxy | undefined;
/** Set when the scenarios are over: a loop a failed scenario left behind stops (see background). */
let over = false;

/**
 * Runs `fn` beside a scenario; its failure is thrown where it is awaited, never as an unhandled
 * rejection. One left polling after a failure outlived the suite and the cluster, and its first
 * refused request crashed the test process.
 */
const background = (fn: () => Promise<void>): Promise<void> => {
  const running = fn();
  running.catch(() => undefined);
  return running;
};

const kubectl = async (...args: string[]) => {
  const { KUBECTL, KUBECONFIG } = loadCluster();
  try {
    return (await exec(KUBECTL, ['--kubeconfig', KUBECONFIG, ...args], { cwd: REPO_ROOT })).stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`kubectl ${args.join(' ')}: ${e.stderr ?? e.message}`);
  }
};

afterAll(async () => {
  over = true;
  await proxy?.close();
  await stopAllFloatips();
  await restartScheduler();
  // a floatip that leads on the suite's extender port sees the pods go
  if (kubelet) {
    await startFloatip({ name: 'deploy-cleanup' });
    await endNamespace(ns, kubelet);
  }
  await cleanUpFile([GROUPS.deploy]);
});

/** A kustomization of `overlay` for this control plane (v1.20: the kube-1.20 component; current: as shipped). */
function forThisCluster(overlay: string): string {
  const dir = mkdtempSync(join(tmpdir(), `floatip-${overlay}-`));
  const rel = (p: string) => relative(dir, join(REPO_ROOT, p));
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: [rel(`manifests/overlays/${overlay}`)],
      ...(kubeLine() === 'v1.20' ? { components: [rel('manifests/components/kube-1.20')] } : {}),
    }),
  );
  return dir;
}

scenario('E2E-D1 every manifest and both overlays pass kubectl apply --dry-run=server', async () => {
  const lines: string[] = [];
  const files = [
    'crds/',
    'manifests/scheduler-config.yaml',
    'manifests/base/rbac.yaml',
    'manifests/configmap.yaml',
  ];
  for (const file of files)
    lines.push(...(await kubectl('apply', '--dry-run=server', '-f', file)).trim().split('\n'));
  for (const overlay of ['dev', 'ha']) {
    const dir = forThisCluster(overlay);
    try {
      // v1.20's kubectl predates kustomize components: the current one (v1.32) builds, the cluster's applies
      const built = join(dir, 'built.yaml');
      const { stdout } = await exec(KUSTOMIZE_KUBECTL, ['kustomize', dir]);
      writeFileSync(built, stdout);
      const out = (await kubectl('apply', '--dry-run=server', '-f', built)).trim().split('\n');
      expect(
        out.filter((l) => /^(deployment|poddisruptionbudget|networkpolicy|priorityclass)/.test(l)),
      ).toHaveLength(4);
      lines.push(...out);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  expect(lines.filter((l) => !/ \(server dry run\)$/.test(l))).toEqual([]);
  expect(lines.length).toBeGreaterThanOrEqual(4 + 2 * 11);
});

/**
 * What floatip calls, as `kubectl auth can-i --list` prints it (resource, names, verbs), each with
 * where in the code: anything more or less than this in the shipped roles fails E2E-D2.
 */
const CALLS_CLUSTER_WIDE = [
  'pods [] get list watch patch', // cluster.ts (cache), pod-lookup.ts (get), requeue.ts (patch)
  'pods/binding [] create', // cluster-world.ts bind
  'nodes [] get list watch', // cluster.ts, cluster-world.ts fetchNode
  'events [] create', // events.ts
  'deployments.apps [] list watch', // cluster.ts
  'statefulsets.apps [] list watch',
  'floatingips.galaxy.k8s.io [] get list watch create patch delete', // floating-ip-store.ts, -follower.ts
  'customresourcedefinitions.apiextensions.k8s.io [] list watch create', // crds.ts, workloads.ts
  'tapps.apps.tkestack.io/scale [] get', // workloads.ts scaleOf
  'tokenreviews.authentication.k8s.io [] create', // api/kube-auth.ts
  'subjectaccessreviews.authorization.k8s.io [] create',
];
const CALLS_IN_KUBE_SYSTEM = [
  'configmaps [floatingip-config] list watch', // controller/pool-config.ts, by field selector
  'leases.coordination.k8s.io [galaxy-ipam] get update', // kube/lease.ts
  'leases.coordination.k8s.io [] create',
  'pools.galaxy.k8s.io [] get list watch create patch delete', // store/pool-store.ts
];
/** `kubectl auth can-i --list` as this ServiceAccount of kube-system: resource, names, verbs. */
async function grantsOf(serviceAccount: string, namespace: string): Promise<string[]> {
  const out = await kubectl(
    'auth',
    'can-i',
    '--list',
    `--as=system:serviceaccount:kube-system:${serviceAccount}`,
    '-n',
    namespace,
  );
  return out
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => /^(\S+)\s+\[\]\s+\[([^\]]*)\]\s+\[([^\]]*)\]$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => `${m[1]} [${m[2]}] ${m[3]}`);
}

/**
 * floatip's grants, less what the cluster's own roles give every authenticated user (a
 * ServiceAccount no role names has exactly those; they differ between versions).
 */
async function grantsIn(namespace: string): Promise<string[]> {
  const everyone = new Set(await grantsOf('e2e-nobody', namespace));
  return (await grantsOf('floatip', namespace)).filter((g) => !everyone.has(g)).sort();
}

scenario(
  'E2E-D2 the shipped ServiceAccount may do exactly what floatip calls, and namespaced grants stay in kube-system',
  async () => {
    expect(await grantsIn('kube-system')).toEqual([...CALLS_CLUSTER_WIDE, ...CALLS_IN_KUBE_SYSTEM].sort());
    expect(await grantsIn('default')).toEqual([...CALLS_CLUSTER_WIDE].sort());
  },
);

/** One POST over TLS to the extender as `client` (no certificate: undefined); the status or how it failed. */
function tlsPost(url: string, dir: string, client: 'scheduler' | undefined): Promise<string> {
  const pem = (name: string) => readFileSync(join(dir, name), 'utf8');
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        method: 'POST',
        ca: pem('ca.crt'),
        ...(client ? { cert: pem('scheduler.crt'), key: pem('scheduler.key') } : {}),
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(`HTTP ${res.statusCode}`));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end(JSON.stringify({ Pod: { metadata: { name: 'x', namespace: ns } }, NodeNames: [] }));
  });
}

scenario(
  'E2E-D3 (mTLS) two Ready replicas behind one URL; a rolling replace, then a SIGKILL of the leader, while pods come: every pod bound with its own IP',
  async () => {
    await prepareFile([GROUPS.deploy]);
    kubelet = await startNamespace(ns);
    const certs = join(runDir(), 'mtls');
    rmSync(certs, { recursive: true, force: true });
    mkdirSync(certs);
    await exec(join(REPO_ROOT, 'scripts/extender-certs.sh'), [certs]);
    // the shipped configuration's extender entry (https, tlsConfig), with the test's certificates
    await restartScheduler({
      shipped: true,
      extenderTls: { url: `https://127.0.0.1:${extenderPort()}/v1`, dir: certs },
    });

    const healthOf = new Map<string, number>();
    const replicas: FloatipProcess[] = [];
    const replica = async (name: string) => {
      const healthPort = await freePort();
      const r = await FloatipProcess.start({
        name,
        port: 0,
        tls: true,
        healthPort,
        leaderElect: FAST_LEADER_ELECTION,
        args: [
          `--tls-cert-file=${join(certs, 'floatip.crt')}`,
          `--tls-private-key-file=${join(certs, 'floatip.key')}`,
          `--extender-client-ca-file=${join(certs, 'ca.crt')}`,
        ],
      });
      replicas.push(r);
      await r.ready({ listening: true });
      healthOf.set(r.url, healthPort);
      return r;
    };
    const [a, b] = [await replica('deploy-a'), await replica('deploy-b')];
    proxy = await startFailoverProxy({
      port: extenderPort(),
      mode: 'tcp',
      backends: () => replicas.filter((r) => r.running && healthOf.has(r.url)).map((r) => r.url),
      probeUrl: (url) => `http://127.0.0.1:${healthOf.get(url)}/readyz`,
    });
    // both Ready, behind the one URL
    await Promise.all([a.ready(), b.ready()]);
    await waitFor('the proxy to route to both', () => (proxy!.ready().length === 2 ? true : undefined));
    // mutual TLS: the scheduler's certificate is answered, a client without one refused in the handshake
    const url = `https://127.0.0.1:${extenderPort()}/v1/filter`;
    expect(await tlsPost(url, certs, 'scheduler')).toBe('HTTP 200');
    expect(await tlsPost(url, certs, undefined)).toMatch(
      /^(ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED|ECONNRESET)$/,
    );

    const coordination = kc.makeApiClient(CoordinationV1Api);
    const identity = (p: FloatipProcess) => p.records('leader election started')[0]?.identity;
    const leader = () =>
      waitFor('a leader among the replicas', async () => {
        const lease = await coordination.readNamespacedLease({
          name: 'galaxy-ipam',
          namespace: 'kube-system',
        });
        return replicas.find((r) => r.running && identity(r) === lease.spec?.holderIdentity);
      });

    // pods created one by one while the replicas change; when each was created and first seen bound
    const created = new Map<string, number>();
    const bound = new Map<string, number>();
    let creating = true;
    const watcher = background(async () => {
      while (!over && (creating || bound.size < created.size)) {
        for (const p of await pods.list('app=deploy')) {
          const name = p.metadata!.name!;
          if (p.spec?.nodeName && !bound.has(name)) bound.set(name, Date.now());
        }
        await sleep(100);
        if (!creating && Date.now() - Math.max(...created.values()) > 60_000) break;
      }
    });
    const TOTAL = 48;
    const creator = background(async () => {
      for (let i = 0; i < TOTAL && !over; i++) {
        const name = `deploy-${String(i).padStart(2, '0')}`;
        await core.createNamespacedPod({
          namespace: ns,
          body: {
            metadata: { name, labels: { app: 'deploy' } },
            spec: {
              nodeSelector: onGroup(GROUPS.deploy),
              containers: [
                {
                  name: 'app',
                  image: 'registry.invalid/floatip-e2e/pause:3.2',
                  resources: { limits: { [ENI_IP]: '1' } },
                },
              ],
            },
          },
        });
        created.set(name, Date.now());
        await sleep(250);
      }
      creating = false;
    });

    // the rolling replace: a new replica, Ready; then SIGTERM to the leader (as a rollout does)
    await sleep(2_000);
    const c = await replica('deploy-c');
    await c.ready();
    const old = await leader();
    const termAt = Date.now();
    await old.stop();
    const termStopMs = Date.now() - termAt;
    const afterTerm = await leader();
    const handoverMs = Date.now() - termAt;
    // then the new leader dies without a word
    await sleep(3_000);
    const killAt = Date.now();
    await afterTerm.kill();
    const survivor = replicas.find((r) => r.running)!;
    await waitFor('the survivor to lead', async () => ((await leader()) === survivor ? true : undefined), {
      timeoutMs: 20_000,
    });
    const takeoverMs = Date.now() - killAt;
    await creator;
    await watcher;

    const running = await pods.running('app=deploy', TOTAL, 60_000);
    const ips = running.flatMap(addressesOf);
    expect(ips).toHaveLength(TOTAL);
    expect(new Set(ips).size).toBe(TOTAL);
    await expectConsistent('E2E-D3 after the replacements');
    const delay = (from: number, to: number) =>
      Math.max(
        0,
        ...[...created].filter(([, at]) => at >= from && at < to).map(([n, at]) => bound.get(n)! - at),
      );
    const steady = delay(0, termAt - 500);
    const duringTerm = delay(termAt - 500, termAt + handoverMs + 1000);
    const duringKill = delay(killAt - 500, killAt + takeoverMs + 1000);
    note(
      `E2E-D3: ${TOTAL} pods over mTLS, bind delay max ${steady} ms before, ${duringTerm} ms around the SIGTERM ` +
        `(old leader exited in ${termStopMs} ms, new leader ${handoverMs} ms after it), ${duringKill} ms around the ` +
        `SIGKILL (taken over in ${takeoverMs} ms; lease 3 s); proxy ${JSON.stringify(Object.fromEntries(proxy.forwarded))}, ` +
        `${proxy.failures.length} connection failures`,
    );
    expect(handoverMs).toBeLessThan(3_000);
    expect(duringTerm).toBeLessThan(5_000);
    expect(takeoverMs).toBeLessThan(3_000 + 2_000);
    expect(duringKill).toBeLessThan(3_000 + 5_000);
  },
  240_000,
);
