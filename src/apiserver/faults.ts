// Fault injection for tests: make chosen requests fail or stall, and cut watches, so that floatip's retry,
// conflict and re-list paths can be exercised against real HTTP.
import { ApiError, badRequest, injectedStatus, type StatusReason } from './status.js';
import { isPlainObject, type Verb } from './types.js';

/** Which requests a fault applies to; every field left out matches anything. */
export interface FaultMatch {
  verb?: Verb;
  /** "pods", or "pods/binding", "pods/status" for a subresource. A plain resource does not match its subresources. */
  resource?: string;
  /** API group, "" for core. */
  group?: string;
  name?: string;
  namespace?: string;
}

export interface FaultRule extends FaultMatch {
  /** Answer with this HTTP status and a Status body of the matching reason (409 Conflict, 500 InternalError…). */
  status?: number;
  reason?: StatusReason;
  message?: string;
  /** Hold the request this long before handling (or failing) it. */
  delayMs?: number;
  /** How many matching requests the fault applies to (default 1). */
  times?: number;
}

export interface InjectedFault extends FaultRule {
  id: number;
  /** Matching requests still to be affected. */
  remaining: number;
  /** Matching requests affected so far. */
  fired: number;
}

/** What the server knows about a request when it consults the faults. */
export interface RequestAttributes {
  verb: Verb;
  group: string;
  resource: string;
  subresource?: string;
  name?: string;
  namespace?: string;
}

/** The outcome for one request: wait, then fail (or carry on when `error` is absent). */
export interface FaultAction {
  delayMs: number;
  error?: ApiError;
}

const VERBS: ReadonlySet<string> = new Set([
  'get',
  'list',
  'watch',
  'create',
  'update',
  'patch',
  'delete',
  'deletecollection',
]);

export class FaultController {
  private nextId = 1;
  private readonly rules: InjectedFault[] = [];

  constructor(
    private readonly watches: { dropAll(): number },
    private readonly history: { expire(): number },
  ) {}

  /** Adds a fault; see FaultRule. Throws a 400 ApiError when the rule makes no sense. */
  inject(rule: FaultRule): InjectedFault {
    const checked = checkRule(rule);
    const fault: InjectedFault = { ...checked, id: this.nextId++, remaining: checked.times ?? 1, fired: 0 };
    this.rules.push(fault);
    return { ...fault };
  }

  /** The next `times` requests matching `match` fail with `status` (and a Status body with its reason). */
  failNext(
    match: FaultMatch,
    status: number,
    opts: { times?: number; message?: string } = {},
  ): InjectedFault {
    return this.inject({ ...match, status, ...opts });
  }

  /** The next `times` requests matching `match` are held for `delayMs` before being handled normally. */
  delayNext(match: FaultMatch, delayMs: number, opts: { times?: number } = {}): InjectedFault {
    return this.inject({ ...match, delayMs, ...opts });
  }

  /** Ends every open watch stream cleanly; returns how many were open. */
  dropWatches(): number {
    return this.watches.dropAll();
  }

  /**
   * Forgets the change history, as an etcd compaction would: a watch from any resourceVersion before now
   * then gets 410 Gone, and an informer must re-list. Returns the revision compacted to.
   */
  expireHistory(): number {
    return this.history.expire();
  }

  /** Faults not yet used up. */
  pending(): InjectedFault[] {
    return this.rules.filter((r) => r.remaining > 0).map((r) => ({ ...r }));
  }

  clear(): number {
    const n = this.rules.length;
    this.rules.length = 0;
    return n;
  }

  /** Consumes the first live fault matching the request, if any. */
  take(req: RequestAttributes): FaultAction | undefined {
    const at = this.rules.findIndex((r) => r.remaining > 0 && matches(r, req));
    const rule = this.rules[at];
    if (!rule) return undefined;
    rule.remaining--;
    rule.fired++;
    if (rule.remaining === 0) this.rules.splice(at, 1);
    const action: FaultAction = { delayMs: rule.delayMs ?? 0 };
    if (rule.status !== undefined) action.error = injectedStatus(rule.status, rule.message, rule.reason);
    return action;
  }
}

function matches(rule: FaultMatch, req: RequestAttributes): boolean {
  const resource = req.subresource ? `${req.resource}/${req.subresource}` : req.resource;
  return (
    (rule.verb === undefined || rule.verb === req.verb) &&
    (rule.resource === undefined || rule.resource === resource) &&
    (rule.group === undefined || rule.group === req.group) &&
    (rule.name === undefined || rule.name === req.name) &&
    (rule.namespace === undefined || rule.namespace === req.namespace)
  );
}

function checkRule(rule: unknown): FaultRule {
  if (!isPlainObject(rule)) throw badRequest('a fault must be a JSON object');
  const out: FaultRule = {};
  const problems: string[] = [];
  const optionalString = (field: keyof FaultMatch | 'message'): void => {
    const v = rule[field];
    if (v === undefined) return;
    if (typeof v !== 'string') problems.push(`${field} must be a string`);
    else (out as Record<string, unknown>)[field] = v;
  };
  for (const f of ['resource', 'group', 'name', 'namespace', 'message'] as const) optionalString(f);
  if (rule.verb !== undefined) {
    if (typeof rule.verb !== 'string' || !VERBS.has(rule.verb)) {
      problems.push(`verb must be one of ${[...VERBS].join(', ')}`);
    } else out.verb = rule.verb as Verb;
  }
  if (rule.status !== undefined) {
    if (!Number.isInteger(rule.status) || (rule.status as number) < 400 || (rule.status as number) > 599) {
      problems.push('status must be an HTTP error code (400-599)');
    } else out.status = rule.status as number;
  }
  if (rule.reason !== undefined) {
    if (typeof rule.reason !== 'string') problems.push('reason must be a string');
    else out.reason = rule.reason as StatusReason;
  }
  if (rule.delayMs !== undefined) {
    if (typeof rule.delayMs !== 'number' || !(rule.delayMs >= 0) || rule.delayMs > 600_000) {
      problems.push('delayMs must be a number of milliseconds between 0 and 600000');
    } else out.delayMs = rule.delayMs;
  }
  if (rule.times !== undefined) {
    if (!Number.isInteger(rule.times) || (rule.times as number) < 1)
      problems.push('times must be an integer ≥ 1');
    else out.times = rule.times as number;
  }
  const known = new Set([
    'verb',
    'resource',
    'group',
    'name',
    'namespace',
    'status',
    'reason',
    'message',
    'delayMs',
    'times',
  ]);
  for (const key of Object.keys(rule)) if (!known.has(key)) problems.push(`unknown field "${key}"`);
  if (out.status === undefined && out.delayMs === undefined)
    problems.push('a fault needs a status, a delayMs, or both');
  if (problems.length > 0) throw badRequest(`invalid fault: ${problems.join('; ')}`);
  return out;
}
