// The demo seed is data other code reuses: check its shape where floatip depends on it.
import {
  DEMO_FLOATINGIP_POOLS,
  DEMO_NODES,
  DEMO_POOL,
  demoSeed,
  ENI_IP_RESOURCE,
  FLOATINGIP_CONFIGMAP,
  FLOATINGIP_CRD,
  POOL_CRD,
} from '../../src/apiserver/index.js';
import { withServer } from './helpers.js';

test('four nodes in two node subnets, one with an IPv6 InternalIP, all with allocatable eni-ip', () => {
  const ips = DEMO_NODES.map((n) =>
    ((n.status as { addresses: { type: string; address: string }[] }).addresses ?? [])
      .filter((a) => a.type === 'InternalIP')
      .map((a) => a.address),
  );
  expect(ips).toEqual([['10.0.1.11', 'fd00:1::11'], ['10.0.1.12'], ['10.0.2.11'], ['10.0.2.12']]);
  for (const n of DEMO_NODES) {
    expect(Object.keys((n.status as { allocatable: object }).allocatable)).toEqual([
      'cpu',
      'memory',
      'pods',
      ENI_IP_RESOURCE,
    ]);
  }
});

test('the config map holds the pools as a galaxy-format JSON string', () => {
  const data = FLOATINGIP_CONFIGMAP.data as { floatingips: string };
  expect(JSON.parse(data.floatingips)).toEqual(DEMO_FLOATINGIP_POOLS);
  expect(DEMO_FLOATINGIP_POOLS.map((p) => p.subnet)).toEqual([
    '10.0.100.0/24',
    '10.0.101.0/24',
    'fd00:100::/64',
  ]);
  expect(FLOATINGIP_CONFIGMAP.metadata).toEqual({ name: 'floatingip-config', namespace: 'kube-system' });
});

test('CRDs as galaxy-ipam defines them, and a demo Pool', () => {
  expect(FLOATINGIP_CRD.spec).toMatchObject({
    group: 'galaxy.k8s.io',
    scope: 'Cluster',
    names: { kind: 'FloatingIP', plural: 'floatingips', shortNames: ['fip'] },
  });
  expect(POOL_CRD.spec).toMatchObject({
    group: 'galaxy.k8s.io',
    scope: 'Namespaced',
    names: { kind: 'Pool', plural: 'pools' },
  });
  expect(DEMO_POOL).toMatchObject({
    metadata: { name: 'demo-pool', namespace: 'kube-system' },
    size: 4,
    preAllocateIP: false,
  });
});

test('the exported data is frozen; demoSeed() hands out fresh copies', () => {
  expect(Object.isFrozen(DEMO_NODES[0]?.metadata)).toBe(true);
  const a = demoSeed();
  const b = demoSeed();
  a[0]!.metadata!.name = 'changed';
  expect(b[0]?.metadata?.name).toBe('default');
  expect(a.map((o) => o.kind)).toEqual([
    'Namespace',
    'Namespace',
    'CustomResourceDefinition',
    'CustomResourceDefinition',
    'Node',
    'Node',
    'Node',
    'Node',
    'ConfigMap',
    'Pool',
  ]);
});

test('seed: an object list seeds exactly those objects; an unknown kind is a clear error', async () => {
  const server = await withServer({ seed: [POOL_CRD, DEMO_POOL, FLOATINGIP_CONFIGMAP] });
  try {
    expect(server.revision()).toBe(3);
  } finally {
    await server.close();
  }
  await expect(
    withServer({ seed: [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }] }),
  ).rejects.toThrow(/seed: no served resource for apiVersion v1 kind Secret \(s\)/);
});
