// The OpenAPI document (openapi/openapi.yaml) is the API's one source of truth: it is served as
// /openapi.json, drives Swagger UI, and every request is validated against it by
// express-openapi-validator before a handler sees it. This module loads it once and turns the
// validator's findings into galaxy's envelope, naming the field and why.
import { readFileSync } from 'node:fs';
import type { Request, RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { parse } from 'yaml';
import { parseAddress } from '../ipam/index.js';
import { packagePath } from '../paths.js';
import { clipString } from '../log.js';
import { ApiError } from './envelope.js';
import { goQuote } from './go-quote.js';
import { isGoRFC3339 } from './go-time.js';
import { QueryStringError, parseQuery } from './query-string.js';

export interface OpenApiDocument {
  readonly openapi: string;
  readonly info: { readonly title: string; readonly version: string };
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly components?: Readonly<Record<string, unknown>>;
}

export const OPENAPI_FILE = packagePath('openapi', 'openapi.yaml');

let loaded: OpenApiDocument | undefined;

/** The document, parsed once. Callers must not change it (the validator gets its own copy). */
export function openApiDocument(): OpenApiDocument {
  loaded ??= parse(readFileSync(OPENAPI_FILE, 'utf8')) as OpenApiDocument;
  return loaded;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** Every operation of the document, as `METHOD /path` with galaxy-style `{param}` paths. */
export function documentedOperations(doc: OpenApiDocument = openApiDocument()): string[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((m) => HTTP_METHODS.includes(m))
      .map((m) => `${m.toUpperCase()} ${path}`),
  );
}

/** `format: ip`: an IPv4 or IPv6 address in any form the core accepts. */
function isIP(text: string): boolean {
  try {
    parseAddress(text);
    return true;
  } catch {
    return false;
  }
}

/** Each documented path as a pattern that matches it as express routes it: any case, a trailing `/`. */
let pathPatterns: { path: string; pattern: RegExp }[] | undefined;

/**
 * The statuses the document gives the operation a request reached, or undefined when the request
 * reached none (no such path, or not with this method).
 */
export function documentedStatuses(method: string, path: string): string[] | undefined {
  pathPatterns ??= Object.keys(openApiDocument().paths).map((p) => ({
    path: p,
    pattern: new RegExp(`^${p.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`, 'i'),
  }));
  const found = pathPatterns.find((p) => p.pattern.test(path));
  const operation =
    found &&
    (openApiDocument().paths[found.path]?.[method.toLowerCase()] as
      { responses?: Record<string, unknown> } | undefined);
  return operation ? Object.keys(operation.responses ?? {}) : undefined;
}

export interface ValidatorOptions {
  /** Check every JSON answer against the document too (tests: the document stays honest). */
  readonly validateResponses?: boolean;
}

interface QueryParameter {
  readonly name: string;
  readonly in: string;
  readonly schema?: { readonly type?: string };
}

// Go's strconv.Atoi: an optional sign and decimal digits. The validator's coercion takes what
// JavaScript's Number takes (`0x10`, `1e2`, ` 1`), which galaxy never read as a number.
const DECIMAL = /^[+-]?\d+$/;
/** Each request's query as goQuery read it (empty values included), before the validator coerced its numbers. */
const readQueries = new WeakMap<Request, Record<string, string>>();

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * After the validator: a query parameter of the operation typed integer must be Atoi's syntax. One
 * outside int64 is dropped, as if absent: Atoi fails on it and galaxy took its default (size 10,
 * page 0), where the validator's double would read `size=9223372036854775808` as a huge size.
 * An empty integer is absent (goQuery), galaxy's default. An empty boolean is refused instead: the
 * one boolean, `dryRun`, is floatip's own, and reading `?dryRun` as its default would turn a
 * request for a dry run into a real release.
 */
const goQueryTypes: RequestHandler = (req, _res, next) => {
  const operation = (req as { openapi?: { schema?: { parameters?: QueryParameter[] } } }).openapi?.schema;
  const query = readQueries.get(req);
  refuseUnknownDryRun(req, query, operation?.parameters ?? []);
  for (const p of operation?.parameters ?? []) {
    const value = query?.[p.name];
    if (p.in !== 'query' || value === undefined) continue;
    if (p.schema?.type === 'boolean' && value === '')
      throw new ApiError(
        400,
        `query.${p.name}: must be boolean (${p.name}=true or ${p.name}=false), and the request gives it no value`,
      );
    if (p.schema?.type !== 'integer' || value === '') continue;
    if (!DECIMAL.test(value)) throw new ApiError(400, `query.${p.name}: must be integer`);
    const n = BigInt(value);
    if (n < INT64_MIN || n > INT64_MAX) delete (req.query as Record<string, unknown>)[p.name];
  }
  next();
};

/**
 * `dryRun` however it is spelt: `dryrun`, `dry_run`, `Dry-Run`, and as clients that serialise
 * lists or nest names write it (`dryRun[]`, `dryRun[0]`, `dry.run`), or with a stray space or
 * control byte: none of them is `dryRun` to Go's query parser, and each made a real release.
 */
const looksLikeDryRun = (name: string) =>
  name
    .replace(/\[.*$/s, '')
    .replace(/[^a-z0-9]/gi, '')
    .toLowerCase() === 'dryrun';

/**
 * Unknown parameters are ignored, as galaxy ignored them, except one that asks for a dry run where
 * none will be made: `dryRun` is floatip's own (no galaxy client sends one), and a caller who wrote
 * `?dryrun=true`, or `?dryRun=true` on a write without a dry run (`POST /v1/pool`), would otherwise
 * see its request change what it names.
 */
function refuseUnknownDryRun(
  req: Request,
  query: Record<string, string> | undefined,
  parameters: readonly QueryParameter[],
): void {
  if (req.method === 'GET' || req.method === 'HEAD') return;
  const known = parameters.find((p) => p.in === 'query' && p.name === 'dryRun');
  const found = Object.keys(query ?? {}).find((name) => looksLikeDryRun(name) && name !== known?.name);
  if (found === undefined) return;
  const asked = clipString(found);
  throw new ApiError(
    400,
    known
      ? `query.${asked}: unknown parameter; the dry run is asked with dryRun (case-sensitive), and without it ${req.method} ${req.path} changes what it names`
      : `query.${asked}: ${req.method} ${req.path} has no dry run; without the parameter it changes what it names`,
  );
}

/**
 * req.query as galaxy's Go server read the query string (query-string.ts), where a malformed one
 * is a 400. An empty parameter counts as absent: galaxy reads `page=` as no page at all (an
 * unparsable number is its default), and forms send empty fields. A parameter named with `[` is
 * dropped: the validator would read `keyword[x]=1` as an object `keyword`, where Go saw another
 * parameter, which no operation knows (and unknown ones are ignored, as galaxy ignored them).
 */
const goQuery: RequestHandler = (req, _res, next) => {
  const at = req.originalUrl.indexOf('?');
  let query: Record<string, string>;
  try {
    query = parseQuery(at < 0 ? '' : req.originalUrl.slice(at + 1));
  } catch (err) {
    if (err instanceof QueryStringError) throw new ApiError(400, `query: ${err.message}`);
    throw err;
  }
  const named = Object.entries(query).filter(([k]) => !k.includes('['));
  const kept = Object.fromEntries(named.filter(([, v]) => v !== ''));
  // empty ones too: goQueryTypes tells an empty parameter from an absent one; and those named with
  // `[`, which no operation reads, so that `dryRun[]=true` is refused rather than ignored
  readQueries.set(req, query);
  // express 5's req.query is a getter that parses the URL again: shadow it
  Object.defineProperty(req, 'query', { value: kept, writable: true, configurable: true, enumerable: true });
  next();
};

export function requestValidator(options: ValidatorOptions = {}): RequestHandler[] {
  const validator = OpenApiValidator.middleware({
    // its own copy: the validator annotates the document it is given
    apiSpec: structuredClone(openApiDocument()) as never,
    validateRequests: {
      // galaxy ignores parameters it does not know; so do we (a typo stays visible in the docs)
      allowUnknownQueryParameters: true,
      // parameters are text and always coerced to their types; a JSON body must have the right
      // types already (galaxy's Go decoder refuses "4" for an int, too)
      coerceTypes: false,
      // not `allErrors`: the first finding ends validation, so that `maxItems` refuses an
      // oversized release before any of its entries is looked at
      allErrors: false,
    },
    validateResponses: options.validateResponses
      ? {
          onError: (err, body, req) => {
            throw new Error(
              `response to ${req.method} ${req.originalUrl} does not match the OpenAPI document: ${err.message}; body ${JSON.stringify(body).slice(0, 500)}`,
            );
          },
        }
      : false,
    formats: {
      ip: { type: 'string', validate: isIP },
      'go-rfc3339': { type: 'string', validate: isGoRFC3339 },
    },
    validateFormats: true,
  }) as unknown as RequestHandler[];
  return [goQuery, ...validator, goQueryTypes];
}

/** A finding of the validator, as express-openapi-validator throws it. */
interface ValidationFinding {
  status: number;
  message: string;
  errors?: { path: string; message: string; errorCode?: string }[];
}

export function isValidationFinding(err: unknown): err is ValidationFinding {
  const e = err as Partial<ValidationFinding> | null;
  return typeof e === 'object' && e !== null && typeof e.status === 'number' && Array.isArray(e.errors);
}

/**
 * One line naming each field and what is wrong with it: `body.ips: must be array`; galaxy's
 * `"x" is not a valid ip` names its field after the words (`(body.ips[0].ip)`).
 * galaxy's wording is kept where galaxy had a message for the same mistake.
 */
export function describeFinding(finding: ValidationFinding, req: Request): string {
  const errors = finding.errors ?? [];
  if (errors.length === 0) return finding.message;
  return errors
    .map((e) => {
      const field = fieldName(e.path);
      // the validator's words when a path segment's escape is no escape (`/v1/ip/%zz`); Go's
      // server refused such a request line with a 400 too
      if (e.message === "malformed uri'") {
        const escape = /%(?![0-9a-f]{2})[^/]{0,2}/i.exec(req.path)?.[0];
        return escape === undefined
          ? `path ${clipString(req.path)}: its escapes are not UTF-8`
          : `path ${clipString(req.path)}: invalid URL escape ${goQuote(escape)}`;
      }
      if (e.errorCode === 'format.openapi.validation' && /format "ip"/.test(e.message)) {
        // galaxy's words first, as a script matching them expects; then which entry it was
        return `${goQuote(clipString(String(valueAt(req, e.path))))} is not a valid ip (${field})`;
      }
      if (e.errorCode === 'format.openapi.validation' && /format "go-rfc3339"/.test(e.message)) {
        // quoted as the ip and the pool name are (Go's %q), so that one envelope uses one quoting
        return `${field}: ${goQuote(clipString(String(valueAt(req, e.path))))} is not an RFC 3339 time (2006-01-02T15:04:05Z07:00, as Go reads it)`;
      }
      if (
        /^body\.ips\[\d+\]\.ip$/.test(field) &&
        (e.errorCode === 'required.openapi.validation' || valueAt(req, e.path) === null)
      ) {
        // galaxy's Go decoder leaves an absent or null ip empty, which it then calls no valid ip
        return `"" is not a valid ip (${field})`;
      }
      if (field === 'body.name' || field === 'params.name') {
        // galaxy's Go decoder leaves an absent or null name empty, and says so
        if (
          e.errorCode === 'minLength.openapi.validation' ||
          e.errorCode === 'required.openapi.validation' ||
          (field === 'body.name' && valueAt(req, e.path) === null)
        )
          return `pool name is empty${misnamed(req, 'name')}`;
        // floatip's own words (galaxy had none for a bad name, docs/galaxy.md), quoted as galaxy
        // quotes a bad ip (Go's %q), so that one answer does not mix two quotings
        if (e.errorCode === 'pattern.openapi.validation' || e.errorCode === 'maxLength.openapi.validation')
          return `pool name ${goQuote(clipString(String(valueAt(req, e.path))))} is not a Kubernetes object name (${POOL_NAME_RULE})`;
      }
      if (e.errorCode === 'required.openapi.validation') return `${field}: is required`;
      if (e.errorCode === 'additionalProperties.openapi.validation') return `${field}: unknown field`;
      return `${field}: ${e.message}`;
    })
    .join('; ');
}

/**
 * A body's key that names `field` in another case (`Name`): galaxy's Go decoder matched keys
 * case-insensitively, the document matches them exactly, so a refusal for the missing field says
 * which key was taken for another one rather than leave its caller looking at the name it sent.
 */
function misnamed(req: Request, field: string): string {
  const body: unknown = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return '';
  const key = Object.keys(body).find((k) => k !== field && k.toLowerCase() === field);
  return key === undefined ? '' : ` (body.${clipString(key)} is not ${field}: fields are matched exactly)`;
}

/** What the document's PoolName pattern says, in words. */
const POOL_NAME_RULE =
  "lower-case letters, digits and '-' in parts joined by '.', each starting and ending with a letter or digit; at most 253 characters";

/** `/body/ips/0/ip` -> `body.ips[0].ip` (also `.query.page` forms). */
function fieldName(path: string): string {
  return path
    .replace(/^[./]/, '')
    .split(/[./]/)
    .reduce((out, part) => (/^\d+$/.test(part) ? `${out}[${part}]` : out ? `${out}.${part}` : part), '');
}

function valueAt(req: Request, path: string): unknown {
  const [where, ...parts] = path.replace(/^[./]/, '').split(/[./]/);
  // path parameters are matched by the validator, before express routes the request
  const params = (req as { openapi?: { pathParams?: Record<string, string> } }).openapi?.pathParams;
  let value: unknown =
    where === 'body' ? req.body : where === 'query' ? req.query : where === 'params' ? params : undefined;
  for (const part of parts) value = (value as Record<string, unknown> | undefined)?.[part];
  return value;
}
