// An OpenAPI v2 document as the protobuf kubectl asks /openapi/v2 for (media.ts's
// OPENAPI_V2_PROTOBUF): gnostic's openapi_v2.Document, with the field numbers of its OpenAPIv2.proto
// (github.com/googleapis/gnostic v0.4.1, the one kubectl v1.20 decodes with). Only what
// openapi-v2.ts's documents hold is written: operations with their query parameters and responses,
// a schema's keywords, and every `x-` key as a vendor extension whose value is YAML (JSON is YAML).
import { isPlainObject } from './types.js';

type Json = Record<string, unknown>;

/** Protobuf's wire format: fields appended in the order they are written. */
class Writer {
  private readonly parts: Buffer[] = [];

  private varint(n: bigint): void {
    const bytes: number[] = [];
    let v = BigInt.asUintN(64, n);
    while (v >= 0x80n) {
      bytes.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    bytes.push(Number(v));
    this.parts.push(Buffer.from(bytes));
  }

  private tag(field: number, wireType: number): void {
    this.varint(BigInt((field << 3) | wireType));
  }

  bytes(field: number, value: Buffer): void {
    this.tag(field, 2);
    this.varint(BigInt(value.length));
    this.parts.push(value);
  }

  string(field: number, value: unknown): void {
    if (typeof value === 'string') this.bytes(field, Buffer.from(value, 'utf8'));
  }

  strings(field: number, value: unknown): void {
    if (Array.isArray(value)) for (const s of value) this.string(field, s);
  }

  message(field: number, build: (w: Writer) => void): void {
    const inner = new Writer();
    build(inner);
    this.bytes(field, inner.finish());
  }

  /** A plain bool field: proto3 leaves false out. */
  bool(field: number, value: unknown): void {
    if (value === true) this.boolean(field, true);
  }

  /** A bool written whatever its value (a oneof's member). */
  boolean(field: number, value: boolean): void {
    this.tag(field, 0);
    this.varint(value ? 1n : 0n);
  }

  int64(field: number, value: unknown): void {
    if (typeof value !== 'number' || !Number.isInteger(value)) return;
    this.tag(field, 0);
    this.varint(BigInt(value));
  }

  double(field: number, value: unknown): void {
    if (typeof value !== 'number') return;
    this.tag(field, 1);
    const b = Buffer.alloc(8);
    b.writeDoubleLE(value);
    this.parts.push(b);
  }

  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** Any: the value as YAML (field 2). */
const any = (value: unknown) => (w: Writer) => w.string(2, JSON.stringify(value));

/** NamedAny for each `x-` key (a vendor extension). */
function vendorExtensions(w: Writer, field: number, object: Json): void {
  for (const [name, value] of Object.entries(object)) {
    if (!name.startsWith('x-')) continue;
    w.message(field, (named) => {
      named.string(1, name);
      named.message(2, any(value));
    });
  }
}

/** NamedSchema entries of a map of schemas (Definitions, Properties: field 1 of each). */
function namedSchemas(w: Writer, schemas: Json): void {
  for (const [name, schema] of Object.entries(schemas)) {
    w.message(1, (named) => {
      named.string(1, name);
      named.message(2, (s) => writeSchema(s, isPlainObject(schema) ? schema : {}));
    });
  }
}

function writeSchema(w: Writer, s: Json): void {
  w.string(1, s.$ref);
  w.string(2, s.format);
  w.string(3, s.title);
  w.string(4, s.description);
  if (s.default !== undefined) w.message(5, any(s.default));
  w.double(6, s.multipleOf);
  w.double(7, s.maximum);
  w.bool(8, s.exclusiveMaximum);
  w.double(9, s.minimum);
  w.bool(10, s.exclusiveMinimum);
  w.int64(11, s.maxLength);
  w.int64(12, s.minLength);
  w.string(13, s.pattern);
  w.int64(14, s.maxItems);
  w.int64(15, s.minItems);
  w.bool(16, s.uniqueItems);
  w.int64(17, s.maxProperties);
  w.int64(18, s.minProperties);
  w.strings(19, s.required);
  if (Array.isArray(s.enum)) for (const value of s.enum) w.message(20, any(value));
  const extra = s.additionalProperties;
  if (isPlainObject(extra)) w.message(21, (item) => item.message(1, (sub) => writeSchema(sub, extra)));
  // the oneof's boolean (field 2) is written even when false: false is its point
  else if (typeof extra === 'boolean') w.message(21, (item) => item.boolean(2, extra));
  const type = s.type;
  if (type !== undefined) w.message(22, (t) => t.strings(1, Array.isArray(type) ? type : [type]));
  const items = s.items;
  if (isPlainObject(items)) w.message(23, (i) => i.message(1, (sub) => writeSchema(sub, items)));
  if (Array.isArray(s.allOf))
    for (const part of s.allOf) w.message(24, (sub) => writeSchema(sub, isPlainObject(part) ? part : {}));
  const properties = s.properties;
  if (isPlainObject(properties)) w.message(25, (p) => namedSchemas(p, properties));
  w.bool(27, s.readOnly);
  vendorExtensions(w, 31, s);
}

/** ParametersItem → Parameter → NonBodyParameter → QueryParameterSubSchema: what a query parameter is. */
function writeQueryParameter(w: Writer, p: Json): void {
  w.message(1, (parameter) =>
    parameter.message(2, (nonBody) =>
      nonBody.message(3, (q) => {
        q.bool(1, p.required);
        q.string(2, p.in);
        q.string(3, p.description);
        q.string(4, p.name);
        q.string(6, p.type);
        q.bool(20, p.uniqueItems);
      }),
    ),
  );
}

function writeOperation(w: Writer, op: Json): void {
  w.string(5, op.operationId);
  w.strings(7, op.consumes);
  if (Array.isArray(op.parameters))
    for (const p of op.parameters) if (isPlainObject(p)) w.message(8, (item) => writeQueryParameter(item, p));
  const responses = op.responses;
  if (isPlainObject(responses))
    w.message(9, (r) => {
      for (const [code, value] of Object.entries(responses)) {
        const description = isPlainObject(value) ? value.description : undefined;
        r.message(1, (named) => {
          named.string(1, code);
          named.message(2, (v) => v.message(1, (response) => response.string(1, description)));
        });
      }
    });
  vendorExtensions(w, 13, op);
}

/** PathItem's operations by their field numbers. */
const OPERATIONS: readonly (readonly [string, number])[] = [
  ['get', 2],
  ['put', 3],
  ['post', 4],
  ['delete', 5],
  ['patch', 8],
];

function writePaths(w: Writer, paths: Json): void {
  for (const [path, item] of Object.entries(paths)) {
    if (!isPlainObject(item)) continue;
    w.message(2, (named) => {
      named.string(1, path);
      named.message(2, (pathItem) => {
        for (const [verb, field] of OPERATIONS) {
          const op = item[verb];
          if (isPlainObject(op)) pathItem.message(field, (o) => writeOperation(o, op));
        }
      });
    });
  }
}

/** The document: swagger (1), info (2), paths (8), definitions (9), vendor extensions (16). */
export function encodeOpenApiV2(doc: Json): Buffer {
  const w = new Writer();
  w.string(1, doc.swagger);
  const info = isPlainObject(doc.info) ? doc.info : {};
  w.message(2, (i) => {
    i.string(1, info.title);
    i.string(2, info.version);
  });
  const paths = doc.paths;
  if (isPlainObject(paths)) w.message(8, (p) => writePaths(p, paths));
  const definitions = doc.definitions;
  if (isPlainObject(definitions)) w.message(9, (d) => namedSchemas(d, definitions));
  vendorExtensions(w, 16, doc);
  return w.finish();
}
