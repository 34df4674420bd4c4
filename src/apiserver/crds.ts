// What a CustomResourceDefinition means to the server: which types it serves, and the status a real
// apiextensions-apiserver reports once it has accepted the names (clients wait for `Established`).
import { storageKeyOf, type PrinterColumn, type ResourceType, type ScalePaths } from './registry.js';
import { invalid } from './status.js';
import { isPlainObject, kubeTimestamp, type KubeObject } from './types.js';

interface CrdNames {
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  shortNames: string[];
  categories: string[];
}

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  status: boolean;
  scale?: ScalePaths;
  selectableFields: string[];
  schema?: Record<string, unknown>;
  printerColumns: PrinterColumn[];
}

interface CrdSpec {
  group: string;
  scope: 'Namespaced' | 'Cluster';
  names: CrdNames;
  versions: CrdVersion[];
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

/** Reads and checks a CRD the way apiextensions validation does for the fields this server relies on. */
function readCrd(crd: KubeObject, builtinKeys: ReadonlySet<string>): CrdSpec {
  const name = crd.metadata?.name ?? '';
  const spec = isPlainObject(crd.spec) ? crd.spec : {};
  const names = isPlainObject(spec.names) ? spec.names : {};
  const causes: { field: string; message: string; reason?: string }[] = [];
  const group = str(spec.group);
  const plural = str(names.plural);
  const kind = str(names.kind);
  if (!group) causes.push({ field: 'spec.group', message: 'Required value', reason: 'FieldValueRequired' });
  if (!plural)
    causes.push({ field: 'spec.names.plural', message: 'Required value', reason: 'FieldValueRequired' });
  if (!kind)
    causes.push({ field: 'spec.names.kind', message: 'Required value', reason: 'FieldValueRequired' });
  if (group && plural && name !== `${plural}.${group}`) {
    causes.push({
      field: 'metadata.name',
      message: `Invalid value: "${name}": must be spec.names.plural+"."+spec.group`,
    });
  }
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    causes.push({
      field: 'spec.scope',
      message: `Unsupported value: ${JSON.stringify(spec.scope ?? '')}: supported values: "Cluster", "Namespaced"`,
      reason: 'FieldValueNotSupported',
    });
  }
  if (group && plural && builtinKeys.has(storageKeyOf(group, plural))) {
    causes.push({
      field: 'metadata.name',
      message: `Invalid value: "${name}": conflicts with a built-in resource`,
    });
  }
  const rawVersions = Array.isArray(spec.versions) ? spec.versions.filter(isPlainObject) : [];
  if (rawVersions.length === 0) {
    causes.push({ field: 'spec.versions', message: 'Required value', reason: 'FieldValueRequired' });
  }
  const versions = rawVersions.map((v, i): CrdVersion => {
    if (!str(v.name)) {
      causes.push({
        field: `spec.versions[${i}].name`,
        message: 'Required value',
        reason: 'FieldValueRequired',
      });
    }
    const sub = isPlainObject(v.subresources) ? v.subresources : {};
    const scale = isPlainObject(sub.scale) ? sub.scale : undefined;
    const version: CrdVersion = {
      name: str(v.name),
      served: v.served !== false,
      storage: v.storage === true,
      status: isPlainObject(sub.status),
      selectableFields: (Array.isArray(v.selectableFields) ? v.selectableFields : [])
        .map((f) => (isPlainObject(f) ? str(f.jsonPath).replace(/^\./, '') : ''))
        .filter(Boolean),
      printerColumns: (Array.isArray(v.additionalPrinterColumns) ? v.additionalPrinterColumns : [])
        .filter(isPlainObject)
        .map((c) => ({
          name: str(c.name),
          type: str(c.type),
          format: str(c.format),
          description: str(c.description),
          priority: typeof c.priority === 'number' ? c.priority : 0,
          jsonPath: str(c.jsonPath),
        })),
    };
    const schema = isPlainObject(v.schema) ? v.schema.openAPIV3Schema : undefined;
    if (isPlainObject(schema)) version.schema = schema;
    if (scale) {
      version.scale = {
        specReplicasPath: str(scale.specReplicasPath) || '.spec.replicas',
        statusReplicasPath: str(scale.statusReplicasPath) || '.status.replicas',
      };
      if (str(scale.labelSelectorPath)) version.scale.labelSelectorPath = str(scale.labelSelectorPath);
    }
    return version;
  });
  if (rawVersions.length > 0 && versions.filter((v) => v.storage).length !== 1) {
    causes.push({
      field: 'spec.versions',
      message: 'Invalid value: must have exactly one version marked as storage version',
    });
  }
  if (causes.length > 0) throw invalid('CustomResourceDefinition', 'apiextensions.k8s.io', name, causes);
  return {
    group,
    scope: spec.scope as CrdSpec['scope'],
    names: {
      plural,
      kind,
      singular: str(names.singular) || kind.toLowerCase(),
      listKind: str(names.listKind) || `${kind}List`,
      shortNames: strings(names.shortNames),
      categories: strings(names.categories),
    },
    versions,
  };
}

/** Throws a 422 Invalid Status if the CRD cannot be served. */
export function validateCrd(crd: KubeObject, builtinKeys: ReadonlySet<string>): void {
  readCrd(crd, builtinKeys);
}

/** The types a (valid) CRD serves: one per served version, all sharing one storage. */
export function typesFromCrd(crd: KubeObject): ResourceType[] {
  const spec = readCrd(crd, new Set());
  return spec.versions
    .filter((v) => v.served)
    .map((v): ResourceType => {
      const rt: ResourceType = {
        group: spec.group,
        version: v.name,
        plural: spec.names.plural,
        singular: spec.names.singular,
        kind: spec.names.kind,
        listKind: spec.names.listKind,
        namespaced: spec.scope === 'Namespaced',
        shortNames: spec.names.shortNames,
        categories: spec.names.categories,
        statusSubresource: v.status,
        selectableFields: v.selectableFields,
        strategicMergePatch: false,
        storageKey: storageKeyOf(spec.group, spec.names.plural),
        crdName: crd.metadata?.name ?? '',
      };
      if (v.scale) rt.scale = v.scale;
      if (v.schema) rt.schema = v.schema;
      rt.printerColumns = v.printerColumns;
      return rt;
    });
}

/** The status apiextensions-apiserver settles on for a CRD whose names were accepted. */
export function establishedStatus(crd: KubeObject, previous?: KubeObject): Record<string, unknown> {
  const spec = readCrd(crd, new Set());
  const prevStatus = isPlainObject(previous?.status) ? previous.status : {};
  const prevConditions = Array.isArray(prevStatus.conditions)
    ? prevStatus.conditions.filter(isPlainObject)
    : [];
  const since = (type: string): string =>
    str(prevConditions.find((c) => c.type === type)?.lastTransitionTime) || kubeTimestamp();
  const stored = new Set(strings(prevStatus.storedVersions));
  for (const v of spec.versions) if (v.storage) stored.add(v.name);
  return {
    acceptedNames: { ...spec.names },
    conditions: [
      {
        type: 'NamesAccepted',
        status: 'True',
        reason: 'NoConflicts',
        message: 'no conflicts found',
        lastTransitionTime: since('NamesAccepted'),
      },
      {
        type: 'Established',
        status: 'True',
        reason: 'InitialNamesAccepted',
        message: 'the initial names have been accepted',
        lastTransitionTime: since('Established'),
      },
    ],
    storedVersions: [...stored],
  };
}
