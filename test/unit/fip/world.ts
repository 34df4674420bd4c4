// A cluster as kubectl fip reads it, built by hand for the pure parts' tests.
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { type RawCluster, type Snapshot, buildSnapshot } from '../../../src/fip/snapshot.js';

export const NOW = Date.parse('2026-12-01T12:00:00Z');
export const ENI = 'tke.cloud.tencent.com/eni-ip';
export const CONFIG = JSON.stringify([
  { nodeSubnets: ['10.1.0.0/24'], ips: ['10.2.0.10~10.2.0.19'], subnet: '10.2.0.0/24', gateway: '10.2.0.1' },
]);

export function fipObject(
  ip: string,
  key: string,
  o: { node?: string; uid?: string; policy?: number; createdAgoMs?: number; reserved?: boolean } = {},
) {
  return {
    metadata: {
      name: ip,
      creationTimestamp: new Date(NOW - (o.createdAgoMs ?? 3_600_000 * 24)).toISOString(),
      ...(o.reserved ? { labels: { reserved: '' } } : {}),
    },
    spec: {
      key,
      attribute: o.uid || o.node ? JSON.stringify({ NodeName: o.node ?? '', Uid: o.uid ?? '' }) : '',
      policy: o.policy ?? 0,
      updateTime: new Date(NOW - 90_000).toISOString(),
    },
  };
}

export function pod(
  namespace: string,
  name: string,
  o: {
    uid?: string;
    ips?: string[];
    phase?: string;
    node?: string;
    owner?: { kind: string; name: string };
  } = {},
): V1Pod {
  const ipinfos = (o.ips ?? []).map((ip) => ({ ip: `${ip}/24`, vlan: 0, gateway: '10.2.0.1' }));
  return {
    metadata: {
      namespace,
      name,
      uid: o.uid ?? `uid-${name}`,
      ...(o.owner
        ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: o.owner.kind, name: o.owner.name, uid: 'x' }] }
        : {}),
      ...(o.ips
        ? { annotations: { 'k8s.v1.cni.galaxy.io/args': JSON.stringify({ common: { ipinfos } }) } }
        : {}),
    },
    spec: { nodeName: o.node ?? 'n1', containers: [{ name: 'c', resources: { limits: { [ENI]: '1' } } }] },
    status: { phase: o.phase ?? 'Running' },
  };
}

export function snapshot(over: Partial<RawCluster> = {}): Snapshot {
  return buildSnapshot({
    floatingIPs: [],
    pools: [],
    pods: [],
    deployments: [] as V1Deployment[],
    statefulSets: [],
    configText: CONFIG,
    resource: ENI,
    now: NOW,
    ...over,
  });
}
