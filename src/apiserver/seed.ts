// The demo cluster a fresh `npm start` (or `floatip dev-apiserver --seed demo`) begins with: two namespaces,
// floatip's two CRDs, four nodes in two node subnets, the galaxy-format pool config and one Pool.
// Exported as data so tests and fixtures can reuse it.
import {
  FLOATINGIP_CRD as FLOATINGIP_CRD_DEFINITION,
  POOL_CRD as POOL_CRD_DEFINITION,
} from '../kube/crds.js';
import type { KubeObject } from './types.js';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

// the CRDs as floatip ships them (crds/*.yaml): one definition for the seed, the operator and floatip
export const FLOATINGIP_CRD: Readonly<KubeObject> = deepFreeze(
  structuredClone(FLOATINGIP_CRD_DEFINITION) as unknown as KubeObject,
);
export const POOL_CRD: Readonly<KubeObject> = deepFreeze(
  structuredClone(POOL_CRD_DEFINITION) as unknown as KubeObject,
);

export const DEMO_NAMESPACES: readonly Readonly<KubeObject>[] = deepFreeze(
  ['default', 'kube-system'].map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
);

/** One demo node: its InternalIPs place it in a node subnet of the pool config. */
export interface DemoNodeSpec {
  name: string;
  internalIPs: string[];
  zone: string;
}

export const DEMO_NODE_SPECS: readonly DemoNodeSpec[] = deepFreeze([
  { name: 'demo-node-1', internalIPs: ['10.0.1.11', 'fd00:1::11'], zone: 'zone-a' },
  { name: 'demo-node-2', internalIPs: ['10.0.1.12'], zone: 'zone-a' },
  { name: 'demo-node-3', internalIPs: ['10.0.2.11'], zone: 'zone-b' },
  { name: 'demo-node-4', internalIPs: ['10.0.2.12'], zone: 'zone-b' },
]);

/** The extended resource galaxy-ipam's scheduler config manages; each node offers some. */
export const ENI_IP_RESOURCE = 'tke.cloud.tencent.com/eni-ip';

function demoNode(spec: DemoNodeSpec): KubeObject {
  const resources = { cpu: '4', memory: '8Gi', pods: '110', [ENI_IP_RESOURCE]: '32' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: spec.name,
      labels: {
        'kubernetes.io/hostname': spec.name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'topology.kubernetes.io/zone': spec.zone,
      },
    },
    spec: {},
    status: {
      addresses: [
        ...spec.internalIPs.map((address) => ({ type: 'InternalIP', address })),
        { type: 'Hostname', address: spec.name },
      ],
      capacity: resources,
      allocatable: resources,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'kubelet is posting ready status (floatip demo node)',
          lastHeartbeatTime: '2026-01-01T00:00:00Z',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
      nodeInfo: {
        architecture: 'amd64',
        operatingSystem: 'linux',
        kubeletVersion: 'v1.32.0',
        containerRuntimeVersion: 'containerd://1.7.0',
        kernelVersion: '6.1.0',
        osImage: 'floatip demo',
        kubeProxyVersion: 'v1.32.0',
        machineID: '',
        systemUUID: '',
        bootID: '',
      },
    },
  };
}

export const DEMO_NODES: readonly Readonly<KubeObject>[] = deepFreeze(DEMO_NODE_SPECS.map(demoNode));

/** The pool config in galaxy-ipam's format: an IPv4 pool per node subnet, and an IPv6 pool. */
export const DEMO_FLOATINGIP_POOLS = deepFreeze([
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.10~10.0.100.200'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
    vlan: 0,
  },
  {
    nodeSubnets: ['10.0.2.0/24'],
    ips: ['10.0.101.10~10.0.101.200'],
    subnet: '10.0.101.0/24',
    gateway: '10.0.101.1',
  },
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['fd00:100::10~fd00:100::ffff'],
    subnet: 'fd00:100::/64',
    gateway: 'fd00:100::1',
  },
]);

export const FLOATINGIP_CONFIG_NAMESPACE = 'kube-system';
export const FLOATINGIP_CONFIG_NAME = 'floatingip-config';
/** galaxy-ipam reads the pools from this data key, as a JSON string. */
export const FLOATINGIP_CONFIG_KEY = 'floatingips';

export const FLOATINGIP_CONFIGMAP: Readonly<KubeObject> = deepFreeze({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: FLOATINGIP_CONFIG_NAME, namespace: FLOATINGIP_CONFIG_NAMESPACE },
  data: { [FLOATINGIP_CONFIG_KEY]: JSON.stringify(DEMO_FLOATINGIP_POOLS) },
});

export const DEMO_POOL: Readonly<KubeObject> = deepFreeze({
  apiVersion: 'galaxy.k8s.io/v1alpha1',
  kind: 'Pool',
  metadata: { name: 'demo-pool', namespace: 'kube-system' },
  size: 4,
  preAllocateIP: false,
});

/** The demo seed in creation order (CRDs before their objects), as fresh mutable copies. */
export function demoSeed(): KubeObject[] {
  return structuredClone([
    ...DEMO_NAMESPACES,
    FLOATINGIP_CRD,
    POOL_CRD,
    ...DEMO_NODES,
    FLOATINGIP_CONFIGMAP,
    DEMO_POOL,
  ]) as KubeObject[];
}
