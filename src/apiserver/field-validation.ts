// `fieldValidation` on writes (kube-apiserver 1.27+): fields the kind does not declare are an error
// (Strict, what kubectl sends by default), a warning header (Warn, the default) or nothing (Ignore).
// Objects are still stored as sent: this server does not prune.
import type { ResourceType } from './registry.js';
import { unknownFields } from './schemas.js';
import { badRequest } from './status.js';
import { isPlainObject } from './types.js';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export function fieldValidationOf(url: URL): FieldValidation {
  const value = url.searchParams.get('fieldValidation');
  if (value === null || value === '') return 'Warn';
  if (value === 'Ignore' || value === 'Warn' || value === 'Strict') return value;
  throw badRequest(
    `fieldValidation: Unsupported value: "${value}": supported values: "Ignore", "Strict", "Warn"`,
  );
}

/** A patch body without its strategic-merge directives (`$patch`, `$setElementOrder/...`). */
function withoutDirectives(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDirectives);
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !k.startsWith('$'))
      .map(([k, v]) => [k, withoutDirectives(v)]),
  );
}

/**
 * Checks a create or update body, or a merge/strategic patch, against `rt`'s schema. Strict: 400 as
 * kube-apiserver's strict decoding error; otherwise the Warning header values to send (Warn).
 */
export function checkFields(
  rt: ResourceType,
  body: unknown,
  mode: FieldValidation,
  isPatch: boolean,
): string[] {
  if (mode === 'Ignore') return [];
  const unknown = unknownFields(rt, isPatch ? withoutDirectives(body) : body);
  if (unknown.length === 0) return [];
  const listed = unknown.map((f) => `unknown field "${f}"`);
  if (mode === 'Strict') {
    const cause = `strict decoding error: ${listed.join(', ')}`;
    throw badRequest(
      isPatch ? cause : `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: ${cause}`,
    );
  }
  return listed.map((w) => `299 - ${JSON.stringify(w)}`);
}
