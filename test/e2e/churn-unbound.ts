// The churn's reading of the pods left unbound at its end: stuck (floatip should have placed them),
// or waiting for their Deployment's limit behind pods of a deleted ReplicaSet, or of a ReplicaSet
// of a deleted Deployment, of that Deployment's name, that kube-controller-manager's garbage
// collector has not collected (galaxy's rule counts an
// app by its name, so those pods fill the limit until they go; floatip's refusal is right). Seen
// twice, each time after a kube-apiserver restart broke the collector's discovery (soaks of
// 2026-12-05, seeds 9805 and 20347).
import type { V1Deployment, V1ObjectMeta, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';

export function sortUnbound(
  pods: readonly V1Pod[],
  replicaSets: readonly V1ReplicaSet[],
  deployments: readonly V1Deployment[],
  addresses: readonly { name: string; key: string }[] = [],
): { unbound: string[]; behindUncollected: string[]; chains: string[] } {
  const controller = (o: { metadata?: V1ObjectMeta }) =>
    o.metadata?.ownerReferences?.find((r) => r.controller);
  const liveDeployments = new Set(deployments.map((d) => d.metadata?.uid));
  // a ReplicaSet lives while it exists and its Deployment does (the collector deletes it with it)
  const liveSets = new Set(
    replicaSets
      .filter((r) => {
        const owner = controller(r);
        return owner?.kind !== 'Deployment' || liveDeployments.has(owner.uid);
      })
      .map((r) => r.metadata?.uid),
  );
  const uncollected = pods.filter((p) => {
    const owner = controller(p);
    return owner?.kind === 'ReplicaSet' && !liveSets.has(owner.uid) && !p.metadata?.deletionTimestamp;
  });
  const unbound: string[] = [];
  const behindUncollected: string[] = [];
  const chains = new Set<string>();
  for (const p of pods.filter((pod) => !pod.spec?.nodeName)) {
    const scheduled = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
    const said = `${p.metadata?.name} (PodScheduled ${scheduled?.status ?? 'unset'}${scheduled?.message ? `: ${scheduled.message}` : ''})`;
    const app = /^deployment (\S+) has allocated \d+ ips with replicas of /.exec(
      scheduled?.message ?? '',
    )?.[1];
    const holders = app ? uncollected.filter((u) => controller(u)?.name.startsWith(`${app}-`)) : [];
    if (holders.length === 0) {
      unbound.push(said);
      if (app) chains.add(ownerChain(app, pods, replicaSets, deployments, addresses));
    } else
      behindUncollected.push(
        `${said}, behind ${holders.map((h) => h.metadata?.name).join(', ')}, of a deleted ReplicaSet or Deployment that kube-controller-manager has not collected`,
      );
  }
  return { unbound, behindUncollected, chains: [...chains] };
}

/**
 * What a stuck pod's app looked like at the end, for the soak's record (etcd's data goes with the
 * cluster, and a soak of 2026-12-05, seed 16155, ended stuck with nothing left to tell why): the
 * Deployments of its name, every ReplicaSet and pod of its name with their owners and replicas, and
 * the FloatingIPs whose keys are its (galaxy's `dp_<namespace>_<app>_<pod>`).
 */
export function ownerChain(
  app: string,
  pods: readonly V1Pod[],
  replicaSets: readonly V1ReplicaSet[],
  deployments: readonly V1Deployment[],
  addresses: readonly { name: string; key: string }[],
): string {
  const ownerOf = (o: { metadata?: V1ObjectMeta }) => {
    const r = o.metadata?.ownerReferences?.find((ref) => ref.controller);
    return r ? `${r.kind} ${r.name} ${r.uid}` : 'no owner';
  };
  const deleting = (o: { metadata?: V1ObjectMeta }) =>
    o.metadata?.deletionTimestamp
      ? `, deleting since ${new Date(o.metadata.deletionTimestamp).toISOString()}`
      : '';
  const ofApp = (name?: string) => !!name && name.startsWith(`${app}-`);
  const lines = [
    `app ${app}:`,
    ...deployments
      .filter((d) => d.metadata?.name === app)
      .map(
        (d) =>
          `  Deployment ${d.metadata?.uid}: replicas ${d.spec?.replicas}, status ${d.status?.replicas ?? 0} (updated ${d.status?.updatedReplicas ?? 0}), generation ${d.metadata?.generation} observed ${d.status?.observedGeneration}${deleting(d)}`,
      ),
    ...replicaSets
      .filter((r) => ofApp(r.metadata?.name))
      .map(
        (r) =>
          `  ReplicaSet ${r.metadata?.name} ${r.metadata?.uid} of ${ownerOf(r)}: replicas ${r.spec?.replicas}, status ${r.status?.replicas ?? 0}, generation ${r.metadata?.generation} observed ${r.status?.observedGeneration}${deleting(r)}`,
      ),
    ...pods
      .filter((p) => ofApp(p.metadata?.ownerReferences?.find((ref) => ref.controller)?.name))
      .map(
        (p) =>
          `  pod ${p.metadata?.name} of ${ownerOf(p)}: node ${p.spec?.nodeName || 'none'}, ${p.status?.phase ?? 'no phase'}${deleting(p)}`,
      ),
    ...addresses
      .filter((a) => a.key.split('_')[0] === 'dp' && a.key.split('_')[2] === app)
      .map((a) => `  FloatingIP ${a.name}: ${a.key}`),
  ];
  return lines.join('\n');
}
