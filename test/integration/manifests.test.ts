// manifests/ and crds/ apply cleanly (kubectl apply --dry-run=client, then for real) on the
// embedded API server, and say what the code does: the ConfigMap parses, the scheduler config
// points at the extender, the ClusterRole grants what floatip calls.
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
const docs = (file: string) => parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as Manifest);

test('kubectl apply --dry-run=client, then apply, takes every manifest and CRD', async () => {
  const dry = await kubectl(server, [
    'apply',
    '--dry-run=client',
    '--validate=false',
    '-f',
    'crds/',
    '-f',
    'manifests/',
  ]);
  expect(dry).toMatch(
    /customresourcedefinition.apiextensions.k8s.io\/floatingips.galaxy.k8s.io created \(dry run\)/,
  );
  expect(dry).toMatch(/deployment.apps\/floatip created \(dry run\)/);
  const real = await kubectl(server, ['apply', '--validate=false', '-f', 'crds/', '-f', 'manifests/']);
  expect(real).toMatch(/clusterrole.rbac.authorization.k8s.io\/floatip created/);
  expect(real).toMatch(/configmap\/floatingip-config created/);
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

test('the ClusterRole grants the writes floatip makes, and no more than it uses', () => {
  const role = docs('manifests/rbac.yaml').find((d) => d.kind === 'ClusterRole')!;
  const grants = new Set<string>();
  for (const rule of role.rules)
    for (const g of rule.apiGroups)
      for (const r of rule.resources) for (const v of rule.verbs) grants.add(`${g}/${r}/${v}`);
  for (const needed of [
    'galaxy.k8s.io/floatingips/create',
    'galaxy.k8s.io/floatingips/patch',
    'galaxy.k8s.io/floatingips/delete',
    '/pods/binding/create',
    '/pods/patch',
    'coordination.k8s.io/leases/update',
    '/events/create',
    'apiextensions.k8s.io/customresourcedefinitions/create',
  ]) {
    expect(grants.has(needed) ? needed : `missing ${needed}`).toBe(needed);
  }
  expect([...grants].filter((g) => g.includes('*') && !g.endsWith('*/scale/get'))).toEqual([]);
  expect(grants.has('/pods/delete')).toBe(false);
});
