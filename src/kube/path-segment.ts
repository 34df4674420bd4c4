// client-go's IsValidPathSegmentName, which client-node lacks: a name becomes a segment of the
// request's path, and `.`, `..`, or one with `/` or `%` names another path once the URL is
// normalised (`pools/.` is the collection: a DELETE of it deletes every Pool; `pods/..` is the
// namespace). Every name that reaches a URL from a caller passes here first.
import { KubeApiError } from './api-error.js';

/**
 * Whether `name` can be an object's name in a URL path, as client-go allows it. A lone UTF-16
 * surrogate (JSON's `"\ud800"`) has no UTF-8 form: no object is named with one, and a URL cannot
 * carry it (encodeURIComponent throws, which read as the API server failing).
 */
export const isPathSegment = (name: string): boolean =>
  name !== '' && name !== '.' && name !== '..' && !/[/%]/.test(name) && !/\p{Cs}/u.test(name);

/** Throws a 400 KubeApiError (client-go's refusal, before any request) unless isPathSegment. */
export function checkPathSegment(name: string, what: string): void {
  if (!isPathSegment(name)) {
    throw new KubeApiError(
      400,
      'BadRequest',
      `${what}: invalid resource name ${JSON.stringify(name)}: may not be empty, '.' or '..', nor contain '/', '%' or a lone surrogate`,
    );
  }
}
