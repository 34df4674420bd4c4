// The OpenAPI v2 document at /openapi/v2, for the kubectl releases that read no v3 (v1.20's, which
// Debian ships, among them): before `create` or `apply` they fetch it, as protobuf only, and stop
// with "the server could not find the requested resource" when it is missing. It holds the custom
// resources' schemas (from their CRDs, as kube-apiserver publishes them), so that kubectl validates
// FloatingIP and Pool objects as it would against a cluster. Built-in kinds are left out on purpose:
// kubectl computes its strategic merge patches from the models it finds here, and these would carry
// no list merge keys (client-node's models have none), so `kubectl apply` would replace lists the
// server merges; without a model kubectl uses its compiled-in types, for patches and validation.
import { SERVER_VERSION } from './discovery.js';
import type { ResourceRegistry, ResourceType } from './registry.js';
import { gvk, listSchemaOf, schemasOf, type JsonSchema } from './schemas.js';
import { isPlainObject } from './types.js';

/** What OpenAPI v3 has and v2 cannot say; kube-apiserver drops them from CRD schemas too. */
const V3_ONLY = new Set(['nullable', 'oneOf', 'anyOf', 'not']);

/** The types kubectl's parser (kube-openapi) knows; any other type fails the whole document. */
const V2_TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean']);

const V3_REF = '#/components/schemas/';

/**
 * A v3 schema as v2: references into #/definitions, v3-only keywords dropped. What kubectl v1.20
 * cannot parse is left out, since one such schema fails every kubectl create and apply (the whole
 * document is parsed first): a type it does not know or more than one, an array without items, a
 * reference to anything but a definition in `known`. kube-apiserver refuses such CRD schemas; this
 * server keeps CRDs as sent, so they are cleaned here.
 */
export function toV2Schema(schema: JsonSchema, known: ReadonlySet<string>): JsonSchema {
  if (schema.$ref !== undefined) {
    const name =
      typeof schema.$ref === 'string' && schema.$ref.startsWith(V3_REF)
        ? schema.$ref.slice(V3_REF.length)
        : '';
    return known.has(name) ? { $ref: `#/definitions/${name}` } : {};
  }
  const out: JsonSchema = {};
  const sub = (value: unknown): JsonSchema => (isPlainObject(value) ? toV2Schema(value, known) : {});
  // kubectl reports every field a schema with properties does not name; the server keeps them
  const preserves = schema['x-kubernetes-preserve-unknown-fields'] === true;
  for (const [key, value] of Object.entries(schema)) {
    if (V3_ONLY.has(key)) continue;
    if (key === 'type') {
      const type = Array.isArray(value) && value.length === 1 ? value[0] : value;
      if (typeof type === 'string' && V2_TYPES.has(type)) out.type = type;
    } else if (key === 'properties') {
      if (preserves || !isPlainObject(value)) continue;
      out.properties = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, sub(s)]));
    } else if (key === 'items' || (key === 'additionalProperties' && typeof value !== 'boolean')) {
      out[key] = sub(value);
    } else if (key === 'allOf' && Array.isArray(value)) {
      out.allOf = value.map(sub);
    } else {
      out[key] = value;
    }
  }
  if (out.type === 'array' && out.items === undefined) out.items = {};
  return out;
}

/** The definitions of one custom resource: its kind (with the standard metadata) and its list. */
function definitionsOf(rt: ResourceType): Record<string, JsonSchema> {
  const { name, defs } = schemasOf(rt);
  defs[`${name}List`] = listSchemaOf(rt, name);
  return defs;
}

/**
 * Each kind's PATCH with its dryRun parameter: kubectl v1.20 looks for it before a
 * `--dry-run=server` and refuses the kind without. No `consumes`: a kubectl that finds patch types
 * here uses them instead of its compiled-in ones (which know strategic merge patch).
 */
function patchPath(rt: ResourceType): [string, JsonSchema] {
  const base = rt.group ? `/apis/${rt.group}/${rt.version}` : '/api/v1';
  const path = `${base}${rt.namespaced ? '/namespaces/{namespace}' : ''}/${rt.plural}/{name}`;
  const patch = {
    operationId: `patch${rt.kind}`,
    parameters: [{ name: 'dryRun', in: 'query', type: 'string', uniqueItems: true }],
    responses: { '200': { description: 'OK' } },
    'x-kubernetes-action': 'patch',
    'x-kubernetes-group-version-kind': gvk(rt),
  };
  return [path, { patch }];
}

const byPlural = (a: ResourceType, b: ResourceType) =>
  a.group === b.group ? (a.plural < b.plural ? -1 : a.plural > b.plural ? 1 : 0) : a.group < b.group ? -1 : 1;

/** Swagger 2.0: every kind's PATCH, and the definitions of every custom resource. */
export function openApiV2Document(registry: ResourceRegistry): JsonSchema {
  const types = [...registry.all()].sort(byPlural);
  const v3: Record<string, JsonSchema> = {};
  for (const rt of types.filter((t) => t.crdName !== undefined)) Object.assign(v3, definitionsOf(rt));
  const known = new Set(Object.keys(v3));
  const definitions: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(v3)) definitions[name] = toV2Schema(schema, known);
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion },
    paths: Object.fromEntries(types.map(patchPath)),
    definitions,
  };
}
