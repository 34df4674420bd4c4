// The extender's view of the cluster, backed by the caches and the API server: pods, nodes, how
// many pods an app may hold addresses for, which workloads can keep addresses by name, and binding.
import {
  CoreV1Api,
  type KubeConfig,
  type V1Deployment,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { type AllocationKey, ReleasePolicy } from '../ipam/index.js';
import type { ClusterCache } from '../kube/cluster.js';
import { kubeError } from '../kube/custom-resources.js';
import type { PoolStore } from '../store/pool-store.js';
import type { AppLimit, ExtenderWorld } from './extender.js';

/** Custom workload kinds with a scale subresource (spec §5.2); until one is known, none. */
export interface ScalableKinds {
  isScalable(typePrefix: string): boolean;
}

export class ClusterWorld implements ExtenderWorld {
  private readonly core: CoreV1Api;

  constructor(
    kubeConfig: KubeConfig,
    private readonly cluster: ClusterCache,
    private readonly pools: PoolStore,
    private readonly scalable: ScalableKinds = { isScalable: () => false },
  ) {
    this.core = kubeConfig.makeApiClient(CoreV1Api);
  }

  pod(namespace: string, name: string): V1Pod | undefined {
    return this.cluster.pods.get(namespace, name);
  }

  async fetchPod(namespace: string, name: string): Promise<V1Pod | undefined> {
    try {
      return await this.core.readNamespacedPod({ namespace, name });
    } catch (err) {
      const e = kubeError(err, `get pod ${namespace}/${name}`);
      if (e.status === 404) return undefined;
      throw e;
    }
  }

  node(name: string): V1Node | undefined {
    return this.cluster.nodes.get(name);
  }

  async fetchNode(name: string): Promise<V1Node | undefined> {
    try {
      return await this.core.readNode({ name });
    } catch (err) {
      const e = kubeError(err, `get node ${name}`);
      if (e.status === 404) return undefined;
      throw e;
    }
  }

  /**
   * A Pool object caps all its pods (`size`); otherwise the Deployment's replicas cap its own pods
   * (spec §5.6, §6.2). A Deployment that does not exist allows none, as galaxy.
   */
  appLimit(key: AllocationKey): AppLimit {
    const pool = key.pool ? this.pools.get(key.pool) : undefined;
    if (pool) {
      return {
        limit: pool.size,
        countPrefix: key.poolPrefix,
        reached: () => `reached pool ${pool.name} size limit of ${pool.size}`,
      };
    }
    const replicas = replicasOf(this.cluster.deployments.get(key.namespace, key.appName));
    return {
      limit: replicas,
      countPrefix: key.poolAppPrefix,
      reached: (used) =>
        `deployment ${key.appName} has allocated ${used} ips with replicas of ${replicas}, wait for releasing`,
    };
  }

  /** galaxy's supportReserveIPPolicy (spec §5.2): the reason a policy cannot apply, or undefined. */
  supportsReservation(key: AllocationKey, policy: ReleasePolicy): string | undefined {
    if (key.isDeployment() || key.isStatefulSet()) return undefined;
    const suffix = key.podName.slice(key.podName.lastIndexOf('-') + 1);
    if (!/^-?\d+$/.test(suffix)) {
      return "pod name doesn't match '.*-[0-9]*$', assume its parent is not a stateful workload";
    }
    if (policy === ReleasePolicy.Never) return undefined;
    return this.scalable.isScalable(key.typePrefix) ? undefined : 'parent workload has no replicas';
  }

  async bind(
    namespace: string,
    name: string,
    uid: string,
    node: string,
    annotations: Record<string, string>,
  ): Promise<void> {
    try {
      await this.core.createNamespacedPodBinding({
        namespace,
        name,
        body: {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name, namespace, ...(uid ? { uid } : {}), annotations },
          target: { apiVersion: 'v1', kind: 'Node', name: node },
        },
      });
    } catch (err) {
      throw kubeError(err, `bind pod ${namespace}/${name} to ${node}`);
    }
  }
}

/** A Deployment's replicas (1 when unset, as the API server defaults it; 0 when there is none). */
export function replicasOf(deployment: V1Deployment | undefined): number {
  if (!deployment) return 0;
  return deployment.spec?.replicas ?? 1;
}
