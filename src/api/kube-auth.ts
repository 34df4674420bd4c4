// --api-auth=kubernetes: REST callers present a bearer token; the API server says who they are
// (TokenReview) and whether they may do what they ask (SubjectAccessReview), as kubectl's own
// requests are judged. Reading needs `list floatingips`, releasing `delete floatingips`, pool changes
// the matching verb on `pools`, all in galaxy.k8s.io. A short cache keeps a busy caller from turning
// every request into two API calls; it is bounded, because its keys (tokens) come from callers.
import { AuthenticationV1Api, AuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../log.js';
import { ApiError } from './envelope.js';
import type { Identity } from './identity.js';
import { apiClient } from '../kube/resend.js';

const GROUP = 'galaxy.k8s.io';
const CACHE_MS = 10_000;
/** Tokens and decisions remembered at most: a caller sending random tokens evicts, never grows. */
const CACHE_ENTRIES = 1000;

/**
 * What a request needs: the verb and resource it is checked against. Decided on the path as express
 * routes it, case-insensitively and with an optional trailing slash: `POST /V1/IP` and `POST
 * /v1/ip/` are the release, and `DELETE /V1/pool/p` deletes a pool, so checking the path as sent
 * let a caller who may only list release addresses and change pools.
 */
export function permissionFor(method: string, sentPath: string): { verb: string; resource: string } {
  const path = sentPath.toLowerCase().replace(/\/$/, '');
  if (path.startsWith('/v1/pool')) {
    if (method === 'GET') return { verb: 'get', resource: 'pools' };
    if (method === 'DELETE') return { verb: 'delete', resource: 'pools' };
    // POST /v1/pool creates or updates: both are a change of pools, checked as `update`
    return { verb: 'update', resource: 'pools' };
  }
  if (method === 'POST' && path === '/v1/ip') return { verb: 'delete', resource: 'floatingips' };
  return { verb: 'list', resource: 'floatingips' };
}

export function kubernetesAuth(kubeConfig: KubeConfig, log: Logger): RequestHandler {
  const authn = apiClient(kubeConfig, AuthenticationV1Api);
  const authz = apiClient(kubeConfig, AuthorizationV1Api);
  const cache = { max: CACHE_ENTRIES, ttl: CACHE_MS };
  // a token the API server refused is remembered too
  const identities = new LRUCache<string, Identity | { refused: true }>(cache);
  const decisions = new LRUCache<string, { allowed: boolean }>(cache);

  const whoIs = async (token: string): Promise<Identity | undefined> => {
    const cached = identities.get(token);
    if (cached) return 'refused' in cached ? undefined : cached;
    const review = await authn.createTokenReview({ body: { spec: { token } } });
    const user = review.status?.authenticated ? review.status.user : undefined;
    const identity = user?.username ? { user: user.username, groups: user.groups ?? [] } : undefined;
    identities.set(token, identity ?? { refused: true });
    return identity;
  };

  const may = async (identity: Identity, verb: string, resource: string): Promise<boolean> => {
    const key = `${identity.user}\u0000${verb}\u0000${resource}`;
    const cached = decisions.get(key);
    if (cached) return cached.allowed;
    const review = await authz.createSubjectAccessReview({
      body: {
        spec: {
          user: identity.user,
          groups: [...(identity.groups ?? [])],
          resourceAttributes: { verb, group: GROUP, resource },
        },
      },
    });
    const allowed = review.status?.allowed === true;
    decisions.set(key, { allowed });
    return allowed;
  };

  return async (req: Request, _res: Response, next: NextFunction) => {
    const header = req.headers.authorization ?? '';
    const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
    if (!token) throw new ApiError(401, 'send a bearer token (Authorization: Bearer <token>)');
    let identity: Identity | undefined;
    try {
      identity = await whoIs(token);
    } catch (err) {
      log.error({ err: (err as Error).message }, 'TokenReview failed');
      throw new ApiError(503, 'cannot check the token now: the API server did not answer the TokenReview');
    }
    if (!identity) throw new ApiError(401, 'the token is not valid');
    const { verb, resource } = permissionFor(req.method, req.path);
    let allowed: boolean;
    try {
      allowed = await may(identity, verb, resource);
    } catch (err) {
      log.error({ err: (err as Error).message }, 'SubjectAccessReview failed');
      throw new ApiError(
        503,
        'cannot check permissions now: the API server did not answer the SubjectAccessReview',
      );
    }
    if (!allowed) throw new ApiError(403, `${identity.user} may not ${verb} ${resource}.${GROUP}`);
    req.identity = identity;
    next();
  };
}
