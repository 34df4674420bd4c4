// Whether a JSON value would decode into a Kubernetes API type (k8s.io/api's Go structs) as Go's
// encoding/json decodes it, as galaxy decoded the Pods and Nodes kube-scheduler sends: a value of
// the wrong JSON type anywhere in the object fails the whole message, where JavaScript would read
// on. The types are client-node's generated models (their field maps are Kubernetes' OpenAPI), so
// a field Kubernetes added since is checked too, and one it removed is not. Go's rules kept here:
// keys name fields exactly or case-insensitively (every such key is decoded, so each must fit,
// not just the last), keys naming no field are ignored, a null fits anything, a quantity is a
// string in Kubernetes' syntax or a number, a time an RFC 3339 string, an int-or-string either.
// What JSON.parse hides is read in the value's text (goWrittenError): an integer written with a
// fraction or an exponent (`1.0`, `1e3`), an int64 past 2^53, and a quantity's raw bytes.
import * as models from '@kubernetes/client-node';
import { type JsonPath, goFolded, writtenValues } from '../ipam/index.js';
import { goTrimSpace, isGoQuantity } from './go-quantity.js';

/** A Go type as its decoder reads JSON into it. */
export type GoType =
  | { readonly kind: 'string' | 'bool' | 'number' | 'quantity' | 'time' | 'intOrString' | 'any' }
  | { readonly kind: 'int'; readonly bits: 32 | 64 }
  | { readonly kind: 'list' | 'map'; readonly of: GoType }
  | { readonly kind: 'struct'; readonly fields: Map<string, GoType> };

interface Attribute {
  readonly baseName: string;
  readonly type: string;
  readonly format: string;
}
const modelTable = models as unknown as Record<
  string,
  { getAttributeTypeMap?: () => readonly Attribute[] } | undefined
>;

/** resource.Quantity fields, which the models give as strings (and maps of strings). */
const QUANTITIES = new Set([
  'V1ResourceRequirements.limits',
  'V1ResourceRequirements.requests',
  'V1VolumeResourceRequirements.limits',
  'V1VolumeResourceRequirements.requests',
  'V1PodSpec.overhead',
  'V1ContainerStatus.allocatedResources',
  'V1NodeStatus.allocatable',
  'V1NodeStatus.capacity',
  'V1EmptyDirVolumeSource.sizeLimit',
  'V1ResourceFieldSelector.divisor',
]);

const SCALARS: Record<string, GoType> = {
  string: { kind: 'string' },
  boolean: { kind: 'bool' },
  Date: { kind: 'time' },
  IntOrString: { kind: 'intOrString' },
  any: { kind: 'any' },
  object: { kind: 'any' },
};
const ANY: GoType = { kind: 'any' };
const QUANTITY: GoType = { kind: 'quantity' };

const structs = new Map<string, GoType>();

function shapeOf(type: string, format: string, quantity: boolean): GoType {
  const list = /^Array<(.+)>$/.exec(type);
  if (list) return { kind: 'list', of: shapeOf(list[1]!, format, quantity) };
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) return { kind: 'map', of: shapeOf(map[1]!, format, quantity) };
  if (quantity) return QUANTITY;
  if (type === 'number') {
    if (format === 'int32' || format === 'int64') return { kind: 'int', bits: format === 'int32' ? 32 : 64 };
    return { kind: 'number' };
  }
  return SCALARS[type] ?? structOf(type) ?? ANY;
}

/** A model as a struct, built once (the field maps refer to it before it is filled: types recurse). */
function structOf(name: string): GoType | undefined {
  const known = structs.get(name);
  if (known) return known;
  const attributes = modelTable[name]?.getAttributeTypeMap?.();
  if (!attributes) return undefined;
  const fields = new Map<string, GoType>();
  const shape: GoType = { kind: 'struct', fields };
  structs.set(name, shape);
  for (const a of attributes) {
    const field = shapeOf(a.type, a.format, QUANTITIES.has(`${name}.${a.baseName}`));
    // under its own name too: the keys Kubernetes writes are found without folding them
    fields.set(a.baseName, field).set(a.baseName.toLowerCase(), field);
  }
  return shape;
}

/** The struct of a client-node model (`V1Pod`, `V1Node`); throws for a name that is none. */
export function apiType(model: string): GoType {
  const shape = structOf(model);
  if (!shape) throw new Error(`no client-node model ${model}`);
  return shape;
}

// RFC 3339 as Go's time.Parse reads it (fractional seconds allowed, `T` and `Z` upper case)
const TIME_TEXT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

function isTime(text: string): boolean {
  const m = TIME_TEXT.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as number[];
  const days = new Date(Date.UTC(year!, month!, 0)).getUTCDate();
  return (
    month! >= 1 && month! <= 12 && day! >= 1 && day! <= days && hour! < 24 && minute! < 60 && second! < 60
  );
}

// an int64 near its bounds is not exactly a JavaScript number: 2^63 passes here and its text decides
const INT_LIMIT = { 32: 2 ** 31, 64: 2 ** 63 } as const;
const INT64_TEXT_LIMIT = 2n ** 63n;
const isInt = (v: unknown, bits: 32 | 64): boolean =>
  typeof v === 'number' &&
  Number.isInteger(v) &&
  v >= -INT_LIMIT[bits] &&
  v <= INT_LIMIT[bits] - (bits === 32 ? 1 : 0);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Why Go's decoder would refuse `value` as `type`, naming the first field that does not fit
 * (`Pod.spec.priority must be an int32`), or undefined when it would decode.
 */
export function goTypeError(value: unknown, type: GoType, what: string): string | undefined {
  return check(value, type, what);
}

function check(value: unknown, shape: GoType, where: string): string | undefined {
  if (value === null) return undefined;
  switch (shape.kind) {
    case 'any':
      return undefined;
    case 'string':
      return typeof value === 'string' ? undefined : `${where} must be a string`;
    case 'bool':
      return typeof value === 'boolean' ? undefined : `${where} must be true or false`;
    case 'number':
      return typeof value === 'number' ? undefined : `${where} must be a number`;
    case 'int':
      return isInt(value, shape.bits) ? undefined : `${where} must be an int${shape.bits}`;
    case 'intOrString':
      return typeof value === 'string' || isInt(value, 32)
        ? undefined
        : `${where} must be a string or an int32`;
    case 'quantity':
      // a number is read as written (its text, in goWrittenError), so 1e400 is one
      return (typeof value === 'string' && isGoQuantity(goTrimSpace(value))) || typeof value === 'number'
        ? undefined
        : quantityError(where);
    case 'time':
      return typeof value === 'string' && isTime(value)
        ? undefined
        : `${where} must be a time in RFC 3339 (such as "2020-01-02T03:04:05Z")`;
    case 'list': {
      if (!Array.isArray(value)) return `${where} must be a list`;
      for (let i = 0; i < value.length; i++) {
        const err = check(value[i], shape.of, `${where}[${i}]`);
        if (err) return err;
      }
      return undefined;
    }
    case 'map': {
      if (!isObject(value)) return `${where} must be a JSON object`;
      for (const key of Object.keys(value)) {
        const err = check(value[key], shape.of, `${where}["${key}"]`);
        if (err) return err;
      }
      return undefined;
    }
    case 'struct': {
      if (!isObject(value)) return `${where} must be a JSON object`;
      for (const key of Object.keys(value)) {
        const field = shape.fields.get(key) ?? shape.fields.get(goFolded(key));
        if (!field) continue;
        const err = check(value[key], field, where === '' ? key : `${where}.${key}`);
        if (err) return err;
      }
      return undefined;
    }
  }
}

const quantityError = (where: string) => `${where} must be a quantity (such as "1", "500m" or "2Gi")`;

/** The messages around the API types: a struct of these fields, a list, a map, an int64, a string. */
export const goTypes = {
  struct: (fields: Record<string, GoType>): GoType => ({
    kind: 'struct',
    fields: new Map(
      Object.entries(fields).flatMap(([k, v]) => [[k, v] as const, [k.toLowerCase(), v] as const]),
    ),
  }),
  list: (of: GoType): GoType => ({ kind: 'list', of }),
  map: (of: GoType): GoType => ({ kind: 'map', of }),
  int64: { kind: 'int', bits: 64 } as GoType,
  string: { kind: 'string' } as GoType,
};

/** The shape Go's decoder fills at `path` under `shape`, or undefined where it fills nothing. */
function shapeAt(shape: GoType, path: JsonPath): GoType | undefined {
  let at: GoType | undefined = shape;
  for (const part of path) {
    if (!at) return undefined;
    if (at.kind === 'list') at = typeof part === 'number' ? at.of : undefined;
    else if (at.kind === 'map') at = typeof part === 'string' ? at.of : undefined;
    else if (at.kind === 'struct')
      at = typeof part === 'string' ? (at.fields.get(part) ?? at.fields.get(goFolded(part))) : undefined;
    else return undefined;
  }
  return at;
}

/**
 * How deep the deepest integer or quantity under `shape` lies: a value deeper than that fills
 * neither, so its text need not be read.
 */
const depths = new WeakMap<GoType, number>();
function textDepth(shape: GoType, open = new Set<GoType>()): number {
  const known = depths.get(shape);
  if (known !== undefined) return known;
  if (open.has(shape)) return Infinity; // a type that contains itself: no bound
  open.add(shape);
  let depth = -1;
  if (shape.kind === 'int' || shape.kind === 'intOrString' || shape.kind === 'quantity') depth = 0;
  else if (shape.kind === 'list' || shape.kind === 'map') depth = 1 + textDepth(shape.of, open);
  else if (shape.kind === 'struct')
    for (const field of shape.fields.values()) depth = Math.max(depth, 1 + textDepth(field, open));
  open.delete(shape);
  if (depth < 0) depth = -Infinity;
  depths.set(shape, depth);
  return depth;
}

/** `what` and `path` as check() names a field: `Pod.spec.containers[0].ports[1].containerPort`. */
function pathText(shape: GoType, path: JsonPath, what: string): string {
  let out = what;
  let at: GoType | undefined = shape;
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (at?.kind === 'map') out += `["${part}"]`;
    else out += out === '' ? part : `.${part}`;
    at = at && shapeAt(at, [part]);
  }
  return out;
}

/**
 * Why Go's decoder would refuse the JSON `text` (one that JSON.parse read) as `type` for what only
 * the text shows: an integer written with a fraction or an exponent, an int64 out of its range, a
 * quantity as its raw bytes read (an escaped string, a number's own text). One pass over the text.
 */
export function goWrittenError(text: string, type: GoType, what: string): string | undefined {
  const depth = textDepth(type);
  if (depth < 0) return undefined;
  for (const found of writtenValues(text, depth)) {
    const field = shapeAt(type, found.path);
    if (!field) continue;
    const where = () => pathText(type, found.path, what);
    if (field.kind === 'quantity') {
      const raw = found.kind === 'escape' ? found.written.slice(1, -1) : found.written;
      if (!isGoQuantity(goTrimSpace(raw))) return quantityError(where());
    } else if (field.kind === 'int' || field.kind === 'intOrString') {
      const want = field.kind === 'int' ? `an int${field.bits}` : 'a string or an int32';
      if (found.kind === 'fraction')
        return `${where()} must be ${want}, not ${found.written} (Go's decoder reads no integer written with a fraction or an exponent)`;
      if (found.kind === 'long' && field.kind === 'int' && field.bits === 64) {
        const n = BigInt(found.written);
        if (n >= INT64_TEXT_LIMIT || n < -INT64_TEXT_LIMIT) return `${where()} must be ${want}`;
      }
    }
  }
  return undefined;
}
