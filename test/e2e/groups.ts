// The floatip scenarios' address plan: each scenario has its own node subnet, nodes (labelled, and
// selected by its pods) and pod address ranges, all in one floatingip-config that every scenario
// file writes identically, so no file reconfigures floatip under another's allocations.
import type { KubeConfig } from '@kubernetes/client-node';
import { ENI_IP } from './cluster.js';
import type { ConfigEntry } from './ipam-state.js';
import { createNodes, deleteNodes } from './nodes.js';

export const GROUP_LABEL = 'floatip-e2e/group';

export interface Group {
  readonly name: string;
  readonly nodes: readonly string[];
  /** Each node's InternalIPs, in order. */
  readonly nodeIPs: readonly (readonly string[])[];
  readonly nodeSubnet: string;
  /** The entries serving the node subnet. */
  readonly entries: readonly ConfigEntry[];
  /** Per-node ENI IP allocatable. */
  readonly eniIPs: number;
}

function group(
  name: string,
  third: number,
  nodes: number,
  ips: string,
  options: { vlan?: number; ipv6?: string; eniIPs?: number } = {},
): Group {
  const nodeSubnet = `10.31.${third}.0/24`;
  const entries: ConfigEntry[] = [
    {
      nodeSubnets: [nodeSubnet],
      ips: [ips],
      subnet: `10.131.${third}.0/24`,
      gateway: `10.131.${third}.1`,
      ...(options.vlan ? { vlan: options.vlan } : {}),
    },
  ];
  if (options.ipv6) {
    entries.push({
      nodeSubnets: [nodeSubnet],
      ips: [options.ipv6],
      subnet: `fd00:131:${third}::/64`,
      gateway: `fd00:131:${third}::1`,
    });
  }
  return {
    name,
    nodes: Array.from({ length: nodes }, (_, i) => `e2e-${name}-${i + 1}`),
    nodeIPs: Array.from({ length: nodes }, (_, i) =>
      options.ipv6
        ? [`10.31.${third}.${11 + i}`, `fd00:31:${third}::${11 + i}`]
        : [`10.31.${third}.${11 + i}`],
    ),
    nodeSubnet,
    entries,
    eniIPs: options.eniIPs ?? 16,
  };
}

export const GROUPS = {
  /** E2E-1: StatefulSet, immutable; vlan 2 so ipinfos carry it. */
  sts: group('sts', 1, 3, '10.131.1.10~10.131.1.40', { vlan: 2 }),
  /** E2E-2: Deployment, never. */
  never: group('never', 2, 2, '10.131.2.10~10.131.2.80'),
  /** E2E-3: Deployment, immutable, rolling update. */
  roll: group('roll', 3, 2, '10.131.3.10~10.131.3.40'),
  /** E2E-4: a Pool shared by two Deployments. */
  pool: group('pool', 4, 2, '10.131.4.10~10.131.4.40'),
  /** E2E-4: a subnet with three addresses. */
  full: group('full', 5, 2, '10.131.5.10~10.131.5.12'),
  /** E2E-5: dual stack, nodes with an IPv4 and an IPv6 InternalIP. */
  dual: group('dual', 6, 2, '10.131.6.10~10.131.6.30', { ipv6: 'fd00:131:6::10~fd00:131:6::30' }),
  /** E2E-6: floatip killed mid-run. */
  crash: group('crash', 7, 3, '10.131.7.10~10.131.7.200', { eniIPs: 48 }),
  /** E2E-7: two replicas, leader election. */
  leader: group('leader', 8, 2, '10.131.8.10~10.131.8.80'),
  /** E2E-9: the few nodes with free addresses among 150 decoys of an unserved subnet. */
  many: group('many', 9, 4, '10.131.9.10~10.131.9.40'),
  /** E2E-10: two addresses, a third pod waits for one to be freed. */
  requeue: group('requeue', 10, 2, '10.131.10.10~10.131.10.11'),
  /** E2E-11: pods created while floatip is stopped. */
  away: group('away', 11, 2, '10.131.11.10~10.131.11.30'),
  /** E2E-D3: the deployable setup, two replicas over mTLS, rolled and killed while pods come. */
  deploy: group('deploy', 12, 2, '10.131.12.10~10.131.12.120', { eniIPs: 64 }),
  /** The churn (churn.ts): two node subnets its pods may land in. */
  churnA: group('churn-a', 20, 2, '10.131.20.10~10.131.20.250', { eniIPs: 100 }),
  churnB: group('churn-b', 21, 2, '10.131.21.10~10.131.21.250', { eniIPs: 100 }),
} satisfies Record<string, Group>;

/** The one floatingip-config of the scenario files. */
export const SUITE_CONFIG: ConfigEntry[] = Object.values(GROUPS).flatMap((g) => g.entries);

export async function createGroupNodes(groups: readonly Group[], kc?: KubeConfig): Promise<void> {
  for (const g of groups) {
    await createNodes(
      g.nodes,
      g.nodeIPs,
      { [ENI_IP]: String(g.eniIPs) },
      { labels: { [GROUP_LABEL]: g.name }, ...(kc ? { kubeConfig: kc } : {}) },
    );
  }
}

export async function deleteGroupNodes(groups: readonly Group[], kc?: KubeConfig): Promise<void> {
  await deleteNodes(
    groups.flatMap((g) => g.nodes),
    kc,
  );
}

export const onGroup = (g: Group): Record<string, string> => ({ [GROUP_LABEL]: g.name });

/** Whether an IPv4 address (dotted) lies in `a.b.c.x~a.b.c.y` of the group's first entry. */
export function inRange(range: string, ip: string): boolean {
  const [lo, hi] = range.split('~') as [string, string];
  if (ip.includes(':')) {
    const last = (s: string) => parseInt(s.split(':').pop() ?? '', 16);
    const prefix = (s: string) => s.slice(0, s.lastIndexOf(':'));
    return prefix(ip) === prefix(lo) && last(ip) >= last(lo) && last(ip) <= last(hi ?? lo);
  }
  const n = (s: string) => s.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
  return n(ip) >= n(lo) && n(ip) <= n(hi ?? lo);
}
