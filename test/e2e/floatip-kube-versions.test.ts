// E2E-8..11: what changed around scheduler extenders between Kubernetes v1.20 and the current
// release, run on whichever control plane this run has (FLOATIP_E2E_KUBE; `npm run test:e2e` runs
// both): the shipped scheduler configuration is what the scheduler runs with; a pod finds the few
// nodes with free addresses among 160; a pod refused for want of an address is bound once one is
// freed, with and without floatip's requeue touch; with `ignorable: false` pods wait while floatip
// is stopped and are bound once it is back.
import { request } from 'node:https';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AppsV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { REQUEUED_ANNOTATION } from '../../src/controller/requeue.js';
import {
  clusterKubeConfig,
  extenderPort,
  kubeLine,
  loadCluster,
  restartScheduler,
  runDir,
} from './cluster.js';
import type { FakeKubelet } from './fake-kubelet.js';
import { REPO_ROOT, scenario, type FloatipProcess } from './floatip.js';
import { createGroupNodes, GROUPS, inRange, onGroup } from './groups.js';
import { addressesOf, expectConsistent } from './ipam-state.js';
import { createNodes, deleteNodes } from './nodes.js';
import { hasAnnotation, isRunningReady, Pods, summary } from './pods.js';
import { cleanUpFile, endNamespace, note, prepareFile, startFloatip, startNamespace } from './suite.js';
import { TouchBlocker } from './touch-blocker.js';
import { waitFor } from './wait.js';
import { createDeployment, deployment } from './workloads.js';

const exec = promisify(execFile);
const kc = clusterKubeConfig();
const apps = kc.makeApiClient(AppsV1Api);
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const groups = [GROUPS.many, GROUPS.requeue, GROUPS.away];
const line = kubeLine();
const ns = 'e2e-versions';
const pods = new Pods(ns);
/** Nodes in 10.32.0.0/16, a subnet no floatingip-config entry serves: floatip refuses them all. */
const DECOYS = Array.from({ length: 156 }, (_, i) => `e2e-decoy-${String(i + 1).padStart(3, '0')}`);
let floatip: FloatipProcess;
let kubelet: FakeKubelet | undefined;

beforeAll(async () => {
  await prepareFile([GROUPS.many]);
  // named to sort before the group's nodes: a restarted scheduler lists nodes by name, and the
  // first 100 it finds feasible are then all decoys
  await createNodes(
    DECOYS,
    DECOYS.map((_, i) => `10.32.${Math.floor(i / 200)}.${11 + (i % 200)}`),
  );
  floatip = await startFloatip({ name: 'versions' });
  kubelet = await startNamespace(ns);
});

afterEach(() => {
  expect(kubelet?.errors).toEqual([]);
});

afterAll(async () => {
  await endNamespace(ns, kubelet);
  await deleteNodes(DECOYS);
  await cleanUpFile(groups);
  await restartScheduler();
});

/** GET on kube-scheduler's secure port as the cluster admin (its serving certificate is self-signed). */
function schedulerGet(path: string): Promise<unknown> {
  const cluster = loadCluster();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: Number(cluster.SCHED_SECURE_PORT),
        path,
        headers: { authorization: `Bearer ${cluster.KUBE_ADMIN_TOKEN}` },
        rejectUnauthorized: false,
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(JSON.parse(body))
            : reject(new Error(`kube-scheduler ${path}: ${res.statusCode} ${body.slice(0, 300)}`)),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/**
 * The paths where the scheduler's configuration (/configz: the internal type, Go field names)
 * differs from the shipped one; keys compare without case (urlPrefix is URLPrefix there).
 */
function differences(shipped: unknown, live: unknown, path = ''): string[] {
  if (shipped !== null && typeof shipped === 'object') {
    if (live === null || typeof live !== 'object') return [path];
    const liveKeys = new Map(Object.keys(live).map((k) => [k.toLowerCase(), k]));
    return Object.entries(shipped).flatMap(([key, value]) => {
      const liveKey = liveKeys.get(key.toLowerCase());
      const at = path ? `${path}.${key}` : key;
      // the current release's /configz leaves out fields at their zero value (false, 0, "")
      if (liveKey === undefined) return isZero(value) ? [] : [at];
      return differences(value, (live as Record<string, unknown>)[liveKey], at);
    });
  }
  return shipped === live ? [] : [path];
}

const isZero = (value: unknown) => value === false || value === 0 || value === '';

const SHIPPED_KEY = line === 'current' ? 'scheduler-config.yaml' : 'scheduler-config-v1beta1.yaml';

function shippedConfig(): Record<string, unknown> {
  const manifest = parse(
    readFileSync(new URL('../../manifests/scheduler-config.yaml', import.meta.url), 'utf8'),
  ) as { data: Record<string, string> };
  return parse(manifest.data[SHIPPED_KEY]!) as Record<string, unknown>;
}

const bound = (p: V1Pod) => !p.metadata?.deletionTimestamp && isRunningReady(p) && hasAnnotation(p);

/** Waits until the Deployment's pods are `n` running with addresses and `waiting` unbound. */
async function settle(app: string, n: number, waiting: number, timeoutMs: number): Promise<V1Pod[]> {
  let last: V1Pod[] = [];
  return waitFor(
    `${n} pods of ${app} running with addresses and ${waiting} unbound`,
    async () => {
      last = (await pods.list(`app=${app}`)).filter((p) => !p.metadata?.deletionTimestamp);
      const running = last.filter(bound);
      const unbound = last.filter((p) => !p.spec?.nodeName);
      return running.length === n && unbound.length === waiting && last.length === n + waiting
        ? last
        : undefined;
    },
    { timeoutMs, intervalMs: 100, describe: () => summary(last) },
  );
}

/** The FailedScheduling messages of a pod so far. */
async function failedScheduling(name: string): Promise<string[]> {
  return (await pods.events(name)).filter((e) => e.reason === 'FailedScheduling').map((e) => e.message ?? '');
}

async function deleteDeployment(name: string): Promise<void> {
  await apps.deleteNamespacedDeployment({ name, namespace: ns, propagationPolicy: 'Background' });
  await pods.gone(`app=${name}`);
}

scenario(
  `E2E-8 (${line}) kube-scheduler runs the shipped ${SHIPPED_KEY}, changed only where a test cluster must`,
  async () => {
    // the shipped extender entry is mutual TLS: the scheduler gets it with the test's certificates
    const dir = join(runDir(), 'mtls-e2e8');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    await exec(join(REPO_ROOT, 'scripts/extender-certs.sh'), [dir]);
    const url = `https://127.0.0.1:${extenderPort()}/v1`;
    await restartScheduler({ shipped: true, extenderTls: { url, dir } });
    const live = ((await schedulerGet('/configz')) as { componentconfig: unknown }).componentconfig;
    const shipped = shippedConfig();
    delete shipped.apiVersion;
    delete shipped.kind;
    const changed = differences(shipped, live).sort();
    // the kubeconfig (the test cluster's), the extender URL (the suite's floatip, not the Service)
    // and where the certificates are (the test's, not the mounted Secret's)
    expect(changed).toEqual([
      'clientConnection.kubeconfig',
      'extenders.0.tlsConfig.caFile',
      'extenders.0.tlsConfig.certFile',
      'extenders.0.tlsConfig.keyFile',
      'extenders.0.urlPrefix',
    ]);
    const extenders = (live as Record<string, unknown>)[
      Object.keys(live as object).find((k) => k.toLowerCase() === 'extenders')!
    ] as Record<string, unknown>[];
    expect(Object.values(extenders[0]!)).toContain(url);
    note(`E2E-8 (${line}): /configz differs from the shipped ${SHIPPED_KEY} only in ${changed.join(', ')}`);
  },
);

scenario(
  `E2E-9 (${line}) 160 nodes, 4 with free addresses: pods are bound there, not declared unschedulable`,
  async () => {
    // the shipped configuration (nodeCacheCapable, percentageOfNodesToScore 100), from E2E-8
    await restartScheduler({ shipped: true });
    const t0 = Date.now();
    await createDeployment(deployment(ns, 'wide', { replicas: 3 }));
    const placed = await settle('wide', 3, 0, 30_000);
    const ms = Date.now() - t0;
    for (const p of placed) {
      expect(GROUPS.many.nodes).toContain(p.spec?.nodeName);
      expect(inRange(GROUPS.many.entries[0]!.ips[0]!, addressesOf(p)[0]!)).toBe(true);
      expect(await failedScheduling(p.metadata!.name!)).toEqual([]);
    }
    note(`E2E-9 (${line}): 3 pods bound on ${DECOYS.length + 4} nodes in ${ms} ms, no FailedScheduling`);
    await deleteDeployment('wide');

    // why the shipped file says percentageOfNodesToScore: 100: with the scheduler's default it sends
    // floatip only the first 100 nodes its plugins find feasible, so whether the 4 are among them
    // depends on its node order and where its last search stopped (seen here, not asserted)
    await restartScheduler({ percentageOfNodesToScore: 0 });
    await createDeployment(deployment(ns, 'narrow', { replicas: 1 }));
    const outcome = await waitFor(
      'the pod bound, or a FailedScheduling event for it',
      async () => {
        const [pod] = await pods.list('app=narrow');
        if (!pod?.metadata?.name) return undefined;
        if (pod.spec?.nodeName) return `bound on ${pod.spec.nodeName} at the first attempt`;
        const [message] = await failedScheduling(pod.metadata.name);
        return message ? `declared unschedulable: ${message}` : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    note(`E2E-9 (${line}): with the default percentageOfNodesToScore: ${outcome}`);
    await deleteDeployment('narrow');
    await restartScheduler();
    await expectConsistent('E2E-9 done', { floatip });
  },
);

describe(`E2E-10 (${line})`, () => {
  beforeAll(async () => {
    await createGroupNodes([GROUPS.requeue]);
  });

  describe.each([true, false])(`requeue touch %s`, (touch) => {
    const tag = touch ? 'touch' : 'notouch';
    let blocker: TouchBlocker | undefined;
    const blocked = () => blocker?.blocked ?? [];
    let own: FloatipProcess | undefined;

    beforeAll(async () => {
      await restartScheduler();
      if (!touch) {
        // the same floatip, but its touches never reach the API server
        await floatip.stop();
        blocker = await TouchBlocker.start();
        own = await startFloatip({ name: 'notouch', args: ['--kubeconfig', blocker.kubeconfig] });
      }
    });

    afterAll(async () => {
      if (own) {
        await own.stop();
        await blocker?.stop();
        floatip = await startFloatip({ name: 'versions' });
      }
    });

    scenario(
      `E2E-10 (${line}, ${tag}) a pod refused for want of an address is bound within seconds of one being freed`,
      async () => {
        const on = onGroup(GROUPS.requeue);
        await createDeployment(deployment(ns, `hold-${tag}`, { replicas: 2, nodeSelector: on }));
        await settle(`hold-${tag}`, 2, 0, 30_000);
        await createDeployment(deployment(ns, `late-${tag}`, { replicas: 1, nodeSelector: on }));
        const [late] = await settle(`late-${tag}`, 0, 1, 10_000);
        const name = late!.metadata!.name!;
        await waitFor(
          `${name} refused for want of an address`,
          async () =>
            (await failedScheduling(name)).some((m) => m.includes('NoFIPLeft')) ? true : undefined,
          { timeoutMs: 20_000, intervalMs: 250 },
        );

        // one holder goes (a pod deletion: a cluster event the scheduler sees, as floatip does)
        const t0 = Date.now();
        await apps.patchNamespacedDeployment(
          { name: `hold-${tag}`, namespace: ns, body: { spec: { replicas: 1 } } },
          MERGE,
        );
        // with the touch: bound within seconds. Without it, only the scheduler's own requeue (on the
        // deletion event, which may come before floatip has released the address) can bring it back
        const after = await settle(`late-${tag}`, 1, 0, touch ? 20_000 : 15_000).then(
          ([p]) => p,
          (err: unknown) => {
            if (touch) throw err;
            return undefined;
          },
        );
        const ms = Date.now() - t0;
        if (touch) {
          expect(after!.metadata?.annotations?.[REQUEUED_ANNOTATION]).toBeDefined();
          note(`E2E-10 (${line}, touch): bound ${ms} ms after the address was freed, touched by floatip`);
        } else {
          // floatip did try to touch it: the blocker refused that, and nothing else touched it
          expect(blocked()).toContain(`${ns}/${name}`);
          if (after) expect(after.metadata?.annotations?.[REQUEUED_ANNOTATION]).toBeUndefined();
          note(
            `E2E-10 (${line}, no touch): ` +
              (after
                ? `bound ${ms} ms after the address was freed, by the scheduler's own requeue`
                : `not bound ${ms} ms after the address was freed: the scheduler's own requeue did not bring it back`),
          );
        }
        await deleteDeployment(`late-${tag}`);
        await deleteDeployment(`hold-${tag}`);
        await expectConsistent(`E2E-10 ${tag} done`, { floatip: own ?? floatip });
      },
    );
  });
});

scenario(
  `E2E-11 (${line}) ignorable: false and floatip stopped: pods wait unbound; floatip started: bound`,
  async () => {
    await createGroupNodes([GROUPS.away]);
    await restartScheduler({ ignorable: false });
    await floatip.stop();
    await createDeployment(deployment(ns, 'away', { replicas: 2, nodeSelector: onGroup(GROUPS.away) }));
    const waiting = await settle('away', 0, 2, 10_000);
    // the scheduler tried and failed (the extender refused the connection), and bound nothing without it
    await waitFor(
      'a FailedScheduling event while floatip is stopped',
      async () => ((await failedScheduling(waiting[0]!.metadata!.name!)).length ? true : undefined),
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    await new Promise((r) => setTimeout(r, 3000));
    await settle('away', 0, 2, 1000);
    const t0 = Date.now();
    floatip = await startFloatip({ name: 'versions' });
    const running = await settle('away', 2, 0, 30_000);
    const touched = running.filter(
      (p) => p.metadata?.annotations?.[REQUEUED_ANNOTATION] !== undefined,
    ).length;
    note(
      `E2E-11 (${line}): bound ${Date.now() - t0} ms after floatip started (${touched} of 2 touched by it)`,
    );
    for (const p of running) expect(GROUPS.away.nodes).toContain(p.spec?.nodeName);
    await deleteDeployment('away');
    await expectConsistent('E2E-11 done', { floatip });
  },
);
