// The churn's workloads: a fixed catalogue of Deployments, StatefulSets and bare pods of every
// release policy (default, immutable, never, and a Pool), each created, scaled, rolled out and
// deleted at random. Names are reused, so what `never` and Pools keep is bounded by the catalogue
// and taken again when the same app comes back.
import {
  AppsV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1PodTemplateSpec,
} from '@kubernetes/client-node';
import { GROUP_LABEL, type Group } from './groups.js';
import { POOL_ANNOTATION, RELEASE_POLICY_ANNOTATION } from './ipam-state.js';
import { describeError, httpCode } from './kube-errors.js';
import { deployment, statefulSet, type DeploymentOptions } from './workloads.js';

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export type Policy = 'default' | 'immutable' | 'never' | 'pool';
export type WorkloadKind = 'deployment' | 'statefulset' | 'pod';
export type Operation = 'create' | 'scale' | 'rollout' | 'delete';

export const CHURN_POOL = 'churn-pool';
/** Above the one pool Deployment's replicas + surge, so its pods never wait for the pool. */
export const CHURN_POOL_SIZE = 6;
const MAX_REPLICAS: Record<Exclude<WorkloadKind, 'pod'>, number> = { deployment: 4, statefulset: 3 };

export interface Workload {
  readonly kind: WorkloadKind;
  readonly name: string;
  readonly policy: Policy;
  /** As far as the driver knows (a failed call leaves it as it was). */
  exists: boolean;
  /** An operation on it is under way. */
  busy: boolean;
  revision: number;
}

/** The catalogue: 7 Deployments, 3 StatefulSets, 6 bare pods and `burst` pods for faults. */
export function catalogue(burst: number): Workload[] {
  const w = (kind: WorkloadKind, name: string, policy: Policy): Workload => ({
    kind,
    name,
    policy,
    exists: false,
    busy: false,
    revision: 0,
  });
  const out: Workload[] = [];
  for (const policy of ['default', 'immutable', 'never'] as const) {
    for (let i = 0; i < 2; i++) out.push(w('deployment', `d-${policy}-${i}`, policy));
    out.push(w('statefulset', `s-${policy}`, policy));
    // galaxy refuses `immutable` for a pod with no workload ("parent workload has no replicas"):
    // such a pod is never scheduled, by design, so the bare pods are default and never
    if (policy === 'immutable') continue;
    for (let i = 0; i < 3; i++) out.push(w('pod', `p-${policy}-${i}`, policy));
  }
  out.push(w('deployment', 'd-pool-0', 'pool'));
  for (let i = 0; i < burst; i++) out.push(w('pod', `p-burst-${i}`, 'default'));
  return out;
}

/** What every kind's pods share: one ENI IP, the workload's policy, on either churn group's nodes. */
function podOptions(w: Workload, replicas: number): DeploymentOptions {
  const annotations: Record<string, string> = { 'churn/revision': String(w.revision) };
  if (w.policy === 'pool') annotations[POOL_ANNOTATION] = CHURN_POOL;
  else if (w.policy !== 'default') annotations[RELEASE_POLICY_ANNOTATION] = w.policy;
  return { replicas, annotations, labels: { churn: w.kind } };
}

function onGroups<T extends { spec?: { template: V1PodTemplateSpec } }>(
  body: T,
  groups: readonly Group[],
): T {
  body.spec!.template.spec!.affinity = {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: GROUP_LABEL, operator: 'In', values: groups.map((g) => g.name) }] },
        ],
      },
    },
  };
  return body;
}

export class WorkloadDriver {
  private readonly apps: AppsV1Api;
  private readonly core: CoreV1Api;

  constructor(
    kc: KubeConfig,
    readonly namespace: string,
    private readonly groups: readonly Group[],
    private readonly random: () => number,
  ) {
    this.apps = kc.makeApiClient(AppsV1Api);
    this.core = kc.makeApiClient(CoreV1Api);
  }

  /** What to do next to `w`: create what is not there; otherwise scale, roll out or delete. */
  pick(w: Workload): Operation {
    if (!w.exists) return 'create';
    if (w.kind === 'pod') return 'delete';
    const r = this.random();
    return r < 0.5 ? 'scale' : r < 0.75 ? 'rollout' : 'delete';
  }

  /** One API write. Throws on failure (the state is then re-learnt from the answer where it can be). */
  async apply(w: Workload, op: Operation): Promise<void> {
    const { namespace, name } = { namespace: this.namespace, name: w.name };
    try {
      if (op === 'create') {
        await this.create(w);
        w.exists = true;
      } else if (op === 'delete') {
        if (w.kind === 'pod') await this.core.deleteNamespacedPod({ namespace, name });
        else if (w.kind === 'deployment') await this.apps.deleteNamespacedDeployment({ namespace, name });
        else await this.apps.deleteNamespacedStatefulSet({ namespace, name });
        w.exists = false;
      } else {
        const body =
          op === 'scale'
            ? { spec: { replicas: this.replicas(w) } }
            : {
                spec: { template: { metadata: { annotations: { 'churn/revision': String(++w.revision) } } } },
              };
        if (w.kind === 'deployment')
          await this.apps.patchNamespacedDeployment({ namespace, name, body }, MERGE);
        else await this.apps.patchNamespacedStatefulSet({ namespace, name, body }, MERGE);
      }
    } catch (err) {
      const code = httpCode(err);
      // what the cluster says about the object wins over what the driver thought
      if (code === 409 && op === 'create') w.exists = true;
      if (code === 404) w.exists = false;
      throw new Error(`${op} ${w.kind} ${namespace}/${name}: ${describeError(err)}`);
    }
  }

  private replicas(w: Workload): number {
    const max = w.kind === 'pod' ? 1 : MAX_REPLICAS[w.kind];
    return Math.floor(this.random() * (max + 1));
  }

  private async create(w: Workload): Promise<void> {
    const namespace = this.namespace;
    if (w.kind === 'pod') {
      const t = onGroups(deployment(namespace, w.name, podOptions(w, 1)), this.groups).spec!.template;
      await this.core.createNamespacedPod({
        namespace,
        body: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { ...t.metadata, name: w.name, namespace },
          spec: t.spec!,
        },
      });
      return;
    }
    const options = podOptions(w, 1 + Math.floor(this.random() * MAX_REPLICAS[w.kind]));
    if (w.kind === 'deployment') {
      await this.apps.createNamespacedDeployment({
        namespace,
        body: onGroups(deployment(namespace, w.name, options), this.groups),
      });
    } else {
      await this.apps.createNamespacedStatefulSet({
        namespace,
        body: onGroups(statefulSet(namespace, w.name, options), this.groups),
      });
    }
  }
}
