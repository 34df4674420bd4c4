// The churn's invariants beyond "objects and annotations agree" (ipam-state.ts's
// consistencyProblems calls these when asked): addresses in their node's subnet, running pods
// that want an address have one, objects that name no pod kept only as their policy says, and
// floatip's /metrics equal to the objects. Each problem is counted under the invariant it breaks.
import { AppsV1Api, type KubeConfig, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { ENI_IP } from './cluster.js';
import type { ConfigEntry, FipObject } from './ipam-state.js';

/** What each problem breaks, for counting (the churn's figures). */
export type Invariant =
  /** an address in two pods' annotations */
  | 'duplicate'
  /** an object no pod holds and no policy keeps */
  | 'leak'
  /** a pod's address without a matching object, or floatip's view (REST, metrics) not the objects */
  | 'lost'
  /** a pod's address outside its node's subnet */
  | 'subnet'
  /** a running pod that wants an address and has none */
  | 'unaddressed';

export const INVARIANTS: readonly Invariant[] = ['duplicate', 'leak', 'lost', 'subnet', 'unaddressed'];

/** Objects naming no pod that their policy does not keep (see ConsistencyOptions.policies). */
export async function unkeptProblems(
  kc: KubeConfig,
  objects: readonly FipObject[],
  heldBy: ReadonlyMap<string, string>,
): Promise<string[]> {
  const apps = kc.makeApiClient(AppsV1Api);
  const [deployments, statefulSets] = await Promise.all([
    apps.listDeploymentForAllNamespaces(),
    apps.listStatefulSetForAllNamespaces(),
  ]);
  const live = (o: { metadata?: { namespace?: string; name?: string; deletionTimestamp?: Date } }) =>
    !o.metadata?.deletionTimestamp;
  // a Deployment with no replicas keeps nothing for `immutable` (docs/galaxy.md#the-release-table)
  const deployment = new Set(
    deployments.items
      .filter((d) => live(d) && (d.spec?.replicas ?? 1) > 0)
      .map((d) => `${d.metadata?.namespace}/${d.metadata?.name}`),
  );
  // but what is parked at the app's key stays while the app is scaled to 0, and until two resyncs
  // find it gone (docs/galaxy.md#parked-addresses-kept-forever): taken again if the app comes back
  const replicas = new Map(
    statefulSets.items
      .filter(live)
      .map((t) => [`${t.metadata?.namespace}/${t.metadata?.name}`, t.spec?.replicas ?? 1]),
  );
  const problems: string[] = [];
  for (const o of objects) {
    if (o.uid !== '' || heldBy.has(o.name) || o.policy === 2) continue;
    const unkept = `FloatingIP ${o.name} (${o.key}, policy ${o.policy}) is held by no pod`;
    // keys: [pool__<P>_]<type>_<ns>_<app>_<pod>, with no '_' in Kubernetes names
    const [type, ns, app, podName] = o.key.replace(/^pool__[^_]*_/, '').split('_');
    if (o.policy !== 1) problems.push(`${unkept} and its policy keeps nothing: a leak`);
    else if (type === 'dp' && podName && !deployment.has(`${ns}/${app}`))
      problems.push(`${unkept} and Deployment ${ns}/${app} is gone or has no replicas: a leak`);
    else if (type === 'sts') {
      const ordinal = Number(podName?.slice(podName.lastIndexOf('-') + 1));
      const want = replicas.get(`${ns}/${app}`);
      if (want === undefined) problems.push(`${unkept} and StatefulSet ${ns}/${app} is gone: a leak`);
      else if (!(ordinal < want))
        problems.push(
          `${unkept}: ordinal ${ordinal} of StatefulSet ${ns}/${app} with ${want} replicas: a leak`,
        );
    } else if (type !== 'dp' && type !== 'sts')
      problems.push(`${unkept} and has no app to keep it for: a leak`);
  }
  return problems;
}

/** Whether IPv4 `ip` is inside `cidr`. */
function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/') as [string, string];
  if (ip.includes(':') || base.includes(':')) return false;
  const n = (s: string) => s.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
  const size = 2 ** (32 - Number(bits));
  return Math.floor(n(ip) / size) === Math.floor(n(base) / size);
}

/** A pod not finished, outside the tiny extender's namespaces, with its annotation's addresses. */
export interface PodAddresses {
  readonly pod: V1Pod;
  readonly ips: readonly string[];
}

/** Running pods wanting an address without one, and addresses outside their node's subnet (IPv4). */
export function placementProblems(
  config: readonly ConfigEntry[],
  nodes: readonly V1Node[],
  pods: readonly PodAddresses[],
): [Invariant, string][] {
  const nodeIPs = new Map(
    nodes.map((n) => [
      n.metadata?.name ?? '',
      (n.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address),
    ]),
  );
  const problems: [Invariant, string][] = [];
  for (const { pod, ips: all } of pods) {
    if (pod.status?.phase !== 'Running' || pod.metadata?.deletionTimestamp) continue;
    const who = `pod ${pod.metadata?.namespace}/${pod.metadata?.name}`;
    const wants = (pod.spec?.containers ?? []).some((c) => c.resources?.limits?.[ENI_IP] !== undefined);
    const ips = all.filter((ip) => !ip.includes(':'));
    if (wants && all.length === 0) problems.push(['unaddressed', `${who} is Running and has no address`]);
    const node = pod.spec?.nodeName ?? '';
    const entries = config.filter((e) =>
      e.nodeSubnets.some((subnet) => (nodeIPs.get(node) ?? []).some((ip) => inCidr(ip, subnet))),
    );
    for (const ip of ips) {
      if (!entries.some((e) => inCidr(ip, e.subnet)))
        problems.push(['subnet', `${who} on ${node} has ${ip}, outside its node's subnet's entries`]);
    }
  }
  return problems;
}

/** floatip's `floatip_addresses{state="allocated"}` per IPv4 subnet against the objects. */
export async function metricsProblems(
  apiPort: number,
  config: readonly ConfigEntry[],
  objects: readonly FipObject[],
): Promise<string[]> {
  let text: string;
  try {
    const res = await fetch(`http://127.0.0.1:${apiPort}/metrics`, { signal: AbortSignal.timeout(5000) });
    text = await res.text();
    if (res.status !== 200) return [];
  } catch {
    return [];
  }
  const allocated = new Map<string, number>();
  for (const m of text.matchAll(/^floatip_addresses\{([^}]*)\} (\S+)$/gm)) {
    const labels = m[1]!;
    const subnet = /subnet="([^"]*)"/.exec(labels)?.[1];
    if (!subnet || !labels.includes('state="allocated"') || !labels.includes('family="ipv4"')) continue;
    allocated.set(subnet, (allocated.get(subnet) ?? 0) + Number(m[2]));
  }
  const problems: string[] = [];
  for (const subnet of new Set(config.map((e) => e.subnet).filter((c) => !c.includes(':')))) {
    const stored = objects.filter((o) => inCidr(o.name, subnet)).length;
    const counted = allocated.get(subnet) ?? 0;
    if (stored !== counted)
      problems.push(
        `/metrics counts ${counted} allocated in ${subnet}, but ${stored} FloatingIP objects are there`,
      );
  }
  return problems;
}
