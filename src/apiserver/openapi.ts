// OpenAPI v3 documents, as kube-apiserver serves them at /openapi/v3 (a root naming one document per
// group/version) and /openapi/v3/<api/v1 | apis/group/version>, generated from the registry and the
// schemas of its kinds. kubectl reads them to learn that the server validates fields itself
// (`fieldValidation` on PATCH): it then sends ?fieldValidation=Strict instead of validating client-side.
import { createHash } from 'node:crypto';
import { SERVER_VERSION } from './discovery.js';
import { apiVersionOf, type ResourceRegistry, type ResourceType } from './registry.js';
import { gvk, listSchemaOf, schemasOf, type JsonSchema } from './schemas.js';

const query = (name: string, type = 'string'): object => ({ name, in: 'query', schema: { type } });
const WRITE_PARAMS = [query('dryRun'), query('fieldManager'), query('fieldValidation')];
const LIST_PARAMS = [
  query('labelSelector'),
  query('fieldSelector'),
  query('limit', 'integer'),
  query('continue'),
  query('resourceVersion'),
  query('resourceVersionMatch'),
  query('watch', 'boolean'),
  query('allowWatchBookmarks', 'boolean'),
  query('sendInitialEvents', 'boolean'),
  query('timeoutSeconds', 'integer'),
];
const pathParam = (name: string): object => ({
  name,
  in: 'path',
  required: true,
  schema: { type: 'string', uniqueItems: true },
});

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const body = (schema: JsonSchema, types: readonly string[]): object => ({
  content: Object.fromEntries(types.map((t) => [t, { schema }])),
  required: true,
});
const answer = (schema: JsonSchema, code = '200'): object => ({
  [code]: { description: 'OK', content: { 'application/json': { schema } } },
});

function operationId(verb: string, rt: ResourceType, suffix = ''): string {
  const group = rt.group === '' ? 'Core' : rt.group.split('.').map(capitalised).join('');
  const scope = rt.namespaced && verb !== 'listForAllNamespaces' ? 'Namespaced' : '';
  const v = verb === 'listForAllNamespaces' ? 'list' : verb;
  const tail = verb === 'listForAllNamespaces' ? 'ForAllNamespaces' : '';
  return `${v}${group}${capitalised(rt.version)}${scope}${rt.kind}${suffix}${tail}`;
}
const capitalised = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * Patch bodies the server takes. Strategic merge patch is left out even for built-in kinds: these
 * documents carry no list merge keys, and a client computing one from them would get lists wrong;
 * kubectl then computes it from its compiled-in types, as against a server without OpenAPI.
 */
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json'];

function operations(rt: ResourceType, kindRef: JsonSchema, listRef: JsonSchema): Record<string, object> {
  const ext = (action: string): object => ({
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk(rt),
  });
  const base = rt.group ? `/apis/${rt.group}/${rt.version}` : '/api/v1';
  const collection = `${base}${rt.namespaced ? '/namespaces/{namespace}' : ''}/${rt.plural}`;
  const scopeParams = rt.namespaced ? [pathParam('namespace')] : [];
  const paths: Record<string, object> = {
    [collection]: {
      parameters: scopeParams,
      get: {
        operationId: operationId('list', rt),
        ...ext('list'),
        parameters: LIST_PARAMS,
        responses: answer(listRef),
      },
      post: {
        operationId: operationId('create', rt),
        ...ext('post'),
        parameters: WRITE_PARAMS,
        requestBody: body(kindRef, ['application/json']),
        responses: answer(kindRef, '201'),
      },
      delete: {
        operationId: operationId('deletecollection', rt),
        ...ext('deletecollection'),
        parameters: [...LIST_PARAMS, query('dryRun')],
        responses: answer(listRef),
      },
    },
    [`${collection}/{name}`]: {
      parameters: [pathParam('name'), ...scopeParams],
      get: { operationId: operationId('read', rt), ...ext('get'), responses: answer(kindRef) },
      put: {
        operationId: operationId('replace', rt),
        ...ext('put'),
        parameters: WRITE_PARAMS,
        requestBody: body(kindRef, ['application/json']),
        responses: answer(kindRef),
      },
      patch: {
        operationId: operationId('patch', rt),
        ...ext('patch'),
        parameters: WRITE_PARAMS,
        requestBody: body({ type: 'object' }, PATCH_TYPES),
        responses: answer(kindRef),
      },
      delete: {
        operationId: operationId('delete', rt),
        ...ext('delete'),
        parameters: [query('dryRun')],
        responses: answer(kindRef),
      },
    },
  };
  if (rt.namespaced) {
    paths[`${base}/${rt.plural}`] = {
      get: {
        operationId: operationId('listForAllNamespaces', rt),
        ...ext('list'),
        parameters: LIST_PARAMS,
        responses: answer(listRef),
      },
    };
  }
  if (rt.statusSubresource) {
    paths[`${collection}/{name}/status`] = {
      parameters: [pathParam('name'), ...scopeParams],
      get: { operationId: operationId('read', rt, 'Status'), ...ext('get'), responses: answer(kindRef) },
      put: {
        operationId: operationId('replace', rt, 'Status'),
        ...ext('put'),
        parameters: WRITE_PARAMS,
        requestBody: body(kindRef, ['application/json']),
        responses: answer(kindRef),
      },
      patch: {
        operationId: operationId('patch', rt, 'Status'),
        ...ext('patch'),
        parameters: WRITE_PARAMS,
        requestBody: body({ type: 'object' }, PATCH_TYPES),
        responses: answer(kindRef),
      },
    };
  }
  return paths;
}

/** The document for one group/version, or undefined when the server does not serve it. */
export function openApiDocument(
  registry: ResourceRegistry,
  group: string,
  version: string,
): object | undefined {
  const types = registry.resourcesIn(group, version);
  if (types.length === 0) return undefined;
  const paths: Record<string, object> = {};
  const schemas: Record<string, JsonSchema> = {};
  for (const rt of [...types].sort((a, b) => (a.plural < b.plural ? -1 : 1))) {
    const { name, defs } = schemasOf(rt);
    Object.assign(schemas, defs);
    const listName = `${name}List`;
    schemas[listName] = listSchemaOf(rt, name);
    Object.assign(paths, operations(rt, ref(name), ref(listName)));
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion },
    paths,
    components: { schemas },
  };
}

/** Where a group/version's document is: `api/v1`, `apis/apps/v1`. */
const documentPath = (rt: Pick<ResourceType, 'group' | 'version'>): string =>
  rt.group ? `apis/${apiVersionOf(rt)}` : `api/${rt.version}`;

/**
 * The root: every served group/version with its document's URL. The hash changes with the
 * document (a CRD added or changed), so clients that cache by URL fetch it again.
 */
export function openApiRoot(registry: ResourceRegistry): object {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  const seen = new Set<string>();
  for (const rt of registry.all()) {
    const path = documentPath(rt);
    if (seen.has(path)) continue;
    seen.add(path);
    const doc = JSON.stringify(openApiDocument(registry, rt.group, rt.version));
    const hash = createHash('sha512').update(doc).digest('hex').toUpperCase();
    paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
  }
  return { paths };
}

/** `/openapi/v3/api/v1` → core v1; `/openapi/v3/apis/apps/v1` → apps v1; anything else undefined. */
export function documentTarget(pathname: string): { group: string; version: string } | undefined {
  const m = /^\/openapi\/v3\/(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))\/?$/.exec(pathname);
  if (!m) return undefined;
  return m[1] !== undefined ? { group: '', version: m[1] } : { group: m[2]!, version: m[3]! };
}
