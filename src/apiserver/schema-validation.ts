// A custom resource's values checked against its CRD version's openAPIV3Schema, as kube-apiserver
// 1.32 does on every write (create, update, each patch, status and scale): its kube-openapi validator
// for the keywords CRDs use here (type, nullable, format, minimum/maximum, enum, required,
// properties, items, additionalProperties, x-kubernetes-int-or-string), its messages, and its
// ratcheting (on by default since 1.30): on an update, a part equal to the stored one is not checked
// again, so an object stored before its CRD had a schema can still be updated elsewhere.
// Unknown fields are field-validation.ts's, and nothing is pruned.
import { goBadValue, goFloat, goQuoted, isGoInt } from './go-values.js';
import type { ResourceType } from './registry.js';
import { jsonEqual } from './equality.js';
import { invalid } from './status.js';
import { isPlainObject, type KubeObject } from './types.js';

type Schema = Record<string, unknown>;

/**
 * One failure as kube-openapi reports it: `name` is its path (`spec.key`, `.size` for a required
 * property of the root), `value` the value apiextensions puts in the field error.
 */
interface Failure {
  kind: 'type' | 'required' | 'enum' | 'invalid';
  name: string;
  value?: unknown;
  allowed?: unknown[];
  message: string;
}

/** The formats apiextensions keeps (others it strips, checking nothing), named without dashes. */
const SUPPORTED_FORMATS = new Set(
  'bsonobjectid uri email hostname ipv4 ipv6 cidr mac uuid uuid3 uuid4 uuid5 isbn isbn10 isbn13 creditcard ssn hexcolor rgbcolor byte password date duration datetime'.split(
    ' ',
  ),
);

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;

/** Go's time.Parse("2006-01-02", s): a real day of a real month. */
function isDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** strfmt's IsDateTime: a date, `t`, a time, case-insensitively (split at every `t`, as it does). */
function isDateTime(s: string): boolean {
  if (s.length < 4) return false;
  const parts = s.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0] ?? '')) return false;
  const m = TIME.exec(parts[1] ?? '');
  return m !== null && m[1]! <= '23' && m[2]! <= '59' && m[3]! <= '59';
}

/** The checks of the formats floatip's CRDs use; another kept format is not checked here. */
const FORMAT_CHECKS: Record<string, (s: string) => boolean> = { datetime: isDateTime, date: isDate };

/** JSON type and Go format of a decoded value, as the type validator infers them. */
function jsonTypeOf(v: unknown): [string, string] {
  if (typeof v === 'boolean') return ['boolean', ''];
  if (typeof v === 'string') return ['string', ''];
  if (typeof v === 'number') return isGoInt(v) ? ['integer', 'int64'] : ['number', 'float64'];
  if (Array.isArray(v)) return ['array', ''];
  return ['object', ''];
}

const typeFailure = (name: string, typeName: string, value: string): Failure => ({
  kind: 'type',
  name,
  value,
  message: `${name} in body must be of type ${typeName}: ${goQuoted(value)}`,
});

function checkType(schema: Schema, format: string, v: unknown, name: string, out: Failure[]): void {
  const types =
    schema['x-kubernetes-int-or-string'] === true
      ? ['integer', 'string']
      : typeof schema.type === 'string' && schema.type
        ? [schema.type]
        : [];
  if (types.length === 0 && format === '') return;
  if (v === null) {
    if (types.length > 0 && !types.includes('null') && schema.nullable !== true)
      out.push(typeFailure(name, types.join(','), 'null'));
    return;
  }
  const [type, goFormat] = jsonTypeOf(v);
  const stringOrArray = type === 'string' || type === 'array';
  // a whole number passes for a number, as Go's int64 does
  const intAsNumber = type === 'integer' && types.includes('number');
  if (!stringOrArray && format !== '' && !(types.includes(type) || goFormat === format || intAsNumber)) {
    out.push(typeFailure(name, format, goFormat));
    return;
  }
  // kube-openapi lets a string-formatted field hold an array here: so does this
  if (!types.includes('number') && !types.includes('integer') && format !== '' && stringOrArray) return;
  if (!(types.includes(type) || intAsNumber)) out.push(typeFailure(name, types.join(','), type));
}

function checkFormat(format: string, v: unknown, name: string, out: Failure[]): void {
  const check = FORMAT_CHECKS[format.replaceAll('-', '')];
  if (typeof v !== 'string' || !check || check(v)) return;
  out.push(typeFailure(name, format, v));
}

/** Minimum and maximum, compared as Go does: an int64 against the bound cut to an int64. */
function checkBounds(schema: Schema, v: number, name: string, out: Failure[]): void {
  const asInt = isGoInt(v);
  const bound = (b: number): [number, string] =>
    asInt ? [Math.trunc(b), String(Math.trunc(b))] : [b, goFloat(b)];
  if (typeof schema.minimum === 'number') {
    const [min, shown] = bound(schema.minimum);
    const exclusive = schema.exclusiveMinimum === true;
    if (exclusive ? v <= min : v < min)
      out.push({
        kind: 'invalid',
        name,
        value: v,
        message: `${name} in body should be greater than ${exclusive ? '' : 'or equal to '}${shown}`,
      });
  }
  if (typeof schema.maximum === 'number') {
    const [max, shown] = bound(schema.maximum);
    const exclusive = schema.exclusiveMaximum === true;
    if (exclusive ? v >= max : v > max)
      out.push({
        kind: 'invalid',
        name,
        value: v,
        message: `${name} in body should be less than ${exclusive ? '' : 'or equal to '}${shown}`,
      });
  }
}

function checkEnum(schema: Schema, v: unknown, name: string, out: Failure[]): void {
  if (!Array.isArray(schema.enum) || schema.enum.length === 0) return;
  // null is never one of them: kube-openapi compares only values of a type
  if (v !== null && schema.enum.some((e) => e !== null && jsonEqual(e, v))) return;
  out.push({ kind: 'enum', name, value: v, allowed: schema.enum, message: '' });
}

const childName = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/**
 * Validates `v` at `name` against `schema`, in kube-openapi's order (type, format, bounds, items,
 * enum, then an object's additional properties, properties, required). `old` is the stored value
 * at the same place on an update (undefined where there is none): an unchanged part is not checked.
 */
function validate(schema: unknown, v: unknown, old: unknown, name: string, out: Failure[]): void {
  if (!isPlainObject(schema)) return;
  if (old !== undefined && jsonEqual(old, v)) return;
  const rawFormat = typeof schema.format === 'string' ? schema.format : '';
  const format = SUPPORTED_FORMATS.has(rawFormat.replaceAll('-', '')) ? rawFormat : '';
  checkType(schema, format, v, name, out);
  if (v === null) {
    checkEnum(schema, v, name, out);
    return;
  }
  if (format) checkFormat(format, v, name, out);
  if (typeof v === 'number') checkBounds(schema, v, name, out);
  // list items correlate with no stored item (only map and set lists would): each is checked
  if (Array.isArray(v)) v.forEach((item, i) => validate(schema.items, item, undefined, `${name}[${i}]`, out));
  checkEnum(schema, v, name, out);
  if (!isPlainObject(v)) return;
  const properties = isPlainObject(schema.properties) ? schema.properties : {};
  const stored = isPlainObject(old) ? old : {};
  if (isPlainObject(schema.additionalProperties)) {
    for (const [key, value] of Object.entries(v))
      if (!(key in properties))
        validate(schema.additionalProperties, value, stored[key], `${name}.${key}`, out);
  }
  for (const [key, propertySchema] of Object.entries(properties))
    if (key in v) validate(propertySchema, v[key], stored[key], childName(name, key), out);
  if (Array.isArray(schema.required))
    for (const key of schema.required)
      if (typeof key === 'string' && !(key in v))
        out.push({ kind: 'required', name: `${name}.${key}`, message: '' });
}

interface Cause {
  field: string;
  message: string;
  reason: string;
}

/** apiextensions' kubeOpenAPIResultToFieldErrors: each failure as a field error's cause. */
function causeOf(f: Failure): Cause {
  const field = f.name && f.name !== '.' ? f.name.replace(/^\./, '') : '<nil>';
  switch (f.kind) {
    case 'required':
      return { field, message: 'Required value', reason: 'FieldValueRequired' };
    case 'enum': {
      const allowed = (f.allowed ?? []).map((a) => goQuoted(typeof a === 'string' ? a : JSON.stringify(a)));
      return {
        field,
        message: `Unsupported value: ${goBadValue(f.value)}: supported values: ${allowed.join(', ')}`,
        reason: 'FieldValueNotSupported',
      };
    }
    case 'type':
      return {
        field,
        message: `Invalid value: ${goBadValue(f.value)}: ${f.message}`,
        reason: 'FieldValueTypeInvalid',
      };
    case 'invalid':
      return {
        field,
        message: `Invalid value: ${goBadValue(f.value)}: ${f.message}`,
        reason: 'FieldValueInvalid',
      };
  }
}

/** The causes of `obj`'s refusal by `schema` (none when it passes); `old` is the stored object on an update. */
export function schemaCauses(schema: Schema, obj: KubeObject, old?: KubeObject): Cause[] {
  const out: Failure[] = [];
  validate(schema, obj, old, '', out);
  return out.map(causeOf);
}

/** Throws kube-apiserver's 422 Invalid when a custom resource breaks its CRD version's schema. */
export function checkCustomResource(rt: ResourceType, obj: KubeObject, old?: KubeObject): void {
  if (rt.crdName === undefined || !rt.schema) return;
  const causes = schemaCauses(rt.schema, obj, old);
  if (causes.length > 0) throw invalid(rt.kind, rt.group, obj.metadata?.name ?? '', causes);
}
