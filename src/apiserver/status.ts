// Kubernetes answers every failure with a `Status` object; clients (client-go, client-node, kubectl) read
// `reason` and `code` from it, so every error this server produces goes through here.

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'RequestEntityTooLarge'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout'
  | 'Expired'
  | '';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

const reasonByCode: Record<number, StatusReason> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** The reason kube-apiserver uses for a bare HTTP code (as for an injected fault). */
export function reasonForCode(code: number): StatusReason {
  return reasonByCode[code] ?? (code >= 500 ? 'InternalError' : '');
}

/** Identifies the resource an error is about, the way kube-apiserver fills `details`. */
export interface ResourceRef {
  group: string;
  /** The plural resource name, e.g. "pods"; kube-apiserver reports it as `details.kind`. */
  resource: string;
}

function qualified(ref: ResourceRef): string {
  return ref.group ? `${ref.resource}.${ref.group}` : ref.resource;
}

/** An error that is answered to the client as a Kubernetes Status with the given code. */
export class ApiError extends Error {
  readonly code: number;
  readonly reason: StatusReason;
  readonly details: StatusDetails | undefined;

  constructor(code: number, reason: StatusReason, message: string, details?: StatusDetails) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  toStatus(): StatusBody {
    const body: StatusBody = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) body.details = this.details;
    return body;
  }
}

export function notFound(ref: ResourceRef, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualified(ref)} "${name}" not found`, {
    name,
    group: ref.group,
    kind: ref.resource,
  });
}

export function alreadyExists(ref: ResourceRef, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualified(ref)} "${name}" already exists`, {
    name,
    group: ref.group,
    kind: ref.resource,
  });
}

export function conflict(ref: ResourceRef, name: string, why: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(ref)} "${name}": ${why}`,
    {
      name,
      group: ref.group,
      kind: ref.resource,
    },
  );
}

export const STALE_OBJECT =
  'the object has been modified; please apply your changes to the latest version and try again';

/**
 * 422: the object itself is wrong, worded as kube-apiserver's NewInvalid: the kind qualified by its
 * group (`Pool.galaxy.k8s.io "p" is invalid: ...`), one cause as it is, several in brackets with
 * repeated texts once (field.ErrorList's aggregate). `details.kind` is the bare Kind.
 */
export function invalid(
  kind: string,
  group: string,
  name: string,
  causes: { field: string; message: string; reason?: string }[],
): ApiError {
  const texts = [...new Set(causes.map((c) => `${c.field}: ${c.message}`))];
  const summary = texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  return new ApiError(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${summary}`, {
    name,
    group,
    kind,
    causes: causes.map((c) => ({
      reason: c.reason ?? 'FieldValueInvalid',
      message: c.message,
      field: c.field,
    })),
  });
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function gone(message: string): ApiError {
  return new ApiError(410, 'Gone', message);
}

export function methodNotAllowed(message: string): ApiError {
  return new ApiError(405, 'MethodNotAllowed', message);
}

export function unsupportedMediaType(message: string): ApiError {
  return new ApiError(415, 'UnsupportedMediaType', message);
}

export function unprocessable(message: string): ApiError {
  return new ApiError(422, 'Invalid', message);
}

export function pathNotFound(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function internalError(err: unknown): ApiError {
  const message = err instanceof Error ? err.message : String(err);
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, {
    causes: [{ message }],
  });
}

/** A Status for a fault a test injected, shaped like the real one for that code. */
export function injectedStatus(code: number, message: string | undefined, reason?: StatusReason): ApiError {
  const why = reason ?? reasonForCode(code);
  // a 429 asks for a second's wait, as kube-apiserver's in-flight limit and flow control answer
  const details = code === 429 ? { retryAfterSeconds: 1 } : undefined;
  return new ApiError(code, why, message ?? `injected fault: ${why || 'HTTP ' + code}`, details);
}
