// What floatip needs to know about a pod's workload: does it exist, how many replicas, is a
// Deployment rolling out (and how far it may surge), which custom kinds are scalable (docs/galaxy.md#support-check-supportreserveippolicy:
// a CRD with a scale subresource, read at the CRD's served version, not a hard-coded one, docs/galaxy.md#custom-workloads-read-at-v1alpha1).
import {
  ApiextensionsV1Api,
  type KubeConfig,
  type V1CustomResourceDefinition,
  type V1Deployment,
} from '@kubernetes/client-node';
import {
  type Allocation,
  type AllocationKey,
  type AppFacts,
  ReleasePolicy,
  type Rollout,
  type WorkloadFacts,
  reservationRefusal,
} from '../ipam/index.js';
import type { ClusterCache } from '../kube/cluster.js';
import { CustomResourceClient } from '../kube/custom-resources.js';
import { Reflector } from '../kube/reflector.js';
import type { Logger } from '../log.js';
import type { PoolStore } from '../store/pool-store.js';
import { apiClient } from '../kube/resend.js';

interface ScalableKind {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

export function rolloutOf(deployment: V1Deployment): Rollout {
  const replicas = deployment.spec?.replicas ?? 1;
  const strategy = deployment.spec?.strategy;
  const maxSurge =
    strategy?.type === 'Recreate' ? 0 : scaled(strategy?.rollingUpdate?.maxSurge ?? '25%', replicas);
  const status = deployment.status;
  // only a controller's status says a rollout is under way; a Deployment without one is not rolling
  const rolling =
    status !== undefined &&
    ((status.observedGeneration ?? 0) < (deployment.metadata?.generation ?? 0) ||
      (status.updatedReplicas ?? 0) < replicas ||
      (status.replicas ?? 0) > (status.updatedReplicas ?? 0));
  return { replicas, rolling, maxSurge };
}

/** An int-or-percent of replicas, rounded up as the Deployment controller does for maxSurge. */
function scaled(value: number | string | object, replicas: number): number {
  if (typeof value === 'number') return value;
  const text = String(value);
  if (text.endsWith('%')) return Math.ceil((replicas * Number(text.slice(0, -1))) / 100);
  return Number(text) || 0;
}

export class Workloads {
  private readonly crds: Reflector<V1CustomResourceDefinition>;
  private scalable = new Map<string, ScalableKind>();

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly cluster: ClusterCache,
    private readonly pools: PoolStore,
    private readonly log: Logger,
  ) {
    const api = apiClient(kubeConfig, ApiextensionsV1Api);
    this.crds = new Reflector<V1CustomResourceDefinition>({
      name: 'customresourcedefinitions',
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      list: (page) => api.listCustomResourceDefinition(page),
      kubeConfig,
      log,
    });
    const refresh = () => this.refreshScalable();
    this.crds.on('add', refresh).on('update', refresh).on('delete', refresh);
  }

  start(): Promise<void> {
    return this.crds.start();
  }

  stop(): Promise<void> {
    return this.crds.stop();
  }

  /** The custom kinds as the API server has them now (Reflector.catchUp). */
  catchUp(): Promise<void> {
    return this.crds.catchUp();
  }

  /** Custom kinds with a scale subresource, by key type prefix (lower-case kind + `_`). */
  private refreshScalable(): void {
    const scalable = new Map<string, ScalableKind>();
    for (const crd of this.crds.list()) {
      const spec = crd.spec;
      const served = spec.versions.filter((v) => v.served);
      const version = served.find((v) => v.storage) ?? served[0];
      if (!version?.subresources?.scale?.specReplicasPath) continue;
      scalable.set(`${spec.names.kind.toLowerCase()}_`, {
        group: spec.group,
        version: version.name,
        plural: spec.names.plural,
        namespaced: spec.scope === 'Namespaced',
      });
    }
    this.scalable = scalable;
  }

  isScalable(typePrefix: string): boolean {
    return this.scalable.has(typePrefix);
  }

  /**
   * What a decision about a pod of this policy waits for before it reads the workload caches:
   * nothing for the default policy, which reads none, or once they are listed; otherwise their
   * first list (the caches are followed from then on: ClusterCache.watchWorkloads).
   */
  readyFor(policy: ReleasePolicy): Promise<void> | undefined {
    if (policy === ReleasePolicy.PodDelete) return undefined;
    if (this.cluster.deployments.synced && this.cluster.statefulSets.synced) return undefined;
    return this.cluster.watchWorkloads();
  }

  /**
   * Follows the workloads if any of these addresses was decided under a policy other than the
   * default: the end of a rollout trims its app's parked addresses, and a parked address's app is
   * read when its TTL runs out. Called with what the store holds at start, and on every resync.
   */
  followFor(held: Iterable<Allocation>): Promise<void> | undefined {
    if (this.cluster.watchingWorkloads) return undefined;
    for (const a of held) if (a.policy !== ReleasePolicy.PodDelete) return this.cluster.watchWorkloads();
    return undefined;
  }

  rollout(namespace: string, name: string): Rollout | undefined {
    const deployment = this.cluster.deployments.get(namespace, name);
    return deployment ? rolloutOf(deployment) : undefined;
  }

  /** What the limit of a pod's app is computed from (ipam's appLimit): its Pool object, its Deployment. */
  appFacts(key: AllocationKey): AppFacts {
    const pool = key.pool ? this.pools.get(key.pool) : undefined;
    if (pool)
      return {
        pool: {
          name: pool.name,
          size: pool.size,
          ...(pool.unreadable ? { unreadable: pool.unreadable } : {}),
        },
      };
    const deployment = this.rollout(key.namespace, key.appName);
    return deployment ? { deployment } : {};
  }

  /** The facts a release decision needs about the workload of a gone pod's key. */
  async factsFor(key: AllocationKey, policy: ReleasePolicy): Promise<WorkloadFacts> {
    await this.cluster.watchWorkloads();
    if (key.isDeployment()) {
      const rollout = this.rollout(key.namespace, key.appName);
      return rollout
        ? { exists: true, replicas: rollout.replicas, rollingOut: rollout.rolling }
        : { exists: false, replicas: 0 };
    }
    const unsupported =
      policy === ReleasePolicy.PodDelete
        ? undefined
        : reservationRefusal(key, policy, (prefix) => this.isScalable(prefix));
    if (unsupported) return { exists: false, replicas: 0, unsupported };
    if (key.isStatefulSet()) {
      const sts = this.cluster.statefulSets.get(key.namespace, key.appName);
      return sts ? { exists: true, replicas: sts.spec?.replicas ?? 1 } : { exists: false, replicas: 0 };
    }
    const kind = this.scalable.get(key.typePrefix);
    if (!kind) return { exists: false, replicas: 0 };
    return this.scaleOf(kind, key);
  }

  /** Reads a custom workload's replicas through its scale subresource. */
  private async scaleOf(kind: ScalableKind, key: AllocationKey): Promise<WorkloadFacts> {
    const client = new CustomResourceClient(this.kubeConfig, {
      group: kind.group,
      version: kind.version,
      plural: kind.plural,
      ...(kind.namespaced ? { namespace: key.namespace } : {}),
    });
    const scale = await client.getScale(key.appName);
    return scale ? { exists: true, replicas: scale.spec?.replicas ?? 0 } : { exists: false, replicas: 0 };
  }
}
