// Nodes for a cluster without kubelets: plain API objects that carry the status a kubelet would
// have posted, since the scheduler filters out a node without `status.allocatable`.
import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { clusterKubeConfig, ENI_IP } from './cluster.js';
import { describeError, isNotFound } from './kube-errors.js';

export const DEFAULT_ALLOCATABLE: Readonly<Record<string, string>> = {
  cpu: '4',
  memory: '8Gi',
  pods: '110',
  [ENI_IP]: '8',
};

export interface NodeOptions {
  readonly kubeConfig?: KubeConfig;
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * Creates nodes `names[i]` with InternalIP(s) `internalIPs[i]` (one address, or several in the
 * order the node reports them), Ready, and `allocatable` over DEFAULT_ALLOCATABLE (capacity is
 * the same). Labels: kubernetes.io/hostname plus `options.labels`.
 */
export async function createNodes(
  names: readonly string[],
  internalIPs: readonly (string | readonly string[])[],
  allocatable: Readonly<Record<string, string>> = {},
  options: NodeOptions = {},
): Promise<V1Node[]> {
  if (names.length !== internalIPs.length) {
    throw new Error(`createNodes: ${names.length} names but ${internalIPs.length} InternalIP entries`);
  }
  const api = (options.kubeConfig ?? clusterKubeConfig()).makeApiClient(CoreV1Api);
  const resources = { ...DEFAULT_ALLOCATABLE, ...allocatable };
  const now = new Date();
  return Promise.all(
    names.map(async (name, i) => {
      const ips = internalIPs[i] ?? [];
      const addresses = (typeof ips === 'string' ? [ips] : ips).map((address) => ({
        type: 'InternalIP',
        address,
      }));
      const body: V1Node = {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name, labels: { 'kubernetes.io/hostname': name, ...options.labels } },
        status: {
          capacity: resources,
          allocatable: resources,
          addresses: [...addresses, { type: 'Hostname', address: name }],
          conditions: [readyCondition('True', now)],
          nodeInfo: FAKE_NODE_INFO,
        },
      };
      try {
        return await api.createNode({ body });
      } catch (err) {
        throw new Error(`createNodes: creating node ${name}: ${describeError(err)}`);
      }
    }),
  );
}

export async function deleteNodes(names: readonly string[], kubeConfig?: KubeConfig): Promise<void> {
  const api = (kubeConfig ?? clusterKubeConfig()).makeApiClient(CoreV1Api);
  await Promise.all(
    names.map(async (name) => {
      try {
        await api.deleteNode({ name });
      } catch (err) {
        if (!isNotFound(err)) throw new Error(`deleteNodes: deleting node ${name}: ${describeError(err)}`);
      }
    }),
  );
}

export type ReadyStatus = 'True' | 'False' | 'Unknown';

/** The Ready condition as the kubelet (True, False) or the node lifecycle controller (Unknown) writes it. */
export function readyCondition(status: ReadyStatus, at: Date) {
  const why = {
    True: { reason: 'KubeletReady', message: 'kubelet is posting ready status' },
    False: { reason: 'KubeletNotReady', message: 'fake kubelet reports the node not ready' },
    Unknown: { reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' },
  }[status];
  return { type: 'Ready', status, ...why, lastHeartbeatTime: at, lastTransitionTime: at };
}

const FAKE_NODE_INFO = {
  architecture: 'amd64',
  bootID: '',
  containerRuntimeVersion: 'fake://0',
  kernelVersion: '',
  kubeProxyVersion: 'v1.20.2',
  kubeletVersion: 'v1.20.2',
  machineID: '',
  operatingSystem: 'linux',
  osImage: 'floatip e2e fake node',
  systemUUID: '',
};
