// Label and field selectors in the string syntax of `?labelSelector=` and `?fieldSelector=`, parsed once per
// request and then evaluated per object.
import { badRequest } from './status.js';
import { isPlainObject, type KubeObject } from './types.js';

type LabelOp = 'exists' | 'notexists' | '=' | '!=' | 'in' | 'notin' | 'gt' | 'lt';

interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}

export type ObjectMatcher = (obj: KubeObject) => boolean;

const KEY_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const KEY_PREFIX = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const IDENT_END = /[\s,=!()<>]/;

function selectorError(selector: string, why: string): Error {
  return badRequest(`unable to parse requirement: ${why} (in label selector "${selector}")`);
}

function checkKey(selector: string, key: string): void {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const ok =
    KEY_NAME.test(name) &&
    name.length <= 63 &&
    (prefix === undefined || (KEY_PREFIX.test(prefix) && prefix.length <= 253));
  if (!ok) throw selectorError(selector, `invalid label key "${key}"`);
}

function checkValue(selector: string, value: string): void {
  if (value.length > 63 || !LABEL_VALUE.test(value)) {
    throw selectorError(selector, `invalid label value: "${value}"`);
  }
}

/** Parses the label selector grammar of k8s.io/apimachinery/pkg/labels (=, ==, !=, in, notin, exists, !, >, <). */
export function parseLabelSelector(selector: string): LabelRequirement[] {
  const reqs: LabelRequirement[] = [];
  let i = 0;
  const n = selector.length;
  const skipSpace = (): void => {
    while (i < n && /\s/.test(selector[i] ?? '')) i++;
  };
  const ident = (): string => {
    const start = i;
    while (i < n && !IDENT_END.test(selector[i] ?? '')) i++;
    return selector.slice(start, i);
  };
  skipSpace();
  if (i === n) return reqs;
  for (;;) {
    skipSpace();
    let negated = false;
    if (selector[i] === '!') {
      negated = true;
      i++;
      skipSpace();
    }
    const key = ident();
    if (!key)
      throw selectorError(selector, `found '${selector[i] ?? 'end of string'}', expected: identifier`);
    checkKey(selector, key);
    skipSpace();
    if (negated) {
      reqs.push({ key, op: 'notexists', values: [] });
    } else if (i === n || selector[i] === ',') {
      reqs.push({ key, op: 'exists', values: [] });
    } else if (selector.startsWith('==', i) || selector.startsWith('!=', i) || selector[i] === '=') {
      const op: LabelOp = selector[i] === '!' ? '!=' : '=';
      i += selector.startsWith('=', i) && !selector.startsWith('==', i) ? 1 : 2;
      skipSpace();
      const value = ident();
      checkValue(selector, value);
      reqs.push({ key, op, values: [value] });
    } else if (selector[i] === '>' || selector[i] === '<') {
      const op: LabelOp = selector[i] === '>' ? 'gt' : 'lt';
      i++;
      skipSpace();
      const value = ident();
      if (!/^-?\d+$/.test(value))
        throw selectorError(selector, `for 'Gt', 'Lt' operators, the value must be an integer`);
      reqs.push({ key, op, values: [value] });
    } else {
      const word = ident();
      if (word !== 'in' && word !== 'notin') {
        throw selectorError(
          selector,
          `found '${word || selector[i]}', expected: in, notin, =, ==, !=, gt, lt`,
        );
      }
      skipSpace();
      if (selector[i] !== '(')
        throw selectorError(selector, `found '${selector[i] ?? 'end of string'}', expected: '('`);
      i++;
      const values: string[] = [];
      for (;;) {
        skipSpace();
        const value = ident();
        checkValue(selector, value);
        values.push(value);
        skipSpace();
        if (selector[i] === ',') {
          i++;
          continue;
        }
        if (selector[i] === ')') {
          i++;
          break;
        }
        throw selectorError(selector, `found '${selector[i] ?? 'end of string'}', expected: ',' or ')'`);
      }
      reqs.push({ key, op: word, values });
    }
    skipSpace();
    if (i === n) return reqs;
    if (selector[i] !== ',')
      throw selectorError(selector, `found '${selector[i]}', expected: ',' or end of string`);
    i++;
  }
}

function requirementMatches(req: LabelRequirement, labels: Record<string, string> | undefined): boolean {
  const value = labels?.[req.key];
  switch (req.op) {
    case 'exists':
      return value !== undefined;
    case 'notexists':
      return value === undefined;
    case '=':
      return value === req.values[0];
    case '!=':
      return value !== req.values[0];
    case 'in':
      return value !== undefined && req.values.includes(value);
    case 'notin':
      return value === undefined || !req.values.includes(value);
    case 'gt':
    case 'lt': {
      if (value === undefined || !/^-?\d+$/.test(value)) return false;
      const [have, want] = [Number(value), Number(req.values[0])];
      return req.op === 'gt' ? have > want : have < want;
    }
  }
}

export function labelMatcher(selector: string): ObjectMatcher | undefined {
  const reqs = parseLabelSelector(selector);
  if (reqs.length === 0) return undefined;
  return (obj) => {
    const labels = obj.metadata?.labels;
    return reqs.every((r) => requirementMatches(r, labels));
  };
}

interface FieldRequirement {
  path: string[];
  field: string;
  equal: boolean;
  value: string;
}

/** Splits on a separator that is not escaped with a backslash; field selector values escape `\,` `\=` `\\`. */
function splitUnescaped(s: string, sep: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i] ?? '';
    if (c === '\\' && i + 1 < s.length) {
      current += c + (s[i + 1] ?? '');
      i++;
    } else if (c === sep) {
      parts.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  parts.push(current);
  return parts;
}

function unescapeFieldValue(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

/** Events select on `source`, which is stored as `source.component`. */
const FIELD_ALIASES: Record<string, string> = { source: 'source.component' };

function parseFieldSelector(selector: string, allowed: ReadonlySet<string>): FieldRequirement[] {
  if (selector.trim() === '') return [];
  return splitUnescaped(selector, ',').map((term) => {
    const m = /^\s*([^=!\s]+)\s*(==|=|!=)(.*)$/.exec(term);
    if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
    const field = m[1] ?? '';
    if (!allowed.has(field)) throw badRequest(`field label not supported: ${field}`);
    return {
      field,
      path: (FIELD_ALIASES[field] ?? field).split('.'),
      equal: m[2] !== '!=',
      value: unescapeFieldValue((m[3] ?? '').trim()),
    };
  });
}

/** A field's value as kube-apiserver's field sets present it: strings as is, other scalars printed, missing = "". */
function fieldValue(obj: KubeObject, path: string[]): string {
  let cur: unknown = obj;
  for (const part of path) {
    if (!isPlainObject(cur)) return '';
    cur = cur[part];
  }
  if (cur === undefined || cur === null) return '';
  if (typeof cur === 'string') return cur;
  if (typeof cur === 'number' || typeof cur === 'boolean') return String(cur);
  return '';
}

export function fieldMatcher(
  selector: string,
  selectableFields: readonly string[],
): ObjectMatcher | undefined {
  const allowed = new Set(['metadata.name', 'metadata.namespace', ...selectableFields]);
  const reqs = parseFieldSelector(selector, allowed);
  if (reqs.length === 0) return undefined;
  return (obj) => reqs.every((r) => (fieldValue(obj, r.path) === r.value) === r.equal);
}

/** Both selectors of a request, combined; undefined when nothing is selected out. */
export function objectMatcher(
  labelSelector: string | undefined,
  fieldSelector: string | undefined,
  selectableFields: readonly string[],
): ObjectMatcher | undefined {
  const byLabel = labelSelector ? labelMatcher(labelSelector) : undefined;
  const byField = fieldSelector ? fieldMatcher(fieldSelector, selectableFields) : undefined;
  if (byLabel && byField) return (obj) => byLabel(obj) && byField(obj);
  return byLabel ?? byField;
}

/** The string form of a metav1.LabelSelector, as the scale subresource reports it in `status.selector`. */
export function formatLabelSelector(selector: unknown): string {
  if (!isPlainObject(selector)) return '';
  const parts: string[] = [];
  const matchLabels = isPlainObject(selector.matchLabels) ? selector.matchLabels : {};
  for (const key of Object.keys(matchLabels).sort()) parts.push(`${key}=${String(matchLabels[key])}`);
  const exprs = Array.isArray(selector.matchExpressions)
    ? selector.matchExpressions.filter(isPlainObject)
    : [];
  for (const e of exprs) {
    const key = String(e.key ?? '');
    const values = Array.isArray(e.values) ? e.values.map(String).sort() : [];
    switch (e.operator) {
      case 'In':
        parts.push(`${key} in (${values.join(',')})`);
        break;
      case 'NotIn':
        parts.push(`${key} notin (${values.join(',')})`);
        break;
      case 'Exists':
        parts.push(key);
        break;
      case 'DoesNotExist':
        parts.push(`!${key}`);
        break;
    }
  }
  return parts.join(',');
}
