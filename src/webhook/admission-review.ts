// admission.k8s.io/v1 AdmissionReview, the API server's question to a validating webhook and the
// answer it expects (v1 only: every API server floatip supports, v1.16 and later, speaks it). This
// module is its one decoder: anything else is a BadReviewError, answered 400.
import { clip, clipQuoted } from '../clip.js';

export const REVIEW_API_VERSION = 'admission.k8s.io/v1';

export class BadReviewError extends Error {
  readonly kind = 'validation';
}

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
const OPERATIONS: readonly string[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

/** An object under review: only its shape as a JSON object is promised; judges read it field by field. */
export type ReviewedObject = Record<string, unknown>;

export interface AdmissionRequest {
  readonly uid: string;
  readonly kind: { readonly group: string; readonly version: string; readonly kind: string };
  readonly operation: Operation;
  /** The object's name ("" on a CREATE with generateName) and namespace ("" for cluster-scoped). */
  readonly name: string;
  readonly namespace: string;
  /** The object as it would be written; absent on DELETE. */
  readonly object: ReviewedObject | undefined;
  readonly oldObject: ReviewedObject | undefined;
}

/** What floatip says about one request: allowed or not, why, and warnings kubectl prints. */
export interface Verdict {
  readonly allowed: boolean;
  readonly message?: string;
  readonly warnings?: readonly string[];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Text the writer chose (a name, a path), as a message quotes it: its start, and how long it is. */
export const clipped = (text: string, max = 200): string => clip(text, max);

/**
 * A value the writer sent, as a message names it: a string quoted (clipped), anything else by its
 * type. JSON.stringify of an object nested 100,000 deep overflows the stack, which answered 500.
 */
function shown(value: unknown): string {
  if (typeof value === 'string') return clipQuoted(value, 100);
  if (value === null || value === undefined || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}

/** Decodes a review's JSON value; throws BadReviewError naming the first field that is wrong. */
export function decodeAdmissionReview(body: unknown): AdmissionRequest {
  if (!isObject(body)) throw new BadReviewError('an AdmissionReview must be a JSON object');
  if (body.apiVersion !== REVIEW_API_VERSION || body.kind !== 'AdmissionReview') {
    throw new BadReviewError(
      `expected apiVersion ${REVIEW_API_VERSION}, kind AdmissionReview; got ${shown(body.apiVersion)}, ${shown(body.kind)} (set admissionReviewVersions: ["v1"])`,
    );
  }
  const request = body.request;
  if (!isObject(request)) throw new BadReviewError('request: must be an object');
  const text = (from: Record<string, unknown>, field: string, where: string, required: boolean): string => {
    const value = from[field];
    if (value === undefined && !required) return '';
    if (typeof value !== 'string' || (required && value === ''))
      throw new BadReviewError(`${where}${field}: must be a ${required ? 'non-empty ' : ''}string`);
    return value;
  };
  const uid = text(request, 'uid', 'request.', true);
  const kind = request.kind;
  if (!isObject(kind)) throw new BadReviewError('request.kind: must be an object');
  const operation = text(request, 'operation', 'request.', true);
  if (!OPERATIONS.includes(operation)) {
    throw new BadReviewError(`request.operation: ${shown(operation)} is not one of ${OPERATIONS.join(', ')}`);
  }
  const objectField = (field: 'object' | 'oldObject'): ReviewedObject | undefined => {
    const value = request[field];
    if (value === undefined || value === null) return undefined;
    if (!isObject(value)) throw new BadReviewError(`request.${field}: must be an object`);
    return value;
  };
  const object = objectField('object');
  if (object === undefined && (operation === 'CREATE' || operation === 'UPDATE')) {
    throw new BadReviewError(`request.object: required for ${operation}`);
  }
  return {
    uid,
    kind: {
      group: text(kind, 'group', 'request.kind.', false),
      version: text(kind, 'version', 'request.kind.', true),
      kind: text(kind, 'kind', 'request.kind.', true),
    },
    operation: operation as Operation,
    name: text(request, 'name', 'request.', false),
    namespace: text(request, 'namespace', 'request.', false),
    object,
    oldObject: objectField('oldObject'),
  };
}

/** The AdmissionReview answering `uid`. A refusal is a 403 whose message kubectl prints after "denied the request: ". */
export function admissionResponse(uid: string, verdict: Verdict): Record<string, unknown> {
  return {
    apiVersion: REVIEW_API_VERSION,
    kind: 'AdmissionReview',
    response: {
      uid,
      allowed: verdict.allowed,
      ...(verdict.allowed
        ? {}
        : { status: { code: 403, reason: 'Forbidden', message: verdict.message ?? '' } }),
      ...(verdict.warnings && verdict.warnings.length > 0 ? { warnings: verdict.warnings } : {}),
    },
  };
}
