// manifests/ and crds/ apply cleanly (kubectl apply --dry-run=client, then for real) on the
// embedded API server, both kustomize overlays build, and the manifests say what the code does:
// the ConfigMap parses, the scheduler config points at the extender over mutual TLS, the roles grant
// what floatip calls. (test/e2e/manifests.test.ts applies them to the real control plane.)
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parse, parseAllDocuments } from 'yaml';
import { type EmbeddedApiServer, startApiServer } from '../../src/apiserver/index.js';
import { parsePoolConfig } from '../../src/ipam/index.js';
import { kubectl } from './helpers.js';

let server: EmbeddedApiServer;
beforeAll(async () => {
  server = await startApiServer({
    port: 0,
    seed: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } }],
    log: () => undefined,
  });
});
afterAll(() => server.close());

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- YAML of many shapes, read field by field
type Manifest = Record<string, any>;
/** A command with `input` on stdin. */
function run(command: string, args: string[], input: string): Promise<{ stdout: string }> {
  return new Promise((done, fail) => {
    const child = execFile(command, args, (err, stdout) => (err ? fail(err) : done({ stdout })));
    child.stdin?.end(input);
  });
}
const docs = (file: string) => parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as Manifest);

// the embedded server has no RBAC, PriorityClass or NetworkPolicy kinds: the whole overlay is
// applied (--dry-run=server) on the real control plane, test/e2e/manifests.test.ts
test('kubectl apply --dry-run=client, then apply, takes the CRDs, the configuration and the scheduler configuration', async () => {
  const files = ['-f', 'crds/', '-f', 'manifests/scheduler-config.yaml', '-f', 'manifests/configmap.yaml'];
  const dry = await kubectl(server, ['apply', '--dry-run=client', '--validate=false', ...files]);
  expect(dry).toMatch(
    /customresourcedefinition.apiextensions.k8s.io\/floatingips.galaxy.k8s.io created \(dry run\)/,
  );
  const real = await kubectl(server, ['apply', '--validate=false', ...files]);
  expect(real).toMatch(/configmap\/floatip-scheduler-config created/);
  expect(real).toMatch(/configmap\/floatingip-config created/);
});

test('both overlays build: dev one replica, ha two spread over nodes, both with the deployable settings', async () => {
  for (const [overlay, replicas] of [
    ['dev', 1],
    ['ha', 2],
  ] as const) {
    const built = parseAllDocuments(
      await kubectl(server, ['kustomize', `manifests/overlays/${overlay}`]),
    ).map((d) => d.toJS() as Manifest);
    // no floatingip-config: applying an overlay on a cluster that ran galaxy-ipam keeps its ranges
    const kinds = built.map((d) => d.kind).sort();
    expect(kinds).toEqual(
      [
        'ClusterRole',
        'ClusterRoleBinding',
        'Deployment',
        'NetworkPolicy',
        'PodDisruptionBudget',
        'PriorityClass',
        'Role',
        'RoleBinding',
        'Service',
        'ServiceAccount',
      ].sort(),
    );
    const deployment = built.find((d) => d.kind === 'Deployment')!;
    expect(deployment.spec.replicas).toBe(replicas);
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0];
    expect(container.securityContext).toEqual({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.args).toEqual(
      expect.arrayContaining(['--api-auth=kubernetes', '--extender-client-ca-file=/etc/floatip/tls/ca.crt']),
    );
    expect(container.resources.limits).toBeDefined();
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(pod.topologySpreadConstraints[0].topologyKey).toBe('kubernetes.io/hostname');
    expect(pod.priorityClassName).toBe('floatip');
    expect(built.find((d) => d.kind === 'PodDisruptionBudget')!.spec).toMatchObject({ maxUnavailable: 1 });
  }
});

test('the example configuration is valid, and the scheduler config names the extender in both API versions', () => {
  const cm = docs('manifests/configmap.yaml')[0]!;
  expect(parsePoolConfig(cm.data.floatingips).entries).toHaveLength(2);
  const scheduler = docs('manifests/scheduler-config.yaml')[0]!;
  for (const key of ['scheduler-config.yaml', 'scheduler-config-v1beta1.yaml']) {
    const config = parse(scheduler.data[key]);
    expect(config.kind).toBe('KubeSchedulerConfiguration');
    expect(config.extenders[0]).toMatchObject({
      urlPrefix: 'https://floatip.kube-system.svc:9040/v1',
      enableHTTPS: true,
      tlsConfig: {
        certFile: '/etc/floatip/tls/scheduler.crt',
        keyFile: '/etc/floatip/tls/scheduler.key',
        caFile: '/etc/floatip/tls/ca.crt',
      },
      filterVerb: 'filter',
      prioritizeVerb: 'prioritize',
      preemptVerb: 'preempt',
      bindVerb: 'bind',
      nodeCacheCapable: true,
      managedResources: [{ name: 'tke.cloud.tencent.com/eni-ip', ignoredByScheduler: false }],
    });
  }
});

test('the README’s kubeadm recipe rewrites the shipped scheduler config to the ClusterIP, its certificates mounted where tlsConfig reads them', async () => {
  const readme = readFileSync('README.md', 'utf8');
  const recipe = readme.slice(readme.indexOf('### Wiring floatip into kube-scheduler on a current cluster'));
  const sed = /sed '([^']+)'/.exec(recipe)?.[1];
  expect(sed).toBeDefined();
  const scheduler = docs('manifests/scheduler-config.yaml')[0]!;
  const { stdout } = await run('sed', [sed!], scheduler.data['scheduler-config.yaml']);
  const config = parse(stdout);
  expect(config.extenders[0].urlPrefix).toBe('https://10.96.0.40:9040/v1');
  // the address the recipe puts in the URL is the one it has the certificate name
  expect(recipe).toContain('scripts/extender-certs.sh ./certs IP:10.96.0.40');
  const dir = config.extenders[0].tlsConfig.certFile.replace(/\/[^/]+$/, '');
  expect(recipe).toContain(`mountPath: ${dir}`);
});

test('the roles grant the writes floatip makes, and nothing cluster-wide that one namespace holds', () => {
  const rbac = docs('manifests/base/rbac.yaml');
  const grants = (kind: string) => {
    const out = new Set<string>();
    for (const rule of rbac.find((d) => d.kind === kind)!.rules)
      for (const g of rule.apiGroups)
        for (const r of rule.resources) for (const v of rule.verbs) out.add(`${g}/${r}/${v}`);
    return out;
  };
  const cluster = grants('ClusterRole');
  const kubeSystem = grants('Role');
  for (const needed of [
    'galaxy.k8s.io/floatingips/create',
    'galaxy.k8s.io/floatingips/patch',
    'galaxy.k8s.io/floatingips/delete',
    '/pods/binding/create',
    '/pods/patch',
    '/events/create',
    'apiextensions.k8s.io/customresourcedefinitions/create',
  ]) {
    expect(cluster.has(needed) ? needed : `missing ${needed}`).toBe(needed);
  }
  for (const needed of [
    'coordination.k8s.io/leases/update',
    '/configmaps/watch',
    'galaxy.k8s.io/pools/patch',
  ]) {
    expect(kubeSystem.has(needed) ? needed : `missing ${needed}`).toBe(needed);
  }
  expect([...cluster].filter((g) => g.includes('*') || /configmaps|leases|pools/.test(g))).toEqual([]);
  expect(cluster.has('/pods/delete')).toBe(false);
});
