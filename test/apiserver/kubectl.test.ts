// Real kubectl (v1.32) with its defaults against the server: discovery fallback, OpenAPI v3 and
// server-side field validation, Table output, get/create/apply/edit/describe/delete of every kind
// floatip cares about. Where kubectl is not installed these cases say so on the console and do not run.
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  expect(table.split('\n')[0]).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/);
  expect(table.split('\n')[1]).toMatch(/^demo-node-1\s+Ready\s+<none>\s+\d+s\s+v1\.32\.0$/);
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
  'apply (client-side, with its last-applied annotation) creates, then patches, every kind; create of an existing object fails',
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
    const applied = JSON.parse(
      await ok([
        'get',
        'fip',
        '10.0.100.11',
        '-o',
        "jsonpath={.metadata.annotations['kubectl\\.kubernetes\\.io/last-applied-configuration']}",
      ]),
    ) as { spec: { policy: number } };
    expect(applied.spec.policy).toBe(2);
    for (const m of Object.values(changed)) {
      const file = JSON.stringify(m);
      const res = await kubectl.apply(file, 'create');
      expect(res.code).not.toBe(0);
    }
    expect(await ok(['delete', 'fip', '10.0.100.11'])).toContain('deleted');
  },
);

withKubectl('create configmap (a protobuf body) and create namespace', async () => {
  expect(await ok(['create', 'configmap', 'cm-lit', '--from-literal=a=b', '--from-literal=c=d'])).toBe(
    'configmap/cm-lit created\n',
  );
  expect(await ok(['get', 'cm', 'cm-lit', '-o', 'jsonpath={.data}'])).toBe('{"a":"b","c":"d"}');
  expect(await ok(['get', 'cm', 'cm-lit'])).toMatch(/^NAME\s+DATA\s+AGE\ncm-lit\s+2\s+\d+s\n$/);
  expect(await ok(['create', 'namespace', 'ns-kubectl'])).toBe('namespace/ns-kubectl created\n');
  expect(await ok(['get', 'ns', 'ns-kubectl', '--no-headers'])).toMatch(/^ns-kubectl\s+Active\s+\d+s\n$/);
  await ok(['delete', 'cm', 'cm-lit']);
  await ok(['delete', 'ns', 'ns-kubectl']);
});

withKubectl(
  'an unknown field is refused as kube-apiserver refuses it (strict field validation)',
  async () => {
    const pod = { ...manifests.pod, metadata: { ...manifests.pod.metadata, name: 'typo-pod' } };
    pod.spec = { containers: [{ name: 'c', image: 'nginx', imagePullPolicyy: 'Always' } as never] };
    const res = await kubectl.apply(JSON.stringify(pod), 'create');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.containers[0].imagePullPolicyy"',
    );
    const fip = { ...manifests.floatingip, spec: { ...manifests.floatingip.spec, subnet: '10.0.0.0/24' } };
    const applied = await kubectl.apply(JSON.stringify(fip));
    expect(applied.code).toBe(1);
    expect(applied.stderr).toContain('strict decoding error: unknown field "spec.subnet"');
    expect((await kubectl.run(['get', 'fip', '10.0.100.11'])).code).toBe(1);
  },
);

withKubectl('edit with KUBE_EDITOR, get with the printer columns, describe, delete', async () => {
  expect((await kubectl.apply(JSON.stringify(manifests.floatingip))).code).toBe(0);
  const editor = join(tmpdir(), `floatip-editor-${process.pid}.sh`);
  await writeFile(editor, '#!/bin/sh\nsed -i "s/policy: 1/policy: 2/" "$1"\n', { mode: 0o755 });
  try {
    const edited = await kubectl.run(['edit', 'fip', '10.0.100.11'], { KUBE_EDITOR: editor });
    expect({ code: edited.code, out: edited.stdout, err: edited.stderr }).toEqual({
      code: 0,
      out: 'floatingip.galaxy.k8s.io/10.0.100.11 edited\n',
      err: '',
    });
  } finally {
    await rm(editor, { force: true });
  }
  const [head, row] = (await ok(['get', 'fip'])).split('\n');
  expect(head).toMatch(/^NAME\s+KEY\s+POLICY\s+NODE\s+POD\s+UPDATED\s+AGE$/);
  expect(row).toMatch(/^10\.0\.100\.11\s+sts_default_web_web-0\s+2\s+\S+\s+\d+s$/);
  const wide = (await ok(['get', 'fip', '-o', 'wide'])).split('\n')[0];
  expect(wide).toMatch(/^NAME\s+KEY\s+POLICY\s+NODE\s+POD\s+ATTRIBUTE\s+UPDATED\s+AGE$/);
  const described = await ok(['describe', 'fip', '10.0.100.11']);
  expect(described).toMatch(/^Name:\s+10\.0\.100\.11$/m);
  expect(described).toMatch(/^\s+Key:\s+sts_default_web_web-0$/m);
  expect(await ok(['describe', 'node', 'demo-node-1'])).toMatch(/^Name:\s+demo-node-1$/m);
  expect(await ok(['delete', 'fip', '10.0.100.11'])).toBe('floatingip.galaxy.k8s.io "10.0.100.11" deleted\n');
});

withKubectl('pods and deployments print kube-apiserver’s columns, wide ones with -o wide', async () => {
  expect(
    (
      await kubectl.apply(
        JSON.stringify({ ...manifests.pod, metadata: { name: 'cols', namespace: 'default' } }),
      )
    ).code,
  ).toBe(0);
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'c', image: 'nginx' }] },
      },
    },
  };
  expect((await kubectl.apply(JSON.stringify(deployment))).code).toBe(0);
  expect(await ok(['get', 'pod', 'cols'])).toMatch(
    /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\ncols\s+0\/1\s+Pending\s+0\s+\d+s\n$/,
  );
  expect((await ok(['get', 'pod', 'cols', '-o', 'wide'])).split('\n')[0]).toMatch(
    /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/,
  );
  expect(await ok(['get', 'deploy', 'web', '-o', 'wide'])).toMatch(
    /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR\nweb\s+0\/2\s+0\s+0\s+\d+s\s+c\s+nginx\s+app=web\n$/,
  );
  expect((await ok(['get', 'nodes', '-o', 'wide'])).split('\n')[1]).toMatch(
    /^demo-node-1\s+Ready\s+<none>\s+\d+s\s+v1\.32\.0\s+10\.0\.1\.11\s+<none>\s+/,
  );
  await ok(['delete', 'pod', 'cols']);
  await ok(['delete', 'deploy', 'web']);
});

withKubectl('get -w prints each change as a row of the same table, as against kube-apiserver', async () => {
  // the watch ends after its timeout; the pod is created while it runs
  const watching = kubectl.run(['get', 'pods', '-w', '--request-timeout=4s']);
  await new Promise((r) => setTimeout(r, 1500));
  expect(
    (
      await kubectl.apply(
        JSON.stringify({ ...manifests.pod, metadata: { name: 'watched', namespace: 'default' } }),
      )
    ).code,
  ).toBe(0);
  const { stdout } = await watching;
  // one header (the list's, or the first event's when nothing was there), then rows of its columns:
  // a watch served as JSON made kubectl print a second header of NAME and AGE alone
  expect(stdout.match(/^NAME\b.*$/gm)).toEqual([
    expect.stringMatching(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/),
  ]);
  expect(stdout).toMatch(/^watched\s+0\/1\s+Pending\s+0\s+\d+s$/m);
  await ok(['delete', 'pod', 'watched']);
});
