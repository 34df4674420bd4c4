// Which resources the server knows, and how each behaves. Built-in kinds are fixed; custom resources come and go
// with their CustomResourceDefinitions, as on a real kube-apiserver.
import type { Verb } from './types.js';

/** Where the scale subresource reads and writes replicas (CRD `subresources.scale`). Paths are `.a.b`. */
export interface ScalePaths {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface ResourceType {
  group: string;
  version: string;
  /** Plural resource name, the URL segment: "pods". */
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** Whether writes to the main resource leave `.status` alone (a `status` subresource exists). */
  statusSubresource: boolean;
  scale?: ScalePaths;
  /** pods/binding */
  binding?: boolean;
  /** PUT on a missing object creates it (events, leases), as their real strategies allow. */
  allowCreateOnUpdate?: boolean;
  /** Fields, beyond metadata.name and metadata.namespace, that a field selector may use. */
  selectableFields: string[];
  /** Kubernetes rejects strategic merge patch for custom resources: there is no schema for it. */
  strategicMergePatch: boolean;
  /** Storage identity, shared by every served version of one group/resource. */
  storageKey: string;
  /** The CRD that defined this type, if any. */
  crdName?: string;
  /** A CRD version's `schema.openAPIV3Schema`, for OpenAPI and field validation. */
  schema?: Record<string, unknown>;
  /** A CRD version's `additionalPrinterColumns`, for Table output. */
  printerColumns?: PrinterColumn[];
}

/** A CRD's `additionalPrinterColumns` entry. */
export interface PrinterColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
  jsonPath: string;
}

export const ALL_VERBS: Verb[] = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
];

export function apiVersionOf(rt: Pick<ResourceType, 'group' | 'version'>): string {
  return rt.group ? `${rt.group}/${rt.version}` : rt.version;
}

export function storageKeyOf(group: string, plural: string): string {
  return group ? `${plural}.${group}` : plural;
}

type BuiltinSpec = Omit<
  ResourceType,
  'listKind' | 'storageKey' | 'singular' | 'selectableFields' | 'categories' | 'strategicMergePatch'
> &
  Partial<Pick<ResourceType, 'selectableFields' | 'categories'>>;

function builtin(spec: BuiltinSpec): ResourceType {
  return {
    ...spec,
    singular: spec.kind.toLowerCase(),
    listKind: `${spec.kind}List`,
    storageKey: storageKeyOf(spec.group, spec.plural),
    selectableFields: spec.selectableFields ?? [],
    categories: spec.categories ?? [],
    strategicMergePatch: true,
  };
}

const APPS_SCALE: ScalePaths = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  labelSelectorPath: '.spec.selector',
};

/** The built-in resources floatip touches, with the field selectors kube-apiserver accepts for them. */
export function builtinResources(): ResourceType[] {
  return [
    builtin({
      group: '',
      version: 'v1',
      plural: 'namespaces',
      kind: 'Namespace',
      namespaced: false,
      shortNames: ['ns'],
      statusSubresource: true,
      selectableFields: ['status.phase'],
    }),
    builtin({
      group: '',
      version: 'v1',
      plural: 'nodes',
      kind: 'Node',
      namespaced: false,
      shortNames: ['no'],
      statusSubresource: true,
      selectableFields: ['spec.unschedulable'],
    }),
    builtin({
      group: '',
      version: 'v1',
      plural: 'pods',
      kind: 'Pod',
      namespaced: true,
      shortNames: ['po'],
      categories: ['all'],
      statusSubresource: true,
      binding: true,
      selectableFields: [
        'spec.nodeName',
        'spec.restartPolicy',
        'spec.schedulerName',
        'spec.serviceAccountName',
        'spec.hostNetwork',
        'status.phase',
        'status.podIP',
        'status.nominatedNodeName',
      ],
    }),
    builtin({
      group: '',
      version: 'v1',
      plural: 'configmaps',
      kind: 'ConfigMap',
      namespaced: true,
      shortNames: ['cm'],
      statusSubresource: false,
    }),
    builtin({
      group: '',
      version: 'v1',
      plural: 'events',
      kind: 'Event',
      namespaced: true,
      shortNames: ['ev'],
      statusSubresource: false,
      allowCreateOnUpdate: true,
      selectableFields: [
        'involvedObject.kind',
        'involvedObject.namespace',
        'involvedObject.name',
        'involvedObject.uid',
        'involvedObject.apiVersion',
        'involvedObject.resourceVersion',
        'involvedObject.fieldPath',
        'reason',
        'reportingComponent',
        'source',
        'type',
      ],
    }),
    builtin({
      group: 'apps',
      version: 'v1',
      plural: 'deployments',
      kind: 'Deployment',
      namespaced: true,
      shortNames: ['deploy'],
      categories: ['all'],
      statusSubresource: true,
      scale: APPS_SCALE,
    }),
    builtin({
      group: 'apps',
      version: 'v1',
      plural: 'replicasets',
      kind: 'ReplicaSet',
      namespaced: true,
      shortNames: ['rs'],
      categories: ['all'],
      statusSubresource: true,
      scale: APPS_SCALE,
      selectableFields: ['status.replicas'],
    }),
    builtin({
      group: 'apps',
      version: 'v1',
      plural: 'statefulsets',
      kind: 'StatefulSet',
      namespaced: true,
      shortNames: ['sts'],
      categories: ['all'],
      statusSubresource: true,
      scale: APPS_SCALE,
    }),
    builtin({
      group: 'coordination.k8s.io',
      version: 'v1',
      plural: 'leases',
      kind: 'Lease',
      namespaced: true,
      shortNames: [],
      statusSubresource: false,
      allowCreateOnUpdate: true,
    }),
    // computed from ApiServerOptions.auth (reviews.ts), never stored
    builtin({
      group: 'authentication.k8s.io',
      version: 'v1',
      plural: 'tokenreviews',
      kind: 'TokenReview',
      namespaced: false,
      shortNames: [],
      statusSubresource: false,
    }),
    builtin({
      group: 'authorization.k8s.io',
      version: 'v1',
      plural: 'subjectaccessreviews',
      kind: 'SubjectAccessReview',
      namespaced: false,
      shortNames: [],
      statusSubresource: false,
    }),
    // stored only, so that floatip's manifests can be applied to the playground (and checked in CI)
    builtin({
      group: '',
      version: 'v1',
      plural: 'serviceaccounts',
      kind: 'ServiceAccount',
      namespaced: true,
      shortNames: ['sa'],
      statusSubresource: false,
    }),
    builtin({
      group: '',
      version: 'v1',
      plural: 'services',
      kind: 'Service',
      namespaced: true,
      shortNames: ['svc'],
      categories: ['all'],
      statusSubresource: true,
    }),
    builtin({
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      plural: 'clusterroles',
      kind: 'ClusterRole',
      namespaced: false,
      shortNames: [],
      statusSubresource: false,
    }),
    builtin({
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      plural: 'clusterrolebindings',
      kind: 'ClusterRoleBinding',
      namespaced: false,
      shortNames: [],
      statusSubresource: false,
    }),
    builtin({
      group: 'policy',
      version: 'v1',
      plural: 'poddisruptionbudgets',
      kind: 'PodDisruptionBudget',
      namespaced: true,
      shortNames: ['pdb'],
      statusSubresource: true,
    }),
    builtin({
      group: 'apiextensions.k8s.io',
      version: 'v1',
      plural: 'customresourcedefinitions',
      kind: 'CustomResourceDefinition',
      namespaced: false,
      shortNames: ['crd', 'crds'],
      categories: ['api-extensions'],
      statusSubresource: true,
    }),
  ];
}

export const CRD_STORAGE_KEY = storageKeyOf('apiextensions.k8s.io', 'customresourcedefinitions');

/** Every group/version the server serves, and the types in it. */
export class ResourceRegistry {
  /** "group/version" (or "v1" for core) → plural → type */
  private readonly byGroupVersion = new Map<string, Map<string, ResourceType>>();
  /** Insertion order of groups, so discovery is stable and built-in groups come first. */
  private readonly groupOrder: string[] = [];

  constructor(types: ResourceType[] = builtinResources()) {
    for (const rt of types) this.add(rt);
  }

  add(rt: ResourceType): void {
    const gv = apiVersionOf(rt);
    let resources = this.byGroupVersion.get(gv);
    if (!resources) {
      resources = new Map();
      this.byGroupVersion.set(gv, resources);
    }
    resources.set(rt.plural, rt);
    if (!this.groupOrder.includes(rt.group)) this.groupOrder.push(rt.group);
  }

  /** Removes every type a CRD defined; returns them so their watches and objects can go too. */
  removeCrd(crdName: string): ResourceType[] {
    const removed: ResourceType[] = [];
    for (const [gv, resources] of this.byGroupVersion) {
      for (const [plural, rt] of resources) {
        if (rt.crdName === crdName) {
          resources.delete(plural);
          removed.push(rt);
        }
      }
      if (resources.size === 0) this.byGroupVersion.delete(gv);
    }
    return removed;
  }

  lookup(group: string, version: string, plural: string): ResourceType | undefined {
    return this.byGroupVersion.get(group ? `${group}/${version}` : version)?.get(plural);
  }

  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    for (const rt of this.byGroupVersion.get(apiVersion)?.values() ?? []) {
      if (rt.kind === kind) return rt;
    }
    return undefined;
  }

  hasGroupVersion(group: string, version: string): boolean {
    return this.byGroupVersion.has(group ? `${group}/${version}` : version);
  }

  resourcesIn(group: string, version: string): ResourceType[] {
    return [...(this.byGroupVersion.get(group ? `${group}/${version}` : version)?.values() ?? [])];
  }

  /** Named API groups (not the core group), in registration order. */
  groups(): string[] {
    const present = new Set<string>();
    for (const resources of this.byGroupVersion.values()) {
      for (const rt of resources.values()) present.add(rt.group);
    }
    return this.groupOrder.filter((g) => g !== '' && present.has(g));
  }

  versionsOf(group: string): string[] {
    const versions: string[] = [];
    for (const [gv, resources] of this.byGroupVersion) {
      const first = resources.values().next().value;
      if (first && first.group === group) versions.push(gv.slice(group.length + 1));
    }
    return versions.sort(compareKubeVersions);
  }

  all(): ResourceType[] {
    const out: ResourceType[] = [];
    for (const resources of this.byGroupVersion.values()) out.push(...resources.values());
    return out;
  }
}

/**
 * Kubernetes' version priority: GA before beta before alpha, higher numbers first, and anything
 * that is not of the form v1, v2beta1… after those, alphabetically. Discovery lists versions in this order.
 */
export function compareKubeVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [3, 0, 0];
    const stability = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2;
    return [stability, -Number(m[1]), -Number(m[3] ?? 0)];
  };
  const [ra, rb] = [rank(a), rank(b)];
  for (let i = 0; i < 3; i++) {
    const d = (ra[i] ?? 0) - (rb[i] ?? 0);
    if (d !== 0) return d;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}
