// Reading client-node failures: the HTTP code decides whether a harness operation lost a race
// (the object is gone or was replaced) or really failed.
import { ApiException } from '@kubernetes/client-node';

export function httpCode(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

export function isNotFound(err: unknown): boolean {
  return httpCode(err) === 404;
}

/**
 * 404: gone. 409: a UID precondition failed, i.e. the name now belongs to a newer object.
 * 422: the patch would change an immutable field such as metadata.uid (same cause).
 */
export function isGoneOrReplaced(err: unknown): boolean {
  const code = httpCode(err);
  return code === 404 || code === 409 || code === 422;
}

/** A one-line message with the Status reason the API server gave. */
export function describeError(err: unknown): string {
  if (err instanceof ApiException) {
    const body: unknown = err.body;
    let message = '';
    try {
      const status = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: string };
      message = status?.message ?? '';
    } catch {
      message = String(body);
    }
    return `HTTP ${err.code}${message ? `: ${message}` : ''}`;
  }
  return err instanceof Error ? err.message : String(err);
}
