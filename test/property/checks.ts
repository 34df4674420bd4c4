// What every answer must be, whatever was asked: never a 5xx (the replica serves throughout), and
// well-formed for its port: the extender's errors are JSON with its `Error` field, the REST API's
// every JSON answer is galaxy's envelope whose `code` is the HTTP status.
import type { World } from '../integration/world.js';
import type { Answer, Req } from './http.js';
import { type Violation, answer, isViolation } from './property.js';
import type { StateTracker } from './world.js';

const isJson = (a: Answer) => /^application\/json\b/.test(String(a.headers['content-type'] ?? ''));
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The route express picks for a path: routing ignores case and one trailing slash. */
const routeOf = (r: Req) => r.path.toLowerCase().replace(/(.)\/$/, '$1');

/**
 * The longest text an answer may carry about what it was sent: 4,096 characters of it and how long
 * it was (src/clip.ts), and the words around it.
 */
const TEXT_BOUND = 4096 + 400;

export function extenderProblems(r: Req, a: Answer): string[] {
  if (a.status >= 500) return [`a server error (${a.status})`];
  if (isObject(a.json) && typeof a.json.Error === 'string' && a.json.Error.length > TEXT_BOUND)
    return [`an Error of ${a.json.Error.length} characters: a caller's text echoed unclipped`];
  if (r.method === 'HEAD') return [];
  const route = routeOf(r);
  if (a.status >= 400) {
    if (!isJson(a) || !isObject(a.json)) return [`an error (${a.status}) that is not a JSON object`];
    if (typeof a.json.Error !== 'string' || a.json.Error === '')
      return [`an error (${a.status}) without its Error text`];
    return [];
  }
  if (r.method === 'GET' && ['/healthy', '/healthz', '/readyz'].includes(route))
    return a.status === 200 && a.text === 'ok' ? [] : [`a health check answered ${a.status} ${a.text}`];
  if (r.method === 'POST' && a.status === 200) {
    const verb = route.slice('/v1/'.length);
    const shape = VERB_SHAPES[verb];
    if (!shape) return [`200 for a path the extender does not serve`];
    if (!isJson(a) || a.json === undefined) return ['an answer that is not JSON'];
    return shape(a.json) ? [] : [`an answer not shaped as kube-scheduler's ${verb} result`];
  }
  if (r.method === 'OPTIONS' && a.status === 200) return [];
  return [`an unexpected answer ${a.status} to ${r.method}`];
}

const VERB_SHAPES: Record<string, (json: unknown) => boolean> = {
  filter: (j) =>
    isObject(j) && typeof j.Error === 'string' && 'Nodes' in j && 'NodeNames' in j && isObject(j.FailedNodes),
  prioritize: (j) =>
    Array.isArray(j) &&
    j.every((p) => isObject(p) && typeof p.Host === 'string' && typeof p.Score === 'number'),
  bind: (j) => isObject(j) && typeof j.Error === 'string',
  // null: galaxy's nil map, when no victims were sent
  preempt: (j) => isObject(j) && (isObject(j.NodeNameToMetaVictims) || j.NodeNameToMetaVictims === null),
};
VERB_SHAPES.priority = VERB_SHAPES.prioritize!;

/** The REST API's answers: JSON ones are the envelope; the document, metrics, Swagger UI and the dashboard are what they are. */
export function restProblems(r: Req, a: Answer): string[] {
  if (a.status >= 500) return [`a server error (${a.status})`];
  if (r.method === 'HEAD' || (a.status >= 300 && a.status < 400)) return [];
  const route = routeOf(r);
  if (a.status < 300 && r.method === 'GET') {
    if (route === '/openapi.json' || route === '/apidocs.json')
      return isObject(a.json) && typeof a.json.openapi === 'string'
        ? []
        : ['the OpenAPI document is not JSON'];
    if (route === '/metrics')
      return /^text\/plain/.test(String(a.headers['content-type'])) ? [] : ['metrics are not text'];
    if (route.startsWith('/apidocs')) return [];
    // the dashboard's page and its bundled files (when built)
    if (route === '/')
      return /^text\/html/.test(String(a.headers['content-type'])) ? [] : ['the dashboard page is not HTML'];
    if (route.startsWith('/dashboard/')) return [];
  }
  if (!isJson(a) || !isObject(a.json)) return [`an answer (${a.status}) that is not a JSON object`];
  // a page of IPs is galaxy's ListIPResp, the one answer without the envelope
  if (a.status < 300 && r.method === 'GET' && route === '/v1/ip' && !('code' in a.json))
    return typeof a.json.totalElements === 'number' ? [] : ['a page of IPs without totalElements'];
  if (a.json.code !== a.status) return [`an envelope whose code (${String(a.json.code)}) is not the status`];
  if (typeof a.json.message !== 'string') return ['an envelope without its message'];
  if (a.json.message.length > TEXT_BOUND)
    return [`a message of ${a.json.message.length} characters: a caller's text echoed unclipped`];
  if (a.status >= 400 && a.json.message === '') return [`an error (${a.status}) with an empty message`];
  return [];
}

/** Sends a batch at once; the answers, with what is wrong with each. */
export async function sendBatch(
  base: string,
  batch: readonly Req[],
  problems: (r: Req, a: Answer) => string[],
): Promise<{ answers: (Answer | undefined)[]; violations: Violation[] }> {
  const results = await Promise.all(batch.map((r) => answer(base, r)));
  const violations: Violation[] = [];
  const answers = results.map((res, i) => {
    if (isViolation(res)) {
      violations.push(res);
      return undefined;
    }
    for (const problem of problems(batch[i]!, res))
      violations.push({ requests: [batch[i]!], answer: res, problem });
    return res;
  });
  return { answers, violations };
}

/**
 * A batch that must change nothing, whatever it is answered: sent at once, each answer checked,
 * the state compared with the last seen, and both ports and the API server asked whether they are up.
 */
export async function unchangedBy(
  world: World,
  tracker: StateTracker,
  base: string,
  batch: readonly Req[],
  problems: (r: Req, a: Answer) => string[],
): Promise<Violation[]> {
  const { violations } = await sendBatch(base, batch, problems);
  const { changes } = await tracker.observe();
  if (changes.length > 0)
    violations.push({ requests: batch, problem: `the state changed: ${changes.join('; ')}` });
  return [...violations, ...(await stillUp(world))];
}

/** Both ports and the embedded API server still answer. */
async function stillUp(world: World): Promise<Violation[]> {
  const checks: [string, string][] = [
    ['the extender', `${world.floatip.extenderUrl}/healthz`],
    ['the REST API', `${world.floatip.apiUrl}/v1/subnets`],
    ['the embedded API server', `${world.server.url}/healthz`],
  ];
  const out: Violation[] = [];
  for (const [what, url] of checks) {
    const status = await fetch(url).then(
      (res) => res.status,
      (err: Error) => err.message,
    );
    if (status !== 200) out.push({ requests: [], problem: `${what} is down after the batch: ${status}` });
  }
  return out;
}

/** The integration tests' consistency check, as a violation rather than a thrown expectation. */
export async function consistency(world: World, after: Req): Promise<Violation[]> {
  try {
    await world.expectConsistent();
    return [];
  } catch (err) {
    return [{ requests: [after], problem: `inconsistent after a success: ${(err as Error).message}` }];
  }
}
