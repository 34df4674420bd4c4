// The three patch formats clients send to PATCH: JSON merge patch (RFC 7386), JSON patch (RFC 6902, via
// fast-json-patch) and a strategic merge patch that knows the list merge keys of the built-in kinds.
import jsonPatch from 'fast-json-patch';
import { badRequest, unprocessable, unsupportedMediaType } from './status.js';
import { isPlainObject } from './types.js';

export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

export type PatchType = 'json' | 'merge' | 'strategic';

/** Maps a PATCH request's Content-Type to a patch format; 415 for anything else, as kube-apiserver does. */
export function patchTypeOf(contentType: string | undefined, strategicAllowed: boolean): PatchType {
  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const accepted = strategicAllowed
    ? `${PATCH_TYPES.json}, ${PATCH_TYPES.merge}, ${PATCH_TYPES.strategic}`
    : `${PATCH_TYPES.json}, ${PATCH_TYPES.merge}`;
  if (mediaType === PATCH_TYPES.json) return 'json';
  if (mediaType === PATCH_TYPES.merge) return 'merge';
  if (mediaType === PATCH_TYPES.strategic && strategicAllowed) return 'strategic';
  if (mediaType === PATCH_TYPES.apply) {
    throw unsupportedMediaType(
      `server-side apply is not supported by the floatip development API server; accepted media types include: ${accepted}`,
    );
  }
  throw unsupportedMediaType(
    `the body of the request was in an unknown format - accepted media types include: ${accepted}`,
  );
}

/** RFC 7386: objects merge recursively, null deletes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key === '__proto__') continue;
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

export function applyJsonPatch(target: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw badRequest('json patch must be an array of operations');
  try {
    // validate=true checks each operation's shape and that paths exist; mutate=false leaves target alone.
    return jsonPatch.applyPatch(target, patch as jsonPatch.Operation[], true, false).newDocument;
  } catch (err) {
    if (err instanceof jsonPatch.JsonPatchError) {
      const op = err.operation ? ` (operation ${err.index ?? '?'}: ${JSON.stringify(err.operation)})` : '';
      const message = `the server rejected our request due to an error in our request: ${err.name}${op}`;
      if (err.name === 'OPERATION_OP_INVALID' || err.name === 'SEQUENCE_NOT_AN_ARRAY')
        throw badRequest(message);
      throw unprocessable(message);
    }
    throw unprocessable(`json patch failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * patchMergeKey of the lists in the built-in kinds floatip uses. Kubernetes reads these from Go struct tags;
 * keyed by field name here, which is unambiguous for these kinds.
 */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  env: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  ports: 'containerPort',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  conditions: 'type',
  addresses: 'type',
  ownerReferences: 'uid',
  topologySpreadConstraints: 'topologyKey',
  resourceClaims: 'name',
  readinessGates: 'conditionType',
  podIPs: 'ip',
  hostIPs: 'ip',
};

/** Lists of scalars with patchStrategy=merge: the patch's items are added to the existing ones. */
const MERGED_SCALAR_LISTS = new Set(['finalizers']);

const SET_ORDER = '$setElementOrder/';
const DELETE_FROM = '$deleteFromPrimitiveList/';

function sameKey(a: unknown, b: unknown, mergeKey: string): boolean {
  return isPlainObject(a) && isPlainObject(b) && a[mergeKey] !== undefined && a[mergeKey] === b[mergeKey];
}

function mergeList(field: string, original: unknown[], patch: unknown[]): unknown[] {
  const mergeKey = MERGE_KEYS[field];
  if (patch.some((p) => isPlainObject(p) && p.$patch === 'replace')) {
    return patch.filter((p) => !(isPlainObject(p) && p.$patch === 'replace')).map(stripDirectives);
  }
  if (mergeKey) {
    const result = [...original];
    for (const item of patch) {
      const at = result.findIndex((o) => sameKey(o, item, mergeKey));
      if (isPlainObject(item) && item.$patch === 'delete') {
        if (at >= 0) result.splice(at, 1);
      } else if (at >= 0) {
        result[at] = strategicMerge(result[at], item);
      } else {
        result.push(stripDirectives(item));
      }
    }
    return result;
  }
  if (MERGED_SCALAR_LISTS.has(field)) {
    const result = [...original];
    for (const item of patch) if (!result.includes(item)) result.push(item);
    return result;
  }
  return patch.map(stripDirectives);
}

function stripDirectives(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripDirectives);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('$') || k === '__proto__') continue;
    out[k] = stripDirectives(v);
  }
  return out;
}

function reorder(list: unknown[], order: unknown[], mergeKey: string | undefined): unknown[] {
  const position = (item: unknown): number =>
    order.findIndex((o) => (mergeKey ? sameKey(o, item, mergeKey) : o === item));
  const ordered = list.filter((item) => position(item) >= 0).sort((a, b) => position(a) - position(b));
  return [...ordered, ...list.filter((item) => position(item) < 0)];
}

/**
 * Strategic merge patch for the fields kubectl and controllers send: merge-keyed lists merge by key,
 * `$patch: replace|delete`, `$setElementOrder/…`, `$deleteFromPrimitiveList/…` and `$retainKeys` are honoured;
 * lists without a known merge key are replaced, as Kubernetes does for atomic lists.
 */
export function strategicMerge(original: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  if (patch.$patch === 'replace') return stripDirectives(patch);
  if (patch.$patch === 'delete') return undefined;
  const result: Record<string, unknown> = isPlainObject(original) ? { ...original } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$') || key === '__proto__') continue;
    if (value === null) {
      delete result[key];
    } else if (Array.isArray(value)) {
      const current = result[key];
      result[key] = mergeList(key, Array.isArray(current) ? current : [], value);
    } else if (isPlainObject(value)) {
      const merged = strategicMerge(result[key], value);
      if (merged === undefined) delete result[key];
      else result[key] = merged;
    } else {
      result[key] = value;
    }
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith(DELETE_FROM) && Array.isArray(value)) {
      const field = key.slice(DELETE_FROM.length);
      const current = result[field];
      if (Array.isArray(current)) result[field] = current.filter((item) => !value.includes(item));
    }
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith(SET_ORDER) && Array.isArray(value)) {
      const field = key.slice(SET_ORDER.length);
      const current = result[field];
      if (Array.isArray(current)) result[field] = reorder(current, value, MERGE_KEYS[field]);
    }
  }
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys.map(String));
    for (const key of Object.keys(result)) if (!keep.has(key)) delete result[key];
  }
  return result;
}

export function applyPatch(type: PatchType, target: unknown, patch: unknown): unknown {
  switch (type) {
    case 'json':
      return applyJsonPatch(target, patch);
    case 'merge':
      if (!isPlainObject(patch)) throw badRequest('merge patch must be a JSON object');
      return mergePatch(target, patch);
    case 'strategic':
      if (!isPlainObject(patch)) throw badRequest('strategic merge patch must be a JSON object');
      return strategicMerge(target, patch);
  }
}
