// What went wrong talking to the API server, in Kubernetes' terms (status code and reason), so
// callers can tell a conflict from an outage; one translation of whatever client-node threw.
import { STATUS_CODES } from 'node:http';
import { ApiException } from '@kubernetes/client-node';

export class KubeApiError extends Error {
  constructor(
    /** HTTP status; 0 when the server was not reached. */
    readonly status: number,
    /** Kubernetes' reason (NotFound, Conflict, AlreadyExists, Gone, ...); "" when unknown. */
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }

  /**
   * What to do about it (the kinds of src/ipam/errors.ts, which this room may not import): a changed
   * or vanished object means deciding again; a refused request is the caller's mistake; no access
   * means this replica cannot act; anything else (unreachable, 429, 5xx) is retried.
   */
  get kind(): 'validation' | 'conflict' | 'unavailable' | 'transient' {
    if (this.status === 404 || this.status === 409 || this.status === 410) return 'conflict';
    if (this.status === 400 || this.status === 422) return 'validation';
    if (this.status === 401 || this.status === 403) return 'unavailable';
    return 'transient';
  }
  override get name(): string {
    return 'KubeApiError';
  }
}

export const isNotFound = (err: unknown): boolean => err instanceof KubeApiError && err.status === 404;
export const isConflict = (err: unknown): boolean => err instanceof KubeApiError && err.status === 409;
export const isAlreadyExists = (err: unknown): boolean =>
  err instanceof KubeApiError && err.status === 409 && err.reason === 'AlreadyExists';

/** The error of an answer that is not a success: its Status's reason and message when it has one. */
export function answerError(status: number, text: string, what: string): KubeApiError {
  let s: { reason?: unknown; message?: unknown } | undefined;
  try {
    s = text ? (JSON.parse(text) as typeof s) : undefined;
  } catch {
    s = undefined;
  }
  const reason = typeof s?.reason === 'string' ? s.reason : '';
  // a plain-text answer (kube-apiserver's 429) ends with a newline that is no part of what it says;
  // one without a body (client-node drops a body its OpenAPI document gives no schema, such as a
  // 401's Status) says its code, not the word "undefined"
  const message =
    typeof s?.message === 'string' && s.message
      ? s.message
      : text.trim() || `HTTP ${status} ${STATUS_CODES[status] ?? ''}`.trimEnd();
  return new KubeApiError(status, reason, `${what}: ${message}`);
}

/** Translates whatever client-node threw into a KubeApiError. */
export function kubeError(err: unknown, what: string): KubeApiError {
  if (err instanceof KubeApiError) return err;
  if (err instanceof ApiException) {
    const body: unknown = err.body;
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    return answerError(err.code, text, what);
  }
  // a call's signal fired: fetch says "The user aborted a request.", but no user did; it is the
  // per-call bound of shared-agent.ts (or the caller's own) that ran out
  if ((err as Error)?.name === 'AbortError')
    return new KubeApiError(0, '', `${what}: no answer in time (the request was aborted)`);
  return new KubeApiError(0, '', `${what}: ${(err as Error)?.message ?? String(err)}`);
}
