// The rules by which Go's encoding/json leaves a JSON object's keys in a struct's fields, which
// every decoder of the extender's wire format (wire.ts) reads a field by, at every level: the last
// key naming a field case-insensitively wins (src/ipam/go-json.ts), a null passes over a field held
// as a value and empties one held as a pointer, slice or map, a null in a list of strings is "",
// and an int64 past 2^53 is read as written, not as a double. A field of the wrong JSON type, or a
// value that would not fit its Go type anywhere (go-types.ts), is a WireError naming it, which the
// server answers with 400 and its message.
import { type GoHeld, goFieldKey, writtenValues } from '../ipam/index.js';
import { type GoType, goWrittenError, goTypeError } from './go-types.js';

/** A request the caller got wrong (its kind is one of src/ipam/errors.ts: the server answers 400). */
export class WireError extends Error {
  readonly kind = 'validation';
}

export type Json = Record<string, unknown>;

/** The key of `object` whose value Go's decoder leaves in field `name`. */
export const keyOf = (object: Json, name: string, held: GoHeld): string | undefined =>
  goFieldKey(object, name, held === 'nullable');

/** The value Go's decoder leaves in field `name` of `object`. */
export function field(object: Json, name: string, held: GoHeld): unknown {
  const key = keyOf(object, name, held);
  return key === undefined ? undefined : object[key];
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function asObject(value: unknown, what: string): Json {
  if (!isObject(value)) throw new WireError(`${what} must be a JSON object`);
  return value;
}

/** A list element that Go decodes into a struct: a null is the struct's zero value. */
export const element = (value: unknown, what: string): Json => (value === null ? {} : asObject(value, what));

/** An optional object: absent or null is undefined. */
export function optionalObject(value: unknown, what: string): Json | undefined {
  return value === undefined || value === null ? undefined : asObject(value, what);
}

export function optionalList(value: unknown, what: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new WireError(`${what} must be a list`);
  return value;
}

export function optionalString(value: unknown, what: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new WireError(`${what} must be a string`);
  return value;
}

/** A list of strings; a null element is "", as Go's decoder leaves a string it is given null for. */
export function optionalStringArray(value: unknown, what: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' && v !== null))
    throw new WireError(`${what} must be a list of strings`);
  return value.includes(null) ? value.map((v: string | null) => v ?? '') : (value as string[]);
}

/** A map of strings (labels, annotations): absent or null is empty. */
export function stringMap(value: unknown, what: string): Record<string, string> {
  const map = optionalObject(value, what) ?? {};
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [key, v] of Object.entries(map)) {
    if (typeof v !== 'string') throw new WireError(`${what}["${key}"] must be a string`);
    out[key] = v;
  }
  return out;
}

/** With the value's text: no integer in it written with a fraction either. */
export function fitsGoType(value: unknown, type: GoType, what: string, text?: Buffer): void {
  const err = goTypeError(value, type, what) ?? (text && goWrittenError(text.toString('utf8'), type, what));
  if (err) throw new WireError(err);
}
/** A request whose parts' own texts were not at hand: its whole text read for fractions. */
export function fitsGoIntegers(raw: Buffer, type: GoType): void {
  const err = goWrittenError(raw.toString('utf8'), type, '');
  if (err) throw new WireError(err);
}

/** Requests and limits: quantities are strings on the wire (a number is accepted, as Go's decoder does). */
export function stringMapOfQuantities(value: unknown, what: string): Record<string, string> {
  const map = optionalObject(value, what) ?? {};
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [key, v] of Object.entries(map)) {
    if (typeof v === 'string') out[key] = v;
    // its text is checked as Go reads it (goWrittenError: 1e400 is a quantity); only its presence is read
    else if (typeof v === 'number') out[key] = String(v);
    // Go's decoder stores a null as the zero quantity: the resource is still named
    else if (v === null) out[key] = '0';
    else throw new WireError(`${what}["${key}"] must be a quantity`);
  }
  return out;
}

/**
 * The integers of `raw` too long for a double, by their path 3 deep (keys as the body wrote them;
 * the last at a path, as JSON.parse keeps it): read once per body, however many victims need them.
 */
export function longIntegers(
  raw: Buffer | undefined,
): (path: readonly (string | undefined)[]) => string | undefined {
  let found: Map<string, string> | undefined;
  return (path) => {
    if (raw === undefined || path.includes(undefined)) return undefined;
    if (!found) {
      found = new Map();
      for (const value of writtenValues(raw.toString(), 3))
        if (value.kind === 'long') found.set(JSON.stringify(value.path), value.written);
    }
    return found.get(JSON.stringify(path));
  };
}
