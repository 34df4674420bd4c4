// What floatip needs to know about a pod's workload: does it exist, how many replicas, is a
// Deployment rolling out (and how far it may surge), which custom kinds are scalable (spec §5.2:
// a CRD with a scale subresource, read at the CRD's served version, not a hard-coded one, §12.9).
import {
  ApiextensionsV1Api,
  type KubeConfig,
  type V1CustomResourceDefinition,
  type V1Deployment,
} from '@kubernetes/client-node';
import { type AllocationKey, ReleasePolicy, type WorkloadFacts } from '../ipam/index.js';
import type { ClusterCache } from '../kube/cluster.js';
import { CustomResourceClient } from '../kube/custom-resources.js';
import { Reflector } from '../kube/reflector.js';
import type { Logger } from '../log.js';
import type { AppLimit } from '../extender/extender.js';
import type { PoolStore } from '../store/pool-store.js';

interface ScalableKind {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/** A Deployment's rollout: whether it is in progress, and how many pods it may run above replicas. */
export interface Rollout {
  readonly replicas: number;
  readonly rolling: boolean;
  readonly maxSurge: number;
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
    const api = kubeConfig.makeApiClient(ApiextensionsV1Api);
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

  rollout(namespace: string, name: string): Rollout | undefined {
    const deployment = this.cluster.deployments.get(namespace, name);
    return deployment ? rolloutOf(deployment) : undefined;
  }

  /**
   * How many pods of an app with a non-default policy may hold addresses: a Pool object's size
   * caps all its pods; otherwise the Deployment's replicas, plus its maxSurge while it rolls out so
   * that a rolling update can always make progress (galaxy deadlocks at 1-3 replicas, §5.5).
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
    const rollout = this.rollout(key.namespace, key.appName);
    const replicas = rollout?.replicas ?? 0;
    const limit = rollout ? replicas + (rollout.rolling ? rollout.maxSurge : 0) : 0;
    return {
      limit,
      countPrefix: key.poolAppPrefix,
      reached: (used) =>
        `deployment ${key.appName} has allocated ${used} ips with replicas of ${replicas}` +
        `${limit > replicas ? ` (+${limit - replicas} surge during its rollout)` : ''}, wait for releasing`,
    };
  }

  /** galaxy's supportReserveIPPolicy (spec §5.2): why a policy cannot apply to this pod, or undefined. */
  supportsReservation(key: AllocationKey, policy: ReleasePolicy): string | undefined {
    if (key.isDeployment() || key.isStatefulSet()) return undefined;
    const suffix = key.podName.slice(key.podName.lastIndexOf('-') + 1);
    if (!/^-?\d+$/.test(suffix)) {
      return "pod name doesn't match '.*-[0-9]*$', assume its parent is not a stateful workload";
    }
    if (policy === ReleasePolicy.Never) return undefined;
    return this.isScalable(key.typePrefix) ? undefined : 'parent workload has no replicas';
  }

  /** The facts a release decision needs about the workload of a gone pod's key. */
  async factsFor(key: AllocationKey, policy: ReleasePolicy): Promise<WorkloadFacts> {
    if (key.isDeployment()) {
      const rollout = this.rollout(key.namespace, key.appName);
      return rollout
        ? { exists: true, replicas: rollout.replicas, rollingOut: rollout.rolling }
        : { exists: false, replicas: 0 };
    }
    const unsupported =
      policy === ReleasePolicy.PodDelete ? undefined : this.supportsReservation(key, policy);
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
