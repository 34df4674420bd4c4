// Turns a request path into what it addresses, following kube-apiserver's RequestInfoFactory:
// /api/v1/namespaces/<ns>/<resource>/<name>/<subresource> and /apis/<group>/<version>/…
import { badRequest } from './status.js';
import type { Verb } from './types.js';

export type RequestTarget =
  | { kind: 'apiVersions' }
  | { kind: 'groupList' }
  | { kind: 'group'; group: string }
  | { kind: 'resourceList'; group: string; version: string }
  | ResourceRequest
  | { kind: 'other'; path: string };

export interface ResourceRequest {
  kind: 'resource';
  verb: Verb;
  group: string;
  version: string;
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/** strconv.ParseBool, which is how kube-apiserver reads `watch=`. */
export function parseBool(value: string | null): boolean {
  return value !== null && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value);
}

function decodeSegments(path: string): string[] {
  try {
    return path
      .split('/')
      .filter((s) => s !== '')
      .map((s) => decodeURIComponent(s));
  } catch {
    throw badRequest(`malformed URL path: ${path}`);
  }
}

/** Undefined verb means the method is not served at that path (405). */
function verbFor(
  method: string,
  named: boolean,
  subresource: string | undefined,
  watch: boolean,
): Verb | undefined {
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (watch) return 'watch';
      return named ? 'get' : 'list';
    case 'POST':
      if (!named) return 'create';
      return subresource ? 'create' : undefined;
    case 'PUT':
      return named ? 'update' : undefined;
    case 'PATCH':
      return named ? 'patch' : undefined;
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      return undefined;
  }
}

export function parseRequestTarget(method: string, url: URL): RequestTarget | { kind: 'methodNotAllowed' } {
  const segs = decodeSegments(url.pathname);
  let group: string;
  let rest: string[];
  if (segs[0] === 'api') {
    if (segs.length === 1) return { kind: 'apiVersions' };
    group = '';
    rest = segs.slice(1);
  } else if (segs[0] === 'apis') {
    if (segs.length === 1) return { kind: 'groupList' };
    group = segs[1] ?? '';
    if (segs.length === 2) return { kind: 'group', group };
    rest = segs.slice(2);
  } else {
    return { kind: 'other', path: url.pathname };
  }
  const version = rest[0] ?? '';
  rest = rest.slice(1);
  if (rest.length === 0) return { kind: 'resourceList', group, version };

  let watch = parseBool(url.searchParams.get('watch'));
  if (rest[0] === 'watch') {
    watch = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  // namespaces/<name>/status and /finalize are subresources of a namespace, not a namespaced list.
  const namespaceSubresource = rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize');
  if (rest[0] === 'namespaces' && rest.length >= 3 && !namespaceSubresource) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  if (rest.length === 0 || rest.length > 3) return { kind: 'other', path: url.pathname };
  const [resource = '', name, subresource] = rest;
  const verb = verbFor(method, name !== undefined, subresource, watch);
  if (!verb) return { kind: 'methodNotAllowed' };
  const target: ResourceRequest = { kind: 'resource', verb, group, version, resource };
  if (namespace !== undefined) target.namespace = namespace;
  if (name !== undefined) target.name = name;
  if (subresource !== undefined) target.subresource = subresource;
  return target;
}
