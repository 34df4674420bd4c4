// The schema of every kind the server serves, from the same sources a client would trust: built-in
// kinds from @kubernetes/client-node's generated models (their field maps are Kubernetes' OpenAPI),
// custom resources from their CRD's openAPIV3Schema. Used for the OpenAPI documents and for
// fieldValidation (unknown fields), nothing else: objects are still stored as sent.
import * as models from '@kubernetes/client-node';
import type { ResourceType } from './registry.js';
import { isPlainObject } from './types.js';

interface Attribute {
  baseName: string;
  type: string;
  format: string;
}
interface Model {
  getAttributeTypeMap(): Attribute[];
}
export type JsonSchema = Record<string, unknown>;

const modelTable = models as unknown as Record<string, Partial<Model> | undefined>;

function model(name: string): Model | undefined {
  const m = modelTable[name];
  return typeof m?.getAttributeTypeMap === 'function' ? (m as Model) : undefined;
}

const capitalised = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** client-node's model name for a built-in kind: `V1Pod`, or `CoreV1Event` where names clash. */
export function modelNameOf(rt: Pick<ResourceType, 'version' | 'kind'>): string | undefined {
  const v = capitalised(rt.version);
  return [`${v}${rt.kind}`, `Core${v}${rt.kind}`].find((n) => model(n) !== undefined);
}

const META = new Set([
  'ObjectMeta',
  'ListMeta',
  'LabelSelector',
  'LabelSelectorRequirement',
  'OwnerReference',
  'ManagedFieldsEntry',
  'Status',
  'StatusDetails',
  'StatusCause',
  'DeleteOptions',
  'Preconditions',
  'Condition',
]);

/** Kubernetes' definition names: io.k8s.api.core.v1.Pod, io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta. */
export function definitionName(modelName: string, rt: Pick<ResourceType, 'group' | 'version'>): string {
  const m = /^(?:[A-Z][a-z]+)?(V\d+(?:alpha\d+|beta\d+)?)(.+)$/.exec(modelName);
  const version = m?.[1]?.toLowerCase() ?? rt.version;
  const kind = m?.[2] ?? modelName;
  if (META.has(kind)) return `io.k8s.apimachinery.pkg.apis.meta.${version}.${kind}`;
  if (rt.group === 'apiextensions.k8s.io')
    return `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${version}.${kind}`;
  const pkg = rt.group === '' ? 'core' : rt.group.replace(/\.k8s\.io$/, '').replace(/\.authorization$/, '');
  return `io.k8s.api.${pkg}.${version}.${kind}`;
}

const ARRAY = /^Array<(.+)>$/;
const MAP = /^\{ \[key: string\]: (.+); \}$/;

/** One client-node attribute type as JSON Schema; models become $refs, collected in `defs`. */
function typeSchema(
  type: string,
  format: string,
  rt: ResourceType,
  defs: Record<string, JsonSchema>,
): JsonSchema {
  const array = ARRAY.exec(type);
  if (array) return { type: 'array', items: typeSchema(array[1]!, '', rt, defs) };
  const map = MAP.exec(type);
  if (map) return { type: 'object', additionalProperties: typeSchema(map[1]!, format, rt, defs) };
  switch (type) {
    case 'string':
      return format ? { type: 'string', format } : { type: 'string' };
    case 'Date':
      return { type: 'string', format: 'date-time' };
    case 'number':
      return format === 'double'
        ? { type: 'number', format }
        : { type: 'integer', format: format || 'int64' };
    case 'boolean':
      return { type: 'boolean' };
    case 'IntOrString':
      return { 'x-kubernetes-int-or-string': true };
    case 'any':
    case 'object':
      return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  }
  if (!model(type)) return {};
  const name = definitionName(type, rt);
  if (!(name in defs)) {
    defs[name] = {}; // recursive types (JSONSchemaProps) refer to themselves
    defs[name] = modelSchema(type, rt, defs);
  }
  return { $ref: `#/components/schemas/${name}` };
}

function modelSchema(name: string, rt: ResourceType, defs: Record<string, JsonSchema>): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const a of model(name)!.getAttributeTypeMap()) {
    properties[a.baseName] = typeSchema(a.type, a.format, rt, defs);
  }
  return { type: 'object', properties };
}

/**
 * The definitions a document needs for `rt`, and the name of its kind's own. A custom resource's
 * schema is its CRD's, with the standard apiVersion, kind and metadata.
 */
export function schemasOf(rt: ResourceType): { name: string; defs: Record<string, JsonSchema> } {
  const defs: Record<string, JsonSchema> = {};
  const modelName = rt.crdName === undefined ? modelNameOf(rt) : undefined;
  if (modelName) {
    typeSchema(modelName, '', rt, defs);
    const name = definitionName(modelName, rt);
    defs[name] = { ...defs[name], 'x-kubernetes-group-version-kind': [gvk(rt)] };
    return { name, defs };
  }
  const name = `${rt.group.split('.').reverse().join('.')}.${rt.version}.${rt.kind}`;
  const meta = typeSchema('V1ObjectMeta', '', rt, defs);
  const schema = rt.schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const properties = isPlainObject(schema.properties) ? schema.properties : {};
  // kube-apiserver publishes apiVersion and kind for every custom resource, declared or not
  defs[name] = {
    ...schema,
    properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, ...properties, metadata: meta },
    'x-kubernetes-group-version-kind': [gvk(rt)],
  };
  return { name, defs };
}

/** The schema of a kind's list, whose items are the kind's definition `kindName`. */
export function listSchemaOf(rt: ResourceType, kindName: string): JsonSchema {
  return {
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      items: { type: 'array', items: { $ref: `#/components/schemas/${kindName}` } },
    },
    'x-kubernetes-group-version-kind': [{ ...gvk(rt), kind: rt.listKind }],
  };
}

export function gvk(rt: Pick<ResourceType, 'group' | 'version' | 'kind'>): object {
  return { group: rt.group, version: rt.version, kind: rt.kind };
}

// ---- unknown fields (fieldValidation)

const join = (path: string, field: string): string => (path ? `${path}.${field}` : field);

/** field → type per model, built once: every write is checked. */
const fieldTypes = new Map<string, Map<string, string> | undefined>();

function fieldsOf(name: string): Map<string, string> | undefined {
  if (!fieldTypes.has(name)) {
    const m = model(name);
    fieldTypes.set(name, m && new Map(m.getAttributeTypeMap().map((a) => [a.baseName, a.type])));
  }
  return fieldTypes.get(name);
}

function unknownInModel(value: unknown, name: string, path: string, out: string[]): void {
  const attributes = fieldsOf(name);
  if (!attributes || !isPlainObject(value)) return;
  for (const [field, v] of Object.entries(value)) {
    const type = attributes.get(field);
    if (type === undefined) out.push(join(path, field));
    else unknownInType(v, type, join(path, field), out);
  }
}

function unknownInType(value: unknown, type: string, path: string, out: string[]): void {
  const array = ARRAY.exec(type);
  if (array) {
    if (Array.isArray(value)) value.forEach((v, i) => unknownInType(v, array[1]!, `${path}[${i}]`, out));
    return;
  }
  const map = MAP.exec(type);
  if (map) {
    if (isPlainObject(value))
      for (const [k, v] of Object.entries(value)) unknownInType(v, map[1]!, join(path, k), out);
    return;
  }
  unknownInModel(value, type, path, out);
}

function unknownInSchema(value: unknown, schema: unknown, path: string, out: string[]): void {
  if (!isPlainObject(schema)) return;
  if (Array.isArray(value)) {
    value.forEach((v, i) => unknownInSchema(v, schema.items, `${path}[${i}]`, out));
    return;
  }
  if (!isPlainObject(value)) return;
  const properties = isPlainObject(schema.properties) ? schema.properties : {};
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  for (const [field, v] of Object.entries(value)) {
    if (field in properties) unknownInSchema(v, properties[field], join(path, field), out);
    else if (isPlainObject(schema.additionalProperties))
      unknownInSchema(v, schema.additionalProperties, join(path, field), out);
    else if (!preserve && schema.additionalProperties !== true) out.push(join(path, field));
  }
}

/** The fields of `obj` its kind does not declare, as kube-apiserver names them (`spec.containers[0].x`). */
export function unknownFields(rt: ResourceType, obj: unknown): string[] {
  const out: string[] = [];
  if (rt.crdName === undefined) {
    const name = modelNameOf(rt);
    if (name) unknownInModel(obj, name, '', out);
    return out;
  }
  if (!isPlainObject(obj)) return out;
  const { metadata, apiVersion: _a, kind: _k, ...rest } = obj;
  unknownInModel(metadata, 'V1ObjectMeta', 'metadata', out);
  if (rt.schema) unknownInSchema(rest, { ...rt.schema, properties: rt.schema.properties ?? {} }, '', out);
  return out;
}
