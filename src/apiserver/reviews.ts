// TokenReview and SubjectAccessReview, answered from a table: enough for tests (and the
// playground) to exercise a client that authenticates and authorises its callers through the API
// server, as floatip's REST API does with --api-auth=kubernetes. Reviews are computed, never stored.
import type { KubeObject } from './types.js';

export interface ReviewTable {
  /** Bearer token -> the user it authenticates. */
  readonly tokens?: Record<string, { username: string; groups?: string[] }>;
  /**
   * Username -> what they may do, as "verb group/resource" ("list galaxy.k8s.io/floatingips"),
   * "verb resource", or "*".
   */
  readonly grants?: Record<string, string[]>;
}

export const REVIEW_RESOURCES = new Set([
  'authentication.k8s.io/tokenreviews',
  'authorization.k8s.io/subjectaccessreviews',
]);

export function review(group: string, resource: string, body: KubeObject, table: ReviewTable): KubeObject {
  const spec = (body.spec ?? {}) as Record<string, unknown>;
  if (resource === 'tokenreviews') {
    const user = table.tokens?.[String(spec.token ?? '')];
    return {
      ...body,
      apiVersion: `${group}/v1`,
      kind: 'TokenReview',
      status: user
        ? { authenticated: true, user: { username: user.username, groups: user.groups ?? [] } }
        : { authenticated: false, error: 'token not recognised' },
    };
  }
  const attributes = (spec.resourceAttributes ?? {}) as { verb?: string; group?: string; resource?: string };
  const grants = table.grants?.[String(spec.user ?? '')] ?? [];
  const asked = [
    `${attributes.verb} ${attributes.group ? `${attributes.group}/` : ''}${attributes.resource}`,
    `${attributes.verb} ${attributes.resource}`,
  ];
  const allowed = grants.includes('*') || asked.some((a) => grants.includes(a));
  return {
    ...body,
    apiVersion: `${group}/v1`,
    kind: 'SubjectAccessReview',
    status: allowed ? { allowed: true } : { allowed: false, reason: `no grant for ${asked[0]}` },
  };
}
