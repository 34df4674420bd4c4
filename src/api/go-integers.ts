// galaxy decoded its REST bodies with Go's encoding/json, which refuses a number written with a
// fraction or an exponent (`1.0`, `1e3`) for an integer field, and refuses the whole request.
// JSON.parse keeps no trace of how a number was written, and the OpenAPI validator sees 1.0 as the
// integer 1; so the body's text is read once more, for the numbers so written, and one that lies
// where the document says integer is refused as galaxy refused it (under the exact key names the
// REST API reads, README).
import type { Request, RequestHandler } from 'express';
import { clipString } from '../log.js';
import { type GoFieldPath, goIntegersWithFraction, jsonPathText } from '../ipam/index.js';
import { ApiError } from './envelope.js';
import { rawJsonBody } from './json-body.js';
import { openApiDocument } from './openapi.js';

interface Schema {
  readonly $ref?: string;
  readonly type?: string;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly items?: Schema;
}

/** `#/components/schemas/Pool` in the document. */
function resolved(schema: Schema | undefined): Schema | undefined {
  if (!schema?.$ref) return schema;
  const target = schema.$ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<unknown>((at, part) => (at as Record<string, unknown> | undefined)?.[part], openApiDocument());
  return resolved(target as Schema | undefined);
}

/**
 * The integer fields under `schema`, as Go field paths (`*` for a list's items). The document's
 * schemas do not refer to themselves; `depth` bounds the walk all the same.
 */
function integerFields(schema: Schema | undefined, depth = 0): GoFieldPath[] {
  const at = resolved(schema);
  if (!at || depth > 8) return [];
  if (at.type === 'integer') return [[]];
  return [
    ...Object.entries(at.properties ?? {}).flatMap(([key, inner]) =>
      integerFields(inner, depth + 1).map((field) => [key, ...field]),
    ),
    ...integerFields(at.items, depth + 1).map((field) => ['*', ...field]),
  ];
}

/** Each operation's body schema's integer fields, found once. */
const fieldsOf = new WeakMap<Schema, GoFieldPath[]>();

interface Operation {
  readonly requestBody?: { readonly content?: Readonly<Record<string, { readonly schema?: Schema }>> };
}

/**
 * The refusal of the body's first integer field written with a fraction or an exponent (`1.0`,
 * `1.5`, `1e3`), naming what was written; undefined when there is none. Needs the operation the
 * validator has found.
 */
export function fractionRefusal(req: Request): ApiError | undefined {
  const operation = (req as { openapi?: { schema?: Operation } }).openapi?.schema;
  const schema = operation?.requestBody?.content?.['application/json']?.schema;
  if (!schema) return undefined;
  let fields = fieldsOf.get(schema);
  if (!fields) fieldsOf.set(schema, (fields = integerFields(schema)));
  const text = fields.length > 0 ? rawJsonBody(req) : undefined;
  if (!text) return undefined;
  // the first is refused, and the text is read no further
  const [first] = goIntegersWithFraction(text, fields, 'exact');
  if (!first) return undefined;
  return new ApiError(
    400,
    `body.${jsonPathText(first.path)}: must be integer, not ${clipString(first.written)} (Go's decoder reads no integer written with a fraction or an exponent)`,
  );
}

/** After the validator, which has found the operation: no integer field written as 1.0 or 1e3. */
export const goBodyIntegers: RequestHandler = (req: Request, _res, next) => {
  const refusal = fractionRefusal(req);
  if (refusal) throw refusal;
  next();
};
