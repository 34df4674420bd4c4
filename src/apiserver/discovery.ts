// Legacy (unaggregated) discovery documents. kubectl asks for aggregated discovery first; answering with plain
// application/json makes it fall back to these, which is what a server without aggregation does.
import { ALL_VERBS, apiVersionOf, type ResourceRegistry, type ResourceType } from './registry.js';

export const SERVER_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-floatip-dev',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.23.0',
  compiler: 'gc',
  platform: 'linux/amd64',
};

interface ApiResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
}

function resourceEntries(rt: ResourceType): ApiResource[] {
  const main: ApiResource = {
    name: rt.plural,
    singularName: rt.singular,
    namespaced: rt.namespaced,
    kind: rt.kind,
    verbs: ALL_VERBS,
  };
  if (rt.shortNames.length > 0) main.shortNames = rt.shortNames;
  if (rt.categories.length > 0) main.categories = rt.categories;
  const entries = [main];
  if (rt.binding) {
    entries.push({
      name: `${rt.plural}/binding`,
      singularName: '',
      namespaced: rt.namespaced,
      kind: 'Binding',
      verbs: ['create'],
    });
  }
  if (rt.statusSubresource) {
    entries.push({
      name: `${rt.plural}/status`,
      singularName: '',
      namespaced: rt.namespaced,
      kind: rt.kind,
      verbs: ['get', 'patch', 'update'],
    });
  }
  if (rt.scale) {
    entries.push({
      name: `${rt.plural}/scale`,
      singularName: '',
      namespaced: rt.namespaced,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    });
  }
  return entries;
}

export function apiVersions(serverAddress: string): object {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

export function resourceList(registry: ResourceRegistry, group: string, version: string): object {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: apiVersionOf({ group, version }),
    resources: registry
      .resourcesIn(group, version)
      .sort((a, b) => (a.plural < b.plural ? -1 : 1))
      .flatMap(resourceEntries),
  };
}

function apiGroup(registry: ResourceRegistry, group: string): object {
  const versions = registry
    .versionsOf(group)
    .map((version) => ({ groupVersion: `${group}/${version}`, version }));
  return { name: group, versions, preferredVersion: versions[0] };
}

export function groupList(registry: ResourceRegistry): object {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: registry.groups().map((g) => apiGroup(registry, g)),
  };
}

export function groupDocument(registry: ResourceRegistry, group: string): object {
  return { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(registry, group) };
}
