// What a request asks for beyond its path (request-info.ts): dryRun, list options, integers in the
// query, DeleteOptions' preconditions. Decoded once here, with kube-apiserver's 400 messages for a
// malformed value, so that every verb refuses the same input the same way.
import type { ListOptions, Preconditions } from './resources.js';
import { badRequest } from './status.js';
import { isPlainObject } from './types.js';

export function dryRunOf(url: URL): boolean {
  const values = url.searchParams.getAll('dryRun');
  for (const v of values) {
    if (v !== 'All') throw badRequest(`dryRun: Unsupported value: "${v}": supported values: "All"`);
  }
  return values.length > 0;
}

export function nonNegativeInt(url: URL, param: string): number | undefined {
  const raw = url.searchParams.get(param);
  if (raw === null || raw === '') return undefined;
  if (!/^\d+$/.test(raw))
    throw badRequest(`${param}: Invalid value: "${raw}": must be a non-negative integer`);
  return Number(raw);
}

export function listOptions(url: URL): ListOptions {
  const opts: ListOptions = {};
  const labelSelector = url.searchParams.get('labelSelector');
  const fieldSelector = url.searchParams.get('fieldSelector');
  const limit = nonNegativeInt(url, 'limit');
  const cont = url.searchParams.get('continue');
  if (labelSelector) opts.labelSelector = labelSelector;
  if (fieldSelector) opts.fieldSelector = fieldSelector;
  if (limit !== undefined) opts.limit = limit;
  if (cont) opts.continueToken = cont;
  return opts;
}

export function preconditionsOf(body: unknown): Preconditions {
  if (body === undefined) return {};
  if (!isPlainObject(body)) throw badRequest('DeleteOptions must be a JSON object');
  const pre = body.preconditions;
  if (pre === undefined || pre === null) return {};
  if (!isPlainObject(pre)) throw badRequest('DeleteOptions.preconditions must be a JSON object');
  const out: Preconditions = {};
  if (typeof pre.uid === 'string') out.uid = pre.uid;
  if (typeof pre.resourceVersion === 'string') out.resourceVersion = pre.resourceVersion;
  return out;
}
