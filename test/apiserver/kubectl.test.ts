// Real kubectl (v1.32) against the server: discovery fallback, get/create/apply/delete of every kind floatip
// cares about. Where kubectl is not installed these cases say so on the console and do not run.
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { kubectlAvailable, kubectlFor, withServer, type Kubectl } from './helpers.js';

const haveKubectl = kubectlAvailable();
let server: EmbeddedApiServer;
let kubectl: Kubectl;

beforeAll(async () => {
  server = await withServer({ seed: 'demo' });
  if (haveKubectl) kubectl = await kubectlFor(server);
});
afterAll(async () => {
  await kubectl?.cleanup();
  await server.close();
});

/** Runs the case only with kubectl; otherwise logs why and returns (a visible message, not a skip). */
function withKubectl(name: string, body: () => Promise<void>): void {
  test(
    name,
    async () => {
      if (!haveKubectl) {
        console.log(`kubectl case "${name}" not run: no kubectl`);
        return;
      }
      await body();
    },
    60_000,
  );
}

async function ok(args: string[]): Promise<string> {
  const res = await kubectl.run(args);
  if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${res.code}): ${res.stderr}`);
  return res.stdout;
}

withKubectl('get nodes, namespaces, the config map, the pools and the CRDs of the demo seed', async () => {
  expect(await ok(['get', 'nodes', '-o', 'name'])).toBe(
    'node/demo-node-1\nnode/demo-node-2\nnode/demo-node-3\nnode/demo-node-4\n',
  );
  expect(await ok(['get', 'ns', '-o', 'name'])).toBe('namespace/default\nnamespace/kube-system\n');
  const cm = JSON.parse(
    await ok(['get', 'configmap', 'floatingip-config', '-n', 'kube-system', '-o', 'json']),
  ) as {
    data: { floatingips: string };
  };
  expect(JSON.parse(cm.data.floatingips)).toHaveLength(3);
  expect(await ok(['get', 'pools', '-A', '-o', 'name'])).toBe('pool.galaxy.k8s.io/demo-pool\n');
  expect(await ok(['get', 'crd', '-o', 'name'])).toBe(
    'customresourcedefinition.apiextensions.k8s.io/floatingips.galaxy.k8s.io\n' +
      'customresourcedefinition.apiextensions.k8s.io/pools.galaxy.k8s.io\n',
  );
  const table = await ok(['get', 'nodes']);
  expect(table.split('\n')[0]).toMatch(/^NAME\s+AGE/);
});

const manifests = {
  node: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'kubectl-node', labels: { a: '1' } } },
  pod: {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'kubectl-pod', namespace: 'default', labels: { app: 'k' } },
    spec: { containers: [{ name: 'c', image: 'nginx', env: [{ name: 'A', value: '1' }] }] },
  },
  configmap: {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'kubectl-cm', namespace: 'default' },
    data: { k: 'v' },
  },
  floatingip: {
    apiVersion: 'galaxy.k8s.io/v1alpha1',
    kind: 'FloatingIP',
    metadata: { name: '10.0.100.11' },
    spec: {
      key: 'sts_default_web_web-0',
      attribute: '{"NodeName":"","Uid":""}',
      policy: 1,
      updateTime: '2026-01-01T00:00:00Z',
    },
  },
  pool: {
    apiVersion: 'galaxy.k8s.io/v1alpha1',
    kind: 'Pool',
    metadata: { name: 'kubectl-pool', namespace: 'kube-system' },
    size: 2,
    preAllocateIP: false,
  },
};

withKubectl('create, get and delete a node, a pod, a configmap, a FloatingIP and a Pool', async () => {
  const created = [
    'node/kubectl-node created',
    'pod/kubectl-pod created',
    'configmap/kubectl-cm created',
    'floatingip.galaxy.k8s.io/10.0.100.11 created',
    'pool.galaxy.k8s.io/kubectl-pool created',
  ];
  const values = Object.values(manifests);
  for (let i = 0; i < values.length; i++) {
    const res = await kubectl.apply(JSON.stringify(values[i]), 'create');
    expect({ code: res.code, out: res.stdout.trim(), err: res.stderr }).toEqual({
      code: 0,
      out: created[i],
      err: '',
    });
  }
  const dup = await kubectl.apply(JSON.stringify(manifests.configmap), 'create');
  expect(dup.code).not.toBe(0);
  expect(dup.stderr).toContain('configmaps "kubectl-cm" already exists');

  expect(await ok(['get', 'fip', '-o', 'name'])).toBe('floatingip.galaxy.k8s.io/10.0.100.11\n');
  expect(await ok(['get', 'fip', '10.0.100.11', '-o', 'jsonpath={.spec.key}'])).toBe('sts_default_web_web-0');
  expect(await ok(['get', 'pool', 'kubectl-pool', '-n', 'kube-system', '-o', 'jsonpath={.size}'])).toBe('2');
  expect(await ok(['get', 'pods', '-l', 'app=k', '-o', 'name'])).toBe('pod/kubectl-pod\n');
  expect(await ok(['get', 'pods', '--field-selector', 'status.phase=Pending', '-o', 'name'])).toBe(
    'pod/kubectl-pod\n',
  );

  expect(await ok(['delete', 'fip', '10.0.100.11'])).toContain('"10.0.100.11" deleted');
  expect(await ok(['delete', 'pool', 'kubectl-pool', '-n', 'kube-system'])).toContain('deleted');
  expect(await ok(['delete', 'pod', 'kubectl-pod'])).toContain('deleted');
  expect(await ok(['delete', 'configmap', 'kubectl-cm'])).toContain('deleted');
  expect(await ok(['delete', 'node', 'kubectl-node'])).toContain('deleted');
  const gone = await kubectl.run(['get', 'fip', '10.0.100.11']);
  expect(gone.code).not.toBe(0);
  expect(gone.stderr).toContain('floatingips.galaxy.k8s.io "10.0.100.11" not found');
});

withKubectl(
  'apply --validate=false creates, then patches, every kind; create of an existing object fails',
  async () => {
    for (const m of Object.values(manifests)) {
      const res = await kubectl.apply(JSON.stringify(m));
      expect(res.code).toBe(0);
      expect(res.stdout).toContain('created');
    }
    const changed = {
      node: { ...manifests.node, metadata: { ...manifests.node.metadata, labels: { a: '2' } } },
      pod: {
        ...manifests.pod,
        spec: { containers: [{ name: 'c', image: 'nginx', env: [{ name: 'A', value: '2' }] }] },
      },
      configmap: { ...manifests.configmap, data: { k: 'v2' } },
      floatingip: { ...manifests.floatingip, spec: { ...manifests.floatingip.spec, policy: 2 } },
      pool: { ...manifests.pool, size: 3 },
    };
    for (const m of Object.values(changed)) {
      const res = await kubectl.apply(JSON.stringify(m));
      expect({ code: res.code, err: res.stderr }).toEqual({ code: 0, err: '' });
      expect(res.stdout).toContain('configured');
    }
    expect(await ok(['get', 'node', 'kubectl-node', '-o', 'jsonpath={.metadata.labels.a}'])).toBe('2');
    expect(await ok(['get', 'pod', 'kubectl-pod', '-o', 'jsonpath={.spec.containers[0].env[0].value}'])).toBe(
      '2',
    );
    expect(await ok(['get', 'cm', 'kubectl-cm', '-o', 'jsonpath={.data.k}'])).toBe('v2');
    expect(await ok(['get', 'fip', '10.0.100.11', '-o', 'jsonpath={.spec.policy}'])).toBe('2');
    expect(await ok(['get', 'pool', 'kubectl-pool', '-n', 'kube-system', '-o', 'jsonpath={.size}'])).toBe(
      '3',
    );
    const unchanged = await kubectl.apply(JSON.stringify(changed.floatingip));
    expect(unchanged.stdout).toContain('unchanged');
    for (const m of Object.values(changed)) {
      const file = JSON.stringify(m);
      const res = await kubectl.apply(file, 'create');
      expect(res.code).not.toBe(0);
    }
    expect(await ok(['delete', 'fip', '10.0.100.11'])).toContain('deleted');
  },
);
