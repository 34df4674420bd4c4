// galaxy decoded its REST bodies with Go's encoding/json, which refuses a number written with a
// fraction or an exponent (`1.0`, `1e3`) for an integer field, and refuses the whole request.
// JSON.parse keeps no trace of how a number was written, and the OpenAPI validator sees 1.0 as the
// integer 1; so the body's text is read once more, for the numbers so written, and each one that
// lies where the document says integer is refused as galaxy refused it.
import type { Request, RequestHandler } from 'express';
import { clipString } from '../log.js';
import { type JsonPath, jsonPathText, numbersWithFraction } from '../ipam/index.js';
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

/** The schema of the value at `path` under `root`, or undefined where the document says nothing. */
function schemaAt(root: Schema | undefined, path: JsonPath): Schema | undefined {
  let at = resolved(root);
  for (const part of path) {
    if (!at) return undefined;
    at = resolved(typeof part === 'number' ? at.items : at.properties?.[part]);
  }
  return at;
}

interface Operation {
  readonly requestBody?: { readonly content?: Readonly<Record<string, { readonly schema?: Schema }>> };
}

/** After the validator, which has found the operation: no integer field written as 1.0 or 1e3. */
export const goBodyIntegers: RequestHandler = (req: Request, _res, next) => {
  const operation = (req as { openapi?: { schema?: Operation } }).openapi?.schema;
  const schema = operation?.requestBody?.content?.['application/json']?.schema;
  const text = schema ? rawJsonBody(req) : undefined;
  if (!text) return next();
  for (const { path, written } of numbersWithFraction(text)) {
    if (schemaAt(schema, path)?.type !== 'integer') continue;
    throw new ApiError(
      400,
      `body.${jsonPathText(path)}: must be integer, not ${clipString(written)} (Go's decoder reads no integer written with a fraction or an exponent)`,
    );
  }
  next();
};
