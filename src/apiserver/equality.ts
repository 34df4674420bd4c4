// Structural equality of JSON values, for deciding whether an update changed anything.
import { isPlainObject } from './types.js';

export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a).filter((k) => a[k] !== undefined);
    if (keys.length !== Object.keys(b).filter((k) => b[k] !== undefined).length) return false;
    return keys.every((k) => jsonEqual(a[k], b[k]));
  }
  return false;
}

/** Equal apart from the listed top-level fields. */
export function equalExcept(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
  ignored: string[],
): boolean {
  const strip = (o: Record<string, unknown>): Record<string, unknown> => {
    const copy = { ...o };
    for (const k of ignored) delete copy[k];
    return copy;
  };
  return jsonEqual(strip(a), strip(b));
}
