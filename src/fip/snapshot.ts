// What kubectl fip knows about the cluster, read once per command: the FloatingIP objects (through
// the store's decoder, loaded into the core's Allocator configured as floatip would configure it,
// so counts, orphans and free addresses are floatip's own), the Pools, the pods (through src/pods/
// and src/cni/), the floatingip-config ConfigMap. Pure: cluster.ts does the reading.
import type { V1Deployment, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { addressOf } from '../cni/args.js';
import {
  type Allocation,
  Allocator,
  AllocationKey,
  DEPLOYMENT_PREFIX,
  InvalidConfigError,
  type PoolConfig,
  canonicalAddress,
  STATEFULSET_PREFIX,
  parsePoolConfig,
} from '../ipam/index.js';
import { rolloutOf } from '../controller/workloads.js';
import { cniArgsOfPod, isFinished, keyOfPod, wantsFloatingIP } from '../pods/pod-facts.js';
import { fromFloatingIPObject } from '../store/floating-ip-object.js';
import { type Pool, readStoredPool } from '../store/pool-store.js';

/** A pod as kubectl fip looks at it. */
export interface PodView {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly phase: string;
  readonly node: string;
  readonly finished: boolean;
  readonly wantsIP: boolean;
  /** Its allocation key, or "" when it has none (an unsupported owner kind). */
  readonly key: string;
  /** Canonical addresses its `k8s.v1.cni.galaxy.io/args` annotation names. */
  readonly addresses: readonly string[];
  /** Why the annotation cannot be read, when it cannot. */
  readonly annotationError?: string;
  /** The object as read, for the REST API's release rule. */
  readonly object: V1Pod;
}

export interface RawCluster {
  readonly floatingIPs: readonly unknown[];
  readonly pools: readonly unknown[];
  readonly pods: readonly V1Pod[];
  readonly deployments: readonly V1Deployment[];
  readonly statefulSets: readonly V1StatefulSet[];
  /** The ConfigMap's `floatingips` text; undefined when there is none (configProblem says why). */
  readonly configText: string | undefined;
  readonly configProblem?: string;
  readonly resource: string;
  readonly now: number;
}

export interface Snapshot {
  readonly now: number;
  /** floatip's allocator: the configuration in force, every decodable object loaded. */
  readonly allocator: Allocator;
  readonly config: PoolConfig | undefined;
  /** Why there is no configuration (missing or invalid ConfigMap). */
  readonly configProblem: string | undefined;
  /** When each address's object was created (ms since the epoch; absent when unknown). */
  readonly createdAt: ReadonlyMap<string, number>;
  /** Objects floatip cannot use, with why. */
  readonly rejected: readonly { readonly name: string; readonly reason: string }[];
  readonly pods: readonly PodView[];
  readonly pools: readonly Pool[];
  /** Deployments and StatefulSets by their keys' app prefix (`dp_<ns>_<name>_`, `sts_<ns>_<name>_`). */
  readonly workloads: ReadonlyMap<string, Workload>;
}

export interface Workload {
  readonly replicas: number;
  /** A Deployment whose controller has not caught up with its spec. */
  readonly rollingOut: boolean;
}

export const podRef = (namespace: string, name: string) => `${namespace}/${name}`;

export function buildSnapshot(raw: RawCluster): Snapshot {
  let config: PoolConfig | undefined;
  let configProblem = raw.configProblem;
  if (raw.configText !== undefined) {
    try {
      config = parsePoolConfig(raw.configText);
    } catch (err) {
      if (!(err instanceof InvalidConfigError)) throw err;
      configProblem = `the configuration is invalid: ${err.message}`;
    }
  }
  const allocator = new Allocator(config, { clock: () => raw.now });
  const rejected: { name: string; reason: string }[] = [];
  const createdAt = new Map<string, number>();
  const records = [];
  for (const object of raw.floatingIPs) {
    const decoded = fromFloatingIPObject(object);
    const name = String((object as { metadata?: { name?: unknown } })?.metadata?.name ?? '');
    if (!decoded.ok) {
      rejected.push({ name, reason: decoded.reason });
      continue;
    }
    records.push(decoded.record);
    const created = Date.parse(
      String((object as { metadata?: { creationTimestamp?: unknown } }).metadata?.creationTimestamp ?? ''),
    );
    if (!Number.isNaN(created)) createdAt.set(decoded.record.ip, created);
  }
  for (const r of allocator.restore(records).rejected) rejected.push({ name: r.record.ip, reason: r.reason });
  return {
    now: raw.now,
    allocator,
    config,
    configProblem,
    createdAt,
    rejected,
    pods: raw.pods.map((p) => podView(p, raw.resource)),
    // as floatip reads them (a negative or unreadable size admits no pod), not as the webhook admits them
    pools: raw.pools.flatMap((p) => readStoredPool(p as Parameters<typeof readStoredPool>[0]) ?? []),
    workloads: workloadsOf(raw),
  };
}

function workloadsOf(raw: RawCluster): Map<string, Workload> {
  const out = new Map<string, Workload>();
  for (const d of raw.deployments) {
    const { replicas, rolling } = rolloutOf(d);
    out.set(`${DEPLOYMENT_PREFIX}${d.metadata?.namespace}_${d.metadata?.name}_`, {
      replicas,
      rollingOut: rolling,
    });
  }
  for (const s of raw.statefulSets) {
    const replicas = s.spec?.replicas ?? 1;
    out.set(`${STATEFULSET_PREFIX}${s.metadata?.namespace}_${s.metadata?.name}_`, {
      replicas,
      rollingOut: false,
    });
  }
  return out;
}

function podView(pod: V1Pod, resource: string): PodView {
  let key = '';
  try {
    key = keyOfPod(pod).text;
  } catch {
    // an owner kind galaxy cannot key: such a pod gets no address
  }
  let addresses: string[] = [];
  let annotationError: string | undefined;
  try {
    addresses = cniArgsOfPod(pod).ipinfos.map((i) => canonicalOrAsIs(addressOf(i)));
  } catch (err) {
    annotationError = (err as Error).message;
  }
  return {
    namespace: pod.metadata?.namespace ?? 'default',
    name: pod.metadata?.name ?? '',
    uid: pod.metadata?.uid ?? '',
    phase: pod.status?.phase ?? '',
    node: pod.spec?.nodeName ?? '',
    finished: isFinished(pod),
    wantsIP: wantsFloatingIP(pod, resource),
    key,
    addresses,
    ...(annotationError ? { annotationError } : {}),
    object: pod,
  };
}

function canonicalOrAsIs(ip: string): string {
  try {
    return canonicalAddress(ip);
  } catch {
    return ip;
  }
}

/** The pods by `namespace/name`. */
export function podsByName(snapshot: Snapshot): Map<string, PodView> {
  return new Map(snapshot.pods.map((p) => [podRef(p.namespace, p.name), p]));
}

/** The pod an allocation's key names, when it names one and that pod exists. */
export function podOfAllocation(
  allocation: Allocation,
  pods: ReadonlyMap<string, PodView>,
): PodView | undefined {
  const named = AllocationKey.parse(allocation.key).pod;
  return named ? pods.get(podRef(named.namespace, named.name)) : undefined;
}
