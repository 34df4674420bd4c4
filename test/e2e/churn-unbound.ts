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
): { unbound: string[]; behindUncollected: string[] } {
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
  for (const p of pods.filter((pod) => !pod.spec?.nodeName)) {
    const scheduled = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
    const said = `${p.metadata?.name} (PodScheduled ${scheduled?.status ?? 'unset'}${scheduled?.message ? `: ${scheduled.message}` : ''})`;
    const app = /^deployment (\S+) has allocated \d+ ips with replicas of /.exec(
      scheduled?.message ?? '',
    )?.[1];
    const holders = app ? uncollected.filter((u) => controller(u)?.name.startsWith(`${app}-`)) : [];
    if (holders.length === 0) unbound.push(said);
    else
      behindUncollected.push(
        `${said}, behind ${holders.map((h) => h.metadata?.name).join(', ')}, of a deleted ReplicaSet or Deployment that kube-controller-manager has not collected`,
      );
  }
  return { unbound, behindUncollected };
}
