// E2E-G1..G3: FloatingIP objects in exactly the shapes galaxy-ipam writes them (docs/galaxy.md#floatingip-objects, docs/galaxy.md#reserved-addresses),
// with `attribute: ""`, on the real kube-apiserver v1.20.2 with floatip's CRD: galaxy's Go client
// (create, then GET and PUT as its updateFloatingIP does) and galaxy's docs (kubectl apply of the
// reserved-IP YAML, then applied again). All are accepted, and floatip reads them. A rollback to
// galaxy writes the same shapes.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { fromFloatingIPObject } from '../../src/store/floating-ip-object.js';
import { clusterKubeConfig, loadCluster } from './cluster.js';
import { scenario, supportsApiPort } from './floatip.js';
import { applyCrds } from './ipam-state.js';
import { describeError } from './kube-errors.js';
import { cleanUpFile, prepareFile, startFloatip } from './suite.js';

const run = promisify(execFile);
const fips = clusterKubeConfig().makeApiClient(CustomObjectsApi);
const FIP = { group: 'galaxy.k8s.io', version: 'v1alpha1', plural: 'floatingips' };
/** kubectl as a user has it today; the cluster's own kubectl (v1.20.2) is galaxy's era. */
const KUBECTL_NOW = '/usr/bin/kubectl';
// the last two addresses of E2E-2's range (10.131.2.10~10.131.2.80): configured, and the suite's
// files run one after another, each starting with no FloatingIP objects
const GO_CLIENT_IP = '10.131.2.79';
const DOCS_IP = '10.131.2.80';
let dir: string;

type Fip = { metadata: { name: string; resourceVersion?: string }; spec: Record<string, unknown> };

/** The request body galaxy's client-go sends for `createFloatingIP`: Go's zero ObjectMeta and all. */
function goClientObject(name: string, spec: Record<string, unknown>): object {
  return {
    kind: 'FloatingIP',
    apiVersion: 'galaxy.k8s.io/v1alpha1',
    metadata: { name, creationTimestamp: null },
    spec,
  };
}

/** galaxy's docs, docs/galaxy.md#reserved-addresses, as a file a user applies. */
function reservedYaml(name: string, key: string): string {
  return [
    'apiVersion: galaxy.k8s.io/v1alpha1',
    'kind: FloatingIP',
    'metadata:',
    `  name: ${name}`,
    '  labels:',
    '    reserved: this-is-not-for-pods',
    'spec:',
    `  key: ${key}`,
    '  policy: 2',
    '  attribute: ""',
    '  updateTime: "2020-01-01T00:00:00Z"',
    '',
  ].join('\n');
}

async function kubectl(binary: string, args: string[]): Promise<string> {
  const { KUBECONFIG } = loadCluster();
  try {
    const { stdout } = await run(binary, ['--kubeconfig', KUBECONFIG, ...args], {
      env: { ...process.env, HOME: dir },
    });
    return stdout.trim();
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${binary} ${args.join(' ')}: ${e.stderr ?? e.message}`);
  }
}

async function readFip(name: string): Promise<Fip> {
  return (await fips.getClusterCustomObject({ ...FIP, name })) as Fip;
}

/** What a write the API server refused says, instead of client-node's bare "HTTP-Code: 422". */
async function accepted<T>(what: string, call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw new Error(`${what}: ${describeError(err)}`);
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floatip-e2e-galaxy-'));
  await prepareFile([]);
  await applyCrds();
});

afterAll(async () => {
  await cleanUpFile([]);
  await rm(dir, { recursive: true, force: true });
});

scenario(
  'E2E-G1 galaxy client-go: create with attribute "", then GET and PUT as updateFloatingIP',
  async () => {
    const spec = {
      key: 'pool__reserved-for-node_',
      attribute: '',
      policy: 2,
      updateTime: '2024-01-30T07:30:59Z',
    };
    await accepted(
      'create',
      fips.createClusterCustomObject({ ...FIP, body: goClientObject(GO_CLIENT_IP, spec) }),
    );
    expect((await readFip(GO_CLIENT_IP)).spec).toEqual(spec);

    // updateFloatingIP: GET the object, replace key/attribute/policy/updateTime, PUT it whole
    const updates: Record<string, unknown>[] = [
      { key: 'dp_ns1_app_', attribute: '', policy: 1, updateTime: '2024-01-30T07:31:00Z' },
      {
        key: 'dp_ns1_app_app-abc12-xyz34',
        attribute: '{"NodeName":"node3","Uid":"6f1c"}',
        policy: 1,
        updateTime: '2024-01-30T07:31:01Z',
      },
      // parked again: galaxy clears the attribute
      { key: 'dp_ns1_app_', attribute: '', policy: 2, updateTime: '2024-01-30T07:31:02Z' },
    ];
    for (const update of updates) {
      const current = await readFip(GO_CLIENT_IP);
      const body = { ...current, spec: { ...current.spec, ...update } };
      await accepted(
        `update to ${JSON.stringify(update)}`,
        fips.replaceClusterCustomObject({ ...FIP, name: GO_CLIENT_IP, body }),
      );
      expect((await readFip(GO_CLIENT_IP)).spec).toEqual(update);
    }

    // an older galaxy's type also sends `subnet` (""): pruned, the write accepted
    const current = await readFip(GO_CLIENT_IP);
    await accepted(
      'update with subnet',
      fips.replaceClusterCustomObject({
        ...FIP,
        name: GO_CLIENT_IP,
        body: { ...current, spec: { ...current.spec, key: 'pool__reserved-for-node_', subnet: '' } },
      }),
    );
    expect((await readFip(GO_CLIENT_IP)).spec).toEqual({ ...updates[2], key: 'pool__reserved-for-node_' });
  },
);

scenario(
  'E2E-G2 galaxy docs: kubectl apply of the reserved-IP YAML, applied again, then changed',
  async () => {
    const file = join(dir, 'reserved.yaml');
    await writeFile(file, reservedYaml(DOCS_IP, 'pool__reserved-for-node_'));
    const name = `floatingip.galaxy.k8s.io/${DOCS_IP}`;
    const { KUBECTL } = loadCluster();
    // kubectl v1.20 (galaxy's era) and today's, each with its defaults (its own validation included)
    expect(await kubectl(KUBECTL, ['apply', '-f', file])).toBe(`${name} created`);
    expect(await kubectl(KUBECTL, ['apply', '-f', file])).toBe(`${name} unchanged`);
    expect(await kubectl(KUBECTL_NOW, ['apply', '-f', file])).toBe(`${name} unchanged`);
    await writeFile(file, reservedYaml(DOCS_IP, 'pool__reserved-for-node2_'));
    expect(await kubectl(KUBECTL_NOW, ['apply', '-f', file])).toBe(`${name} configured`);
    await writeFile(file, reservedYaml(DOCS_IP, 'pool__reserved-for-node_'));
    expect(await kubectl(KUBECTL, ['apply', '-f', file])).toBe(`${name} configured`);
    const stored = await readFip(DOCS_IP);
    expect(stored.spec).toEqual({
      key: 'pool__reserved-for-node_',
      attribute: '',
      policy: 2,
      updateTime: '2020-01-01T00:00:00Z',
    });
    // kubectl replace sends the whole object back, as a user editing it would
    expect(await kubectl(KUBECTL, ['replace', '-f', file])).toBe(`${name} replaced`);
  },
);

scenario('E2E-G3 floatip reads galaxy-written objects: no node, no pod; reserved by its label', async () => {
  for (const ip of [GO_CLIENT_IP, DOCS_IP]) {
    const decoded = fromFloatingIPObject(await readFip(ip));
    expect(decoded).toMatchObject({
      ok: true,
      record: { ip, key: 'pool__reserved-for-node_', policy: 2, nodeName: '', podUid: '' },
    });
  }
  expect(fromFloatingIPObject(await readFip(DOCS_IP))).toMatchObject({ record: { reserved: true } });
  if (!supportsApiPort()) return;
  const floatip = await startFloatip();
  try {
    const res = await fetch(`http://127.0.0.1:${floatip.apiPort}/v1/ip?poolName=reserved-for-node`);
    const body = (await res.json()) as { content: { ip: string; releasable?: true }[] };
    // `releasable` is omitted unless true (docs/galaxy.md#the-floatingip-item)
    expect(body.content.map((c) => [c.ip, c.releasable === true])).toEqual([
      [GO_CLIENT_IP, true], // parked at a pool: releasable
      [DOCS_IP, false], // labelled reserved
    ]);
  } finally {
    await floatip.stop();
  }
});
