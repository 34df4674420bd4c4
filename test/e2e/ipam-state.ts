// What floatip keeps and what pods carry, read from the API server as a user would: the
// floating-IP ConfigMap, Pool objects, FloatingIP objects, the pods' galaxy annotation, and the check
// that they agree one to one (consistencyProblems / expectConsistent).
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1ConfigMap,
  type V1Pod,
} from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { objectNameOf } from '../../src/store/floating-ip-object.js';
import { clusterKubeConfig, loadCluster } from './cluster.js';
import { CNI_ARGS_ANNOTATION } from './fake-kubelet.js';
import { REPO_ROOT, type FloatipProcess } from './floatip.js';
import {
  INVARIANTS,
  metricsProblems,
  placementProblems,
  unkeptProblems,
  type Invariant,
  type PodAddresses,
} from './ipam-invariants.js';
import { describeError, httpCode } from './kube-errors.js';
import { waitFor } from './wait.js';

export const RELEASE_POLICY_ANNOTATION = 'k8s.v1.cni.galaxy.io/release-policy';
export const POOL_ANNOTATION = 'tke.cloud.tencent.com/eni-ip-pool';
export const CONFIG_NAMESPACE = 'kube-system';
export const CONFIG_NAME = 'floatingip-config';
const GROUP = 'galaxy.k8s.io';
const VERSION = 'v1alpha1';

/** One element of galaxy's `floatingips` JSON array (docs/galaxy.md#entries-and-validation). */
export interface ConfigEntry {
  readonly nodeSubnets: readonly string[];
  readonly ips: readonly string[];
  readonly subnet: string;
  readonly gateway: string;
  readonly vlan?: number;
}

/** Writes `kube-system/floatingip-config` (key `floatingips`), creating or replacing it. */
export async function writeFloatipConfig(
  entries: readonly ConfigEntry[],
  kc: KubeConfig = clusterKubeConfig(),
): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const body: V1ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: CONFIG_NAME, namespace: CONFIG_NAMESPACE },
    data: { floatingips: JSON.stringify(entries) },
  };
  try {
    await core.replaceNamespacedConfigMap({ name: CONFIG_NAME, namespace: CONFIG_NAMESPACE, body });
  } catch (err) {
    if (httpCode(err) !== 404) throw new Error(`writing the floatip ConfigMap: ${describeError(err)}`);
    await core.createNamespacedConfigMap({ namespace: CONFIG_NAMESPACE, body });
  }
}

/**
 * `kubectl apply -f crds/` and waits until they are established, as an operator installing floatip
 * would; floatip creates them itself at start when missing, but Pools must exist before it starts.
 */
export async function applyCrds(): Promise<void> {
  const { KUBECTL, KUBECONFIG } = loadCluster();
  const run = promisify(execFile);
  await run(KUBECTL, ['--kubeconfig', KUBECONFIG, 'apply', '-f', join(REPO_ROOT, 'crds')]);
  await run(KUBECTL, [
    '--kubeconfig',
    KUBECONFIG,
    'wait',
    '--for=condition=established',
    '--timeout=30s',
    'crd/floatingips.galaxy.k8s.io',
    'crd/pools.galaxy.k8s.io',
  ]);
}

/** A Pool object (galaxy's fields at the top level), in kube-system where floatip reads them. */
export async function createPool(
  name: string,
  size: number,
  kc: KubeConfig = clusterKubeConfig(),
): Promise<void> {
  await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: CONFIG_NAMESPACE,
    plural: 'pools',
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'Pool',
      metadata: { name },
      size,
      preAllocateIP: false,
    },
  });
}

export async function deletePool(name: string, kc: KubeConfig = clusterKubeConfig()): Promise<void> {
  try {
    await kc.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: CONFIG_NAMESPACE,
      plural: 'pools',
      name,
    });
  } catch (err) {
    if (httpCode(err) !== 404) throw err;
  }
}

/** A FloatingIP object as the tests read it. */
export interface FipObject {
  /** The object name (IPv6 with '-' for ':'). */
  readonly name: string;
  readonly key: string;
  readonly policy: number;
  readonly nodeName: string;
  readonly uid: string;
}

export async function listFloatingIPs(kc: KubeConfig = clusterKubeConfig()): Promise<FipObject[]> {
  let list: { items?: unknown[] };
  try {
    list = (await kc
      .makeApiClient(CustomObjectsApi)
      .listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'floatingips' })) as {
      items?: unknown[];
    };
  } catch (err) {
    // before floatip first ran, the CRD does not exist: no objects
    if (httpCode(err) === 404) return [];
    throw err;
  }
  return (list.items ?? []).map((item) => {
    const o = item as {
      metadata: { name: string };
      spec: { key: string; attribute: string; policy: number };
    };
    let attribute: { NodeName?: string; Uid?: string } = {};
    try {
      attribute = o.spec.attribute ? (JSON.parse(o.spec.attribute) as typeof attribute) : {};
    } catch {
      attribute = {};
    }
    return {
      name: o.metadata.name,
      key: o.spec.key,
      policy: o.spec.policy,
      nodeName: attribute.NodeName ?? '',
      uid: attribute.Uid ?? '',
    };
  });
}

/** Deletes every FloatingIP object: between scenario files, with no floatip running. */
export async function deleteAllFloatingIPs(kc: KubeConfig = clusterKubeConfig()): Promise<void> {
  try {
    await kc
      .makeApiClient(CustomObjectsApi)
      .deleteCollectionClusterCustomObject({ group: GROUP, version: VERSION, plural: 'floatingips' });
  } catch (err) {
    if (httpCode(err) !== 404) throw err;
  }
}

export interface IPInfo {
  readonly ip: string;
  readonly vlan: number;
  readonly gateway: string;
}

/** The pod's `common.ipinfos` ([] without the annotation). */
export function ipinfosOf(pod: V1Pod): IPInfo[] {
  const raw = pod.metadata?.annotations?.[CNI_ARGS_ANNOTATION];
  if (!raw) return [];
  const args = JSON.parse(raw) as { common?: { ipinfos?: IPInfo[] } };
  return args.common?.ipinfos ?? [];
}

/** The pod's addresses without prefix lengths. */
export function addressesOf(pod: V1Pod): string[] {
  return ipinfosOf(pod).map((i) => i.ip.split('/')[0]!);
}

/**
 * The key galaxy stores for the pod (docs/galaxy.md#keys-from-a-pod-formatkey), derived here independently of floatip: the first
 * owner reference's kind and name (a ReplicaSet's name without its template hash), inside
 * `pool__<P>_` when the pod names a pool.
 */
export function expectedKey(pod: V1Pod): string {
  const ns = pod.metadata?.namespace ?? 'default';
  const name = pod.metadata?.name ?? '';
  const pool = pod.metadata?.annotations?.[POOL_ANNOTATION];
  const prefix = pool ? `pool__${pool}_` : '';
  const owner = pod.metadata?.ownerReferences?.[0];
  if (!owner) return `${prefix}NULL_${ns}_NULL_${name}`;
  if (owner.kind === 'ReplicaSet') {
    return `${prefix}dp_${ns}_${owner.name.slice(0, owner.name.lastIndexOf('-'))}_${name}`;
  }
  const type = owner.kind === 'StatefulSet' ? 'sts' : owner.kind.toLowerCase();
  return `${prefix}${type}_${ns}_${owner.name}_${name}`;
}

export const isFinished = (pod: V1Pod): boolean =>
  pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';

export interface Consistency {
  readonly problems: string[];
  /** Problems per invariant. */
  readonly counts: Record<Invariant, number>;
  readonly objects: FipObject[];
  /** Pods that hold addresses (not finished, with ipinfos). */
  readonly holders: V1Pod[];
}

export interface ConsistencyOptions {
  readonly floatip?: FloatipProcess;
  readonly kc?: KubeConfig;
  /**
   * Also: every address in its pod's node's subnet (these entries' `subnet`), every running pod
   * that requests the ENI IP resource holds one, and floatip's /metrics (`floatip_addresses`
   * allocated, per subnet) counts exactly the objects.
   */
  readonly config?: readonly ConfigEntry[];
  /**
   * Also: an object that names no pod is there only because its policy keeps it
   * (docs/galaxy.md#the-release-table): never (2) always; immutable (1) parked at its
   * Deployment's key always (docs/galaxy.md#parked-addresses-kept-forever), on a pod's key while
   * its Deployment exists with replicas, or its StatefulSet with the pod's ordinal below its
   * replicas; default (0) never.
   */
  readonly policies?: boolean;
}

/** Namespaces whose pods carry the tiny extender's fixed annotation, not floatip's. */
const NOT_FLOATIP = /^e2e-h-/;

/**
 * Whether FloatingIP objects and pod annotations agree one to one, across the cluster:
 * - every address in the annotation of a pod that is not finished has an object whose key is the
 *   pod's key and whose attribute names the pod's UID and node;
 * - no address is in two such pods' annotations;
 * - every object that names a pod UID is held by that pod (otherwise it leaked); objects without
 *   one are parked or kept for a workload and in no pod's annotation;
 * - when floatip's REST API answers (`GET /v1/ip` on its API port), its allocated addresses are
 *   exactly the objects.
 */
export async function consistencyProblems(options: ConsistencyOptions = {}): Promise<Consistency> {
  const kc = options.kc ?? clusterKubeConfig();
  const [objects, podList] = await Promise.all([
    listFloatingIPs(kc),
    kc.makeApiClient(CoreV1Api).listPodForAllNamespaces(),
  ]);
  const problems: string[] = [];
  const counts = Object.fromEntries(INVARIANTS.map((i) => [i, 0])) as Record<Invariant, number>;
  const add = (invariant: Invariant, problem: string) => {
    counts[invariant]++;
    problems.push(problem);
  };
  const byName = new Map(objects.map((o) => [o.name, o]));
  const heldBy = new Map<string, string>();
  const holders: V1Pod[] = [];
  const readable: PodAddresses[] = [];
  for (const pod of podList.items) {
    if (isFinished(pod) || NOT_FLOATIP.test(pod.metadata?.namespace ?? '')) continue;
    const who = `pod ${pod.metadata?.namespace}/${pod.metadata?.name}`;
    let ips: string[];
    try {
      ips = addressesOf(pod);
    } catch (err) {
      add('lost', `${who}: unreadable ${CNI_ARGS_ANNOTATION}: ${(err as Error).message}`);
      continue;
    }
    readable.push({ pod, ips });
    if (ips.length > 0) holders.push(pod);
    const uid = pod.metadata?.uid ?? '';
    for (const ip of ips) {
      const name = objectNameOf(ip);
      const other = heldBy.get(name);
      if (other) add('duplicate', `${ip} is in the annotations of both ${other} and ${who}`);
      heldBy.set(name, who);
      const o = byName.get(name);
      if (!o) {
        add('lost', `${who} has ${ip} but there is no FloatingIP ${name}`);
        continue;
      }
      const key = expectedKey(pod);
      if (o.key !== key) add('lost', `FloatingIP ${name} has key ${o.key}, but ${who} (key ${key}) holds it`);
      if (o.uid !== uid) add('lost', `FloatingIP ${name} names pod UID "${o.uid}", but ${who} is ${uid}`);
      if (o.nodeName !== (pod.spec?.nodeName ?? '')) {
        add('lost', `FloatingIP ${name} names node "${o.nodeName}", but ${who} is on ${pod.spec?.nodeName}`);
      }
    }
  }
  const byUid = new Map(podList.items.map((p) => [p.metadata?.uid ?? '', p]));
  for (const o of objects) {
    if (o.uid === '' || heldBy.has(o.name)) continue;
    const pod = byUid.get(o.uid);
    const who = pod ? `pod ${pod.metadata?.namespace}/${pod.metadata?.name}` : '';
    add(
      'leak',
      pod && !pod.spec?.nodeName && !isFinished(pod)
        ? `FloatingIP ${o.name} (${o.key}) is taken for ${who}, which is not bound: a bind under way or cut short`
        : `FloatingIP ${o.name} (${o.key}, uid ${o.uid}) is held by no pod${pod ? ` (${who} is ${pod.status?.phase})` : ''}: a leak`,
    );
  }
  if (options.policies) {
    for (const problem of await unkeptProblems(kc, objects, heldBy)) add('leak', problem);
  }
  if (options.config) {
    const nodes = (await kc.makeApiClient(CoreV1Api).listNode()).items;
    for (const [invariant, problem] of placementProblems(options.config, nodes, readable))
      add(invariant, problem);
  }
  if (options.floatip?.apiPort !== undefined && options.floatip.running) {
    for (const problem of await restViewProblems(options.floatip.apiPort, objects)) add('lost', problem);
    if (options.config) {
      for (const problem of await metricsProblems(options.floatip.apiPort, options.config, objects))
        add('lost', problem);
    }
  }
  return { problems, counts, objects, holders };
}

/** floatip's own view through galaxy's REST API, when this build has it. */
async function restViewProblems(apiPort: number, objects: readonly FipObject[]): Promise<string[]> {
  let body: { content?: { ip: string; podName?: string; appName?: string; poolName?: string }[] };
  try {
    const res = await fetch(`http://127.0.0.1:${apiPort}/v1/ip?size=9999`, {
      signal: AbortSignal.timeout(5000),
    });
    if (res.status !== 200) return []; // not the leader, or no REST API: nothing to compare
    body = (await res.json()) as typeof body;
  } catch {
    return [];
  }
  const problems: string[] = [];
  const allocated = new Set(
    (body.content ?? []).filter((i) => i.podName || i.appName || i.poolName).map((i) => objectNameOf(i.ip)),
  );
  const stored = new Set(objects.map((o) => o.name));
  for (const name of allocated)
    if (!stored.has(name)) problems.push(`GET /v1/ip lists ${name} as allocated, but no object exists`);
  for (const name of stored)
    if (!allocated.has(name)) problems.push(`FloatingIP ${name} exists, but GET /v1/ip does not list it`);
  return problems;
}

/** Waits (floatip releases after a pod is gone, asynchronously) until everything agrees. */
export async function expectConsistent(
  what: string,
  options: ConsistencyOptions & { timeoutMs?: number } = {},
): Promise<Consistency> {
  let last: Consistency | undefined;
  return waitFor(
    `FloatingIP objects and pod annotations to agree (${what})`,
    async () => {
      last = await consistencyProblems(options);
      return last.problems.length === 0 ? last : undefined;
    },
    {
      timeoutMs: options.timeoutMs ?? 30_000,
      intervalMs: 500,
      describe: () => (last ? last.problems.slice(0, 20).join('; ') : 'nothing read yet'),
    },
  );
}

/** Addresses as a sortable, comparable list. */
export function sortedIPs(ips: Iterable<string>): string[] {
  return [...ips].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}
