// kube-apiserver's list continue token, a wire format that clients hand back unread: one encoder and
// one decoder, kept together so that what list paging issues is exactly what it accepts, and a
// malformed token is a 400 rather than a list from the wrong place.
import { badRequest } from './status.js';
import { isPlainObject } from './types.js';

interface ContinueToken {
  v: string;
  rv: number;
  start: string;
}

/** kube-apiserver's continue token: base64 of {"v":"meta.k8s.io/v1","rv":N,"start":"<key>\0"}. */
export function encodeContinue(revision: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: revision, start })).toString('base64');
}

export function decodeContinue(token: string): ContinueToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (
    !isPlainObject(parsed) ||
    parsed.v !== 'meta.k8s.io/v1' ||
    !Number.isInteger(parsed.rv) ||
    typeof parsed.start !== 'string' ||
    parsed.start === ''
  ) {
    throw badRequest(`continue key is not valid: ${JSON.stringify(token)}`);
  }
  return { v: parsed.v, rv: parsed.rv as number, start: parsed.start };
}
