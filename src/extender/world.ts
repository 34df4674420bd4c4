// The extender's view of the cluster, backed by the caches and the API server: pods, nodes, how
// many pods an app may hold addresses for, which workloads can keep addresses by name, and binding.
import {
  CoreV1Api,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import type { Workloads } from '../controller/workloads.js';
import type { AllocationKey, ReleasePolicy } from '../ipam/index.js';
import type { ClusterCache } from '../kube/cluster.js';
import { kubeError } from '../kube/custom-resources.js';
import type { AppLimit, ExtenderWorld } from './extender.js';

export class ClusterWorld implements ExtenderWorld {
  private readonly core: CoreV1Api;

  constructor(
    kubeConfig: KubeConfig,
    private readonly cluster: ClusterCache,
    private readonly workloads: Workloads,
    /** Called before binding; throws to refuse it (a replica that is not the leader). */
    private readonly guard: () => void = () => undefined,
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

  appLimit(key: AllocationKey): AppLimit {
    return this.workloads.appLimit(key);
  }

  supportsReservation(key: AllocationKey, policy: ReleasePolicy): string | undefined {
    return this.workloads.supportsReservation(key, policy);
  }

  async bind(
    namespace: string,
    name: string,
    uid: string,
    node: string,
    annotations: Record<string, string>,
  ): Promise<void> {
    this.guard();
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

  /**
   * Merges these annotations into the pod, only while it is the incarnation `uid` (the UID in the
   * patch must match, or the API server refuses it).
   */
  async annotatePod(
    namespace: string,
    name: string,
    uid: string,
    annotations: Record<string, string>,
  ): Promise<void> {
    this.guard();
    try {
      await this.core.patchNamespacedPod(
        { namespace, name, body: { metadata: { uid, annotations } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    } catch (err) {
      throw kubeError(err, `annotate pod ${namespace}/${name}`);
    }
  }
}
