// E2E-F1..F3: `kubectl fip` as an operator runs it: the real kubectl v1.32 finding the package's
// kubectl-fip on PATH, against the real control plane with floatip as the scheduler's extender.
// Every `check` finding is produced on purpose (a duplicated annotation, a hand-edited one, a pod
// deleted while floatip is down, an object outside the configuration), and releases go through
// floatip's REST API behind the API server's service proxy.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
} from '@kubernetes/client-node';
import {
  FLOATING_IP_PLURAL,
  GROUP,
  VERSION,
  toFloatingIPObject,
} from '../../src/store/floating-ip-object.js';
import { clusterKubeConfig, ENI_IP, loadCluster } from './cluster.js';
import type { FakeKubelet } from './fake-kubelet.js';
import { CNI_ARGS_ANNOTATION } from './fake-kubelet.js';
import { exposeFloatipApi, removeFloatipApi, removeFloatipHost } from './floatip-service.js';
import { REPO_ROOT, scenario, type FloatipProcess } from './floatip.js';
import { SUITE_CONFIG } from './groups.js';
import { addressesOf, listFloatingIPs, writeFloatipConfig, type ConfigEntry } from './ipam-state.js';
import { createNodes, deleteNodes } from './nodes.js';
import { Pods } from './pods.js';
import { cleanUpFile, endNamespace, note, prepareFile, startFloatip, startNamespace } from './suite.js';
import { waitFor } from './wait.js';
import { createDeployment, deployment } from './workloads.js';

const NS = 'fip-e2e';
const NODES = ['e2e-fip-1', 'e2e-fip-2'];
const LABEL = { 'floatip-e2e/group': 'fip' };
const ENTRY: ConfigEntry = {
  nodeSubnets: ['10.31.13.0/24'],
  ips: ['10.131.13.10~10.131.13.40'],
  subnet: '10.131.13.0/24',
  gateway: '10.131.13.1',
};
const OUTSIDE = '10.250.9.9';
const HAND_EDITED = '10.131.13.39';
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const kc = clusterKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const pods = new Pods(NS);
let floatip: FloatipProcess;
let kubelet: FakeKubelet | undefined;
let pluginDir: string;
let web: V1Pod[] = [];
let lone: V1Pod;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `kubectl fip <args>`: kubectl finds kubectl-fip on PATH, as after `npm install -g`. */
function fip(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      '/usr/bin/kubectl',
      ['fip', ...args],
      {
        env: {
          ...process.env,
          PATH: `${pluginDir}:${process.env.PATH}`,
          KUBECONFIG: loadCluster().KUBECONFIG,
        },
        timeout: 60_000,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const ipOf = (pod: V1Pod) => addressesOf(pod)[0]!;
const nameOf = (pod: V1Pod) => pod.metadata!.name!;

async function startFloatipWithService(): Promise<void> {
  // 1h: no leak resync acts during the file, so what check finds stays until a release
  floatip = await startFloatip({ name: 'fip', resyncInterval: '1h', args: ['--bind', '0.0.0.0'] });
  await exposeFloatipApi(kc, floatip.apiPort!);
}

beforeAll(async () => {
  // the plugin as npm installs a package's bin: an executable kubectl-fip on PATH
  const main = join(REPO_ROOT, 'dist/src/fip/main.js');
  chmodSync(main, 0o755);
  pluginDir = mkdtempSync(join(tmpdir(), 'kubectl-fip-'));
  symlinkSync(main, join(pluginDir, 'kubectl-fip'));
  await prepareFile([]);
  await writeFloatipConfig([...SUITE_CONFIG, ENTRY]);
  await createNodes(NODES, [['10.31.13.11'], ['10.31.13.12']], { [ENI_IP]: '16' }, { labels: LABEL });
  await startFloatipWithService();
  kubelet = await startNamespace(NS);
  await createDeployment(
    deployment(NS, 'web', { replicas: 3, nodeSelector: LABEL, terminationGracePeriodSeconds: 0 }),
  );
  await core.createNamespacedPod({
    namespace: NS,
    body: {
      metadata: { name: 'lone', labels: { app: 'lone' } },
      spec: {
        nodeSelector: LABEL,
        terminationGracePeriodSeconds: 0,
        containers: [{ name: 'app', image: 'registry.invalid/x', resources: { limits: { [ENI_IP]: '1' } } }],
      },
    },
  });
  web = await pods.running('app=web', 3);
  lone = (await pods.running('app=lone', 1))[0]!;
});

afterAll(async () => {
  if (floatip && !floatip.running) await startFloatipWithService();
  await endNamespace(NS, kubelet);
  await removeFloatipHost(kc);
  await deleteNodes(NODES);
  await cleanUpFile([]);
  rmSync(pluginDir, { recursive: true, force: true });
});

scenario('E2E-F1 ls, show, usage and check of a healthy cluster', async () => {
  const all = [...web, lone];
  const ls = await fip('ls');
  expect(ls.code).toBe(0);
  const lines = ls.stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^IP\s+STATE\s+POD\s+NODE\s+POLICY\s+AGE$/);
  expect(lines).toHaveLength(1 + all.length);
  for (const pod of all) {
    expect(ls.stdout).toMatch(
      new RegExp(
        `^${ipOf(pod).replace(/\./g, '\\.')}\\s+in-use\\s+${NS}/${nameOf(pod)}\\s+${pod.spec!.nodeName}\\s+delete\\s+\\d+s$`,
        'm',
      ),
    );
  }
  // columns aligned: every row's POD column starts where the header's does
  const podColumn = lines[0]!.indexOf('POD');
  for (const line of lines.slice(1)) expect(line.slice(podColumn)).toMatch(/^fip-e2e\//);

  const json = JSON.parse((await fip('ls', '-o', 'json')).stdout) as {
    items: { ip: string; key: string; state: string; pod: string }[];
  };
  expect(json.items.map((i) => i.ip)).toEqual(
    all.map(ipOf).sort((a, b) => Number(a.split('.')[3]) - Number(b.split('.')[3])),
  );
  expect(json.items.find((i) => i.pod === 'lone')).toMatchObject({
    key: `NULL_${NS}_NULL_lone`,
    state: 'in-use',
  });
  expect((await fip('ls', '-o', 'yaml')).stdout).toMatch(/^items:\n {2}- ip: 10\.131\.13\./);
  expect((await fip('ls', '--pod', 'lone')).stdout.trimEnd().split('\n')).toHaveLength(2);
  expect((await fip('ls', '--app', 'web', '-o', 'json')).stdout).not.toContain('"lone"');
  const onNode =
    web.filter((p) => p.spec!.nodeName === NODES[0]).length + (lone.spec!.nodeName === NODES[0] ? 1 : 0);
  expect(JSON.parse((await fip('ls', '--node', NODES[0]!, '-o', 'json')).stdout).items).toHaveLength(onNode);
  expect((await fip('ls', '--leaked')).stdout).toMatch(/^No address matches \(\d+ held\)\.\n$/);
  expect((await fip('ls', '-o', 'wide')).stdout).toContain(`dp_${NS}_web_${nameOf(web[0]!)}`);
  // kubectl's own flags, given to the plugin: --kubeconfig, --context, -n
  const flagged = await fip(
    '--kubeconfig',
    loadCluster().KUBECONFIG,
    '--context',
    'kube-real',
    '-n',
    NS,
    'ls',
    '--pod',
    'lone',
  );
  expect(flagged.stdout).toContain(ipOf(lone));
  expect((await fip('--context', 'nope', 'ls')).stderr).toContain('context "nope" does not exist');

  const show = await fip('show', ipOf(lone));
  expect(show.code).toBe(0);
  expect(show.stdout).toMatch(/^State:\s+in-use \(pod fip-e2e\/lone holds it\)$/m);
  expect(show.stdout).toMatch(
    new RegExp(
      `^Pod:\\s+${NS}/lone \\(uid ${lone.metadata!.uid}, phase Running, node ${lone.spec!.nodeName}\\)$`,
      'm',
    ),
  );
  expect(show.stdout).toMatch(/^When its pod goes:\s+floatip will release it \(deletedAndIPMutablePod\)$/m);
  expect(show.stdout).toMatch(
    /^Release now:\s+floatip would refuse: releasable is false, pod status Running \(pod fip-e2e_lone/m,
  );
  const byPod = (await fip('-n', NS, 'show', 'lone')).stdout;
  expect(byPod).toMatch(new RegExp(`^IP:\\s+${ipOf(lone).replace(/\./g, '\\.')}$`, 'm'));
  expect(byPod).toMatch(/^State:\s+in-use \(pod fip-e2e\/lone holds it\)$/m);
  expect((await fip('show', '10.131.13.38')).stdout).toMatch(/^State:\s+free \(no FloatingIP object\)$/m);

  const usage = JSON.parse((await fip('usage', '-o', 'json')).stdout) as {
    rows: {
      name: string;
      used: number;
      free: string;
      total: string;
      allocatedInWindow: number;
      exhaustedInSeconds: number | null;
    }[];
  };
  const row = usage.rows.find((r) => r.name === '10.131.13.0/24')!;
  const subnets = (await (await fetch(`http://127.0.0.1:${floatip.apiPort}/v1/subnets`)).json()) as {
    content: { entries: { subnet: string; free: string; total: string }[] };
  };
  const rest = subnets.content.entries.find((e) => e.subnet === '10.131.13.0/24')!;
  expect(row).toMatchObject({ used: 4, total: rest.total, free: rest.free, allocatedInWindow: 4 });
  // 4 new in the last hour, 27 free: 27 / (4 per hour) = 6.75 h
  expect(row.exhaustedInSeconds).toBe(Math.round((Number(rest.free) * 3600) / 4));
  const usageTable = await fip('usage');
  expect(usageTable.stdout).toMatch(
    /^subnet\s+10\.131\.13\.0\/24\s+10\.31\.13\.0\/24\s+31\s+4\s+0\s+0\s+27\s+4\s+6\.8h$/m,
  );
  note(`kubectl fip usage:\n${usageTable.stdout}`);

  const clean = await fip('check');
  expect(clean).toMatchObject({ code: 0, stdout: 'no problems found\n' });
});

scenario('E2E-F2 check finds each inconsistency made on purpose, and exits 1', async () => {
  await floatip.stop();
  const [w0, w1, w2] = web as [V1Pod, V1Pod, V1Pod];
  const annotate = (pod: V1Pod, value: string) =>
    core.patchNamespacedPod(
      {
        name: nameOf(pod),
        namespace: NS,
        body: { metadata: { annotations: { [CNI_ARGS_ANNOTATION]: value } } },
      },
      MERGE,
    );
  // a duplicated annotation: w1 now claims w0's address
  await annotate(w1, w0.metadata!.annotations![CNI_ARGS_ANNOTATION]!);
  // a hand-edited annotation: w2 names a free address of the range
  await annotate(
    w2,
    JSON.stringify({ common: { ipinfos: [{ ip: `${HAND_EDITED}/24`, vlan: 0, gateway: '10.131.13.1' }] } }),
  );
  // a deleted pod's object: lone deleted while floatip is down
  await core.deleteNamespacedPod({ name: 'lone', namespace: NS, gracePeriodSeconds: 0 });
  await waitFor('lone gone', async () => ((await pods.list('app=lone')).length === 0 ? true : undefined));
  // an address outside the configuration, held by a pool's key
  await kc.makeApiClient(CustomObjectsApi).createClusterCustomObject({
    group: GROUP,
    version: VERSION,
    plural: FLOATING_IP_PLURAL,
    body: toFloatingIPObject({
      ip: OUTSIDE,
      key: 'pool__gone_',
      policy: 2,
      nodeName: '',
      podUid: '',
      updateTime: Date.now(),
      reserved: false,
    }),
  });

  const report = await fip('check');
  note(`kubectl fip check:\n${report.stdout}`);
  expect(report.code).toBe(1);
  const section = (title: string) => {
    const at = report.stdout.indexOf(`\n${title} (`);
    expect(at).toBeGreaterThan(0);
    const rest = report.stdout.slice(at + 1);
    const end = rest.indexOf('\n\n');
    return end < 0 ? rest : rest.slice(0, end);
  };
  expect(report.stdout).toMatch(/^7 problems found\n/);
  const dup = section('two pods with one address');
  expect(dup).toContain(`pods ${NS}/${nameOf(w0)}, ${NS}/${nameOf(w1)} all name ${ipOf(w0)}`);
  expect(dup).toContain(`kubectl -n ${NS} delete pod ${nameOf(w1)}`);
  const leak = section('objects whose pod is gone (leak candidates)');
  expect(leak).toContain(`${ipOf(lone)} (NULL_${NS}_NULL_lone, policy delete, node ${lone.spec!.nodeName})`);
  expect(leak).toContain(
    `pod ${NS}/lone (uid ${lone.metadata!.uid}) no longer exists; floatip's resync will release it (deletedAndIPMutablePod)`,
  );
  expect(leak).toContain(`kubectl fip release ${ipOf(lone)}`);
  expect(section('annotations naming an address without an object')).toContain(
    `pod ${NS}/${nameOf(w2)}'s annotation names ${HAND_EDITED}, which has no FloatingIP object`,
  );
  const disagree = section('object and annotation disagree');
  expect(disagree).toContain(
    `pod ${NS}/${nameOf(w1)}'s annotation names ${ipOf(w0)}, but its object is held by dp_${NS}_web_${nameOf(w0)}`,
  );
  expect(disagree).toContain(`object ${ipOf(w1)} is held by pod ${NS}/${nameOf(w1)}`);
  expect(disagree).toContain(
    `object ${ipOf(w2)} is held by pod ${NS}/${nameOf(w2)} (uid ${w2.metadata!.uid}), but the pod's annotation names ${HAND_EDITED}`,
  );
  expect(section('addresses outside the configuration')).toContain(
    `${OUTSIDE} is held by pool__gone_ but lies in no configured range`,
  );

  const json = JSON.parse((await fip('check', '-o', 'json')).stdout) as {
    problems: number;
    findings: { kind: string; ip: string }[];
  };
  expect(json.problems).toBe(7);
  expect(json.findings.map((f) => `${f.kind} ${f.ip}`).sort()).toEqual(
    [
      `duplicate ${ipOf(w0)}`,
      `disagree ${ipOf(w0)}`,
      `disagree ${ipOf(w1)}`,
      `disagree ${ipOf(w2)}`,
      `no-object ${HAND_EDITED}`,
      `leaked ${ipOf(lone)}`,
      `outside ${OUTSIDE}`,
    ].sort(),
  );
  expect((await fip('ls', '--leaked')).stdout).toContain(`${ipOf(lone)}   leaked`);
});

scenario(
  "E2E-F3 release: a dry run first, refusals with floatip's reasons, releases through the service proxy",
  async () => {
    await startFloatipWithService();
    const w0 = web[0]!;
    const objects = async () => new Set((await listFloatingIPs()).map((o) => o.name));

    const dry = await fip('release', '--dry-run', ipOf(lone), ipOf(w0), '10.131.13.37');
    note(`kubectl fip release --dry-run:\n${dry.stdout}`);
    expect(dry.code).toBe(1);
    expect(dry.stdout).toMatch(/^IP\s+KEY\s+VERDICT\s+WHY$/m);
    expect(dry.stdout).toMatch(new RegExp(`^${ipOf(lone)}\\s+NULL_${NS}_NULL_lone\\s+would release$`, 'm'));
    expect(dry.stdout).toMatch(
      new RegExp(
        `^${ipOf(w0)}\\s+dp_${NS}_web_${nameOf(w0)}\\s+would refuse\\s+releasable is false, pod status Running \\(pod ${NS}_${nameOf(w0)}`,
        'm',
      ),
    );
    expect(dry.stdout).toMatch(
      /^10\.131\.13\.37\s+-\s+would refuse\s+10\.131\.13\.37 is not allocated \(no FloatingIP object\)$/m,
    );
    expect(await objects()).toContain(ipOf(lone));

    const byApp = await fip('-n', NS, 'release', '--app', 'web');
    expect(byApp.code).toBe(1);
    expect(byApp.stdout).toContain('nothing released');
    expect(
      byApp.stdout.match(/would refuse\s+releasable is false, pod status Running/g)?.length,
    ).toBeGreaterThanOrEqual(3);

    // the service proxy is the way in: with floatip's Service gone, the release says where it failed
    await removeFloatipApi(kc);
    const noService = await fip('-n', NS, 'release', '--pod', 'lone');
    expect(noService.code).toBe(2);
    expect(noService.stderr).toMatch(
      // v1.20: the Service is gone; the current release may still answer for it without endpoints
      /the API server answered (404|503) to POST \/api\/v1\/namespaces\/kube-system\/services\/floatip:api-port\/proxy\/v1\/ip, before floatip: (services "floatip" not found|no endpoints available for service "floatip") \(release goes through the API server's service proxy to kube-system\/floatip:api-port, which needs that Service with a ready endpoint/,
    );
    expect(await objects()).toContain(ipOf(lone));
    await exposeFloatipApi(kc, floatip.apiPort!);

    const byPod = await fip('-n', NS, 'release', '--pod', 'lone');
    note(`kubectl fip release --pod lone:\n${byPod.stdout}`);
    expect(byPod).toMatchObject({ code: 0, stderr: '' });
    expect(byPod.stdout).toMatch(new RegExp(`^${ipOf(lone)}\\s+NULL_${NS}_NULL_lone\\s+released$`, 'm'));
    await waitFor("lone's object gone", async () => ((await objects()).has(ipOf(lone)) ? undefined : true));

    const outside = await fip('release', OUTSIDE, '-o', 'json');
    expect(outside.code).toBe(0);
    expect(JSON.parse(outside.stdout)).toEqual({
      dryRun: false,
      items: [{ ip: OUTSIDE, key: 'pool__gone_', released: true, why: '' }],
    });
    await waitFor('the outside object gone', async () => ((await objects()).has(OUTSIDE) ? undefined : true));
    expect(await objects()).toContain(ipOf(w0));
  },
);
