// Property tests of the REST port over real HTTP, against floatip on the embedded API server
// (world.ts). Every answer is below 500 and galaxy's envelope (code = status); reads change
// nothing; a query or address valid by the OpenAPI document is answered 200 (or 404 for an unknown
// address) however it is encoded, and the same as plainly encoded; a refused write changes nothing,
// and a successful one changes exactly what it says (the IPs it names, the pool it names).
import fc from 'fast-check';
import { type Allocation, canonicalAddress } from '../../src/ipam/index.js';
import { REQUEUED_ANNOTATION } from '../../src/controller/requeue.js';
import { consistency, restProblems, sendBatch, unchangedBy } from './checks.js';
import { type Answer, type Req, closeConnections, requestsSent } from './http.js';
import { type Violation, failedProperties, holds, timeLimit } from './property.js';
import { restRequests } from './rest-requests.js';
import { POOLS, type Seeded, type Snapshot, StateTracker, seededWorld, settle } from './world.js';

let seeded: Seeded;
let tracker: StateTracker;
let requests: ReturnType<typeof restRequests>;
let seededAllocations: Snapshot['allocator'];

beforeAll(async () => {
  seeded = await seededWorld();
  const { world } = seeded;
  const listed = await world.rest('GET', '/v1/ip?keyword=_&size=9999');
  requests = restRequests({
    listed: (listed.json as { content: Record<string, unknown>[] }).content,
    names: seeded.names,
  });
  tracker = await StateTracker.start(world);
  seededAllocations = tracker.current.allocator;
}, 60_000);

afterAll(async () => {
  closeConnections();
  await seeded?.world.stop();
});

const base = () => seeded.world.floatip.apiUrl;

test(
  'every read: no 5xx, the envelope, no state change',
  async () => {
    await holds('rest reads', fc.array(requests.reads, { minLength: 1, maxLength: 8 }), 700, (batch) =>
      unchangedBy(seeded.world, tracker, base(), batch, restProblems),
    );
  },
  timeLimit(150_000),
);

/** Both spellings answered as a valid request is, and alike. */
function alike(
  pair: { encoded: Req; plain: Req },
  encoded: Answer,
  plain: Answer,
  ok: number[],
): Violation[] {
  // one violation when both spellings are the same request
  const spellings =
    pair.encoded.target === pair.plain.target
      ? ([[pair.encoded, encoded]] as const)
      : ([
          [pair.encoded, encoded],
          [pair.plain, plain],
        ] as const);
  const refused = spellings
    .filter(([, a]) => !ok.includes(a.status))
    .map(([r, a]) => ({ requests: [r], answer: a, problem: `a valid request answered ${a.status}` }));
  if (refused.length > 0) return refused;
  if (encoded.status !== plain.status || encoded.text !== plain.text)
    return [
      {
        requests: [pair.encoded, pair.plain],
        answer: encoded,
        problem: `answered differently than plainly encoded (${plain.status}: ${plain.text.slice(0, 200)})`,
      },
    ];
  return [];
}

test(
  'GET /v1/ip with a valid query, and /v1/ip/{ip} with a valid address, in any encoding: answered as plainly encoded',
  async () => {
    const cases = fc.oneof(
      requests.validLists.map((pair) => ({ pair, ok: [200] })),
      requests.validAddresses.map((pair) => ({ pair, ok: [200, 404] })),
    );
    await holds('rest encodings', fc.array(cases, { minLength: 1, maxLength: 4 }), 300, async (batch) => {
      const { answers, violations } = await sendBatch(
        base(),
        batch.flatMap((c) => [c.pair.encoded, c.pair.plain]),
        restProblems,
      );
      batch.forEach((c, i) => {
        const [encoded, plain] = [answers[2 * i], answers[2 * i + 1]];
        if (encoded && plain) violations.push(...alike(c.pair, encoded, plain, c.ok));
      });
      return violations;
    });
  },
  timeLimit(150_000),
);

// ---- writes, one at a time

type Section = Record<string, unknown>;
const keysChanged = (a: Section, b: Section) =>
  [...new Set([...Object.keys(a), ...Object.keys(b)])].filter(
    (k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]),
  );

const parsed = (r: Req): unknown => {
  try {
    return JSON.parse(r.bytes?.toString('utf8') ?? '');
  } catch {
    return undefined;
  }
};
const decodedSegment = (text: string) => {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
};
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const canonical = (ip: string) => {
  try {
    return canonicalAddress(ip);
  } catch {
    return ip;
  }
};

/** Pods may only have been sent back to the scheduler (a release lets waiting pods retry). */
function podChanges(before: Snapshot, after: Snapshot): string[] {
  const strip = (p: unknown) => {
    const pod = p as { annotations?: Record<string, string> } | undefined;
    if (!pod?.annotations) return pod;
    const { [REQUEUED_ANNOTATION]: _requeued, ...annotations } = pod.annotations;
    return { ...pod, annotations };
  };
  return keysChanged(
    Object.fromEntries(Object.entries(before.pods).map(([k, v]) => [k, strip(v)])),
    Object.fromEntries(Object.entries(after.pods).map(([k, v]) => [k, strip(v)])),
  );
}

/** What a successful write may change, by kind; a violation's problem for anything else. */
function unexpectedChanges(r: Req, a: Answer, before: Snapshot, after: Snapshot): string[] {
  const fips = keysChanged(before.floatingIPs, after.floatingIPs);
  const memory = keysChanged(before.allocator, after.allocator);
  const pools = keysChanged(before.pools, after.pools);
  const body = parsed(r);
  const problems: string[] = [];
  if (r.method === 'POST' && r.path === '/v1/ip') {
    const ips = isObject(body) && Array.isArray(body.ips) ? body.ips : undefined;
    if (!ips) return [`a release that names no IPs (no "ips" list) answered ${a.status}: a silent success`];
    const named = new Set(ips.map((i) => (isObject(i) && typeof i.ip === 'string' ? canonical(i.ip) : '')));
    const unreleased = new Set(((a.json as { unreleased?: string[] }).unreleased ?? []).map(canonical));
    const dry =
      (a.json as { dryRun?: unknown }).dryRun === true ||
      new URLSearchParams(r.target.split('?')[1]).get('dryRun') === 'true';
    const released = dry ? [] : [...named].filter((ip) => !unreleased.has(ip));
    for (const ip of new Set([...fips, ...memory]))
      if (!released.includes(ip) || after.allocator[ip] !== undefined) problems.push(`${ip} changed`);
    for (const ip of released)
      if (before.allocator[ip] === undefined || after.allocator[ip] !== undefined)
        problems.push(
          `${ip} is answered as released but ${before.allocator[ip] ? 'is still held' : 'was not held'}`,
        );
    if (pools.length > 0) problems.push(`pools ${pools.join(', ')} changed`);
    problems.push(...podChanges(before, after).map((p) => `pod ${p} changed`));
    return problems;
  }
  if (podChanges(before, after).length > 0)
    problems.push(`pods ${podChanges(before, after).join(', ')} changed`);
  if (r.method === 'POST') {
    if (!isObject(body) || typeof body.name !== 'string')
      return ['a pool that is not an object with a name was stored'];
    const expected = { size: body.size ?? 0, preAllocateIP: body.preAllocateIP ?? false };
    if (typeof expected.size !== 'number' || typeof expected.preAllocateIP !== 'boolean')
      problems.push(
        `a pool of size ${JSON.stringify(body.size)}, preAllocateIP ${JSON.stringify(body.preAllocateIP)} was stored`,
      );
    if (pools.some((p) => p !== body.name)) problems.push(`pools ${pools.join(', ')} changed`);
    if (JSON.stringify(after.pools[body.name]) !== JSON.stringify(expected))
      problems.push(
        `pool ${body.name} is ${JSON.stringify(after.pools[body.name])}, not ${JSON.stringify(expected)}`,
      );
    for (const ip of memory)
      if (
        before.allocator[ip] !== undefined ||
        (after.allocator[ip] as { key?: string }).key !== `pool__${body.name}_`
      )
        problems.push(`${ip} changed: ${JSON.stringify(after.allocator[ip])}`);
    return problems;
  }
  // DELETE /v1/pool/{name}
  const name = decodedSegment(r.path.slice('/v1/pool/'.length));
  if (name === undefined || pools.length !== 1 || pools[0] !== name || after.pools[name] !== undefined)
    problems.push(`deleting pool ${JSON.stringify(name)} changed pools ${pools.join(', ') || '(none)'}`);
  if (fips.length + memory.length > 0) problems.push(`addresses ${[...fips, ...memory].join(', ')} changed`);
  return problems;
}

/** Puts back what earlier writes took away (seeded allocations and pools), so that writes keep having something to act on. */
async function replenish(): Promise<void> {
  const { world } = seeded;
  for (const [ip, a] of Object.entries(seededAllocations)) {
    const { key, policy, nodeName, podUid, reserved } = a as Allocation;
    if (!world.floatip.allocator.get(ip) && !reserved && world.floatip.allocator.isConfigured(ip))
      await world.floatip.store.allocateIP(ip, key, { policy, nodeName, podUid });
  }
  for (const pool of POOLS) await world.floatip.pools.put(pool);
  await settle(world);
  await tracker.observe();
}

test(
  'writes: a refusal changes nothing; a success changes what it names, and stays consistent',
  async () => {
    const writes = fc.oneof(requests.releases, requests.poolPuts, requests.poolDeletes);
    let runs = 0;
    await holds('rest writes', writes, 1400, async (r) => {
      if (++runs % 50 === 0) await replenish();
      const { answers, violations } = await sendBatch(base(), [r], restProblems);
      const a = answers[0];
      const { before, after, changes } = await tracker.observe();
      if (!a) return violations;
      if (a.status >= 400) {
        if (changes.length > 0)
          violations.push({
            requests: [r],
            answer: a,
            problem: `a refused write changed the state: ${changes.join('; ')}`,
          });
        return violations;
      }
      for (const problem of unexpectedChanges(r, a, before, after))
        violations.push({ requests: [r], answer: a, problem });
      return [...violations, ...(await consistency(seeded.world, r))];
    });
  },
  timeLimit(150_000),
);

test('at least 5,000 requests reached the REST API', () => {
  if (failedProperties().length > 0)
    throw new Error(
      `not counted: ${failedProperties().join(', ')} failed (above) before sending all its cases`,
    );
  expect(requestsSent()).toBeGreaterThanOrEqual(5000);
});
