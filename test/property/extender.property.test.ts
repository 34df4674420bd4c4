// Property tests of the extender port over real HTTP, against floatip on the embedded API server
// (world.ts): generated kube-scheduler messages, valid and mutated, and every other request. Every
// answer is below 500 and well-formed; filter, prioritize and preempt never change state; a refused
// bind changes nothing, and a successful one binds one pod and leaves the state consistent.
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { consistency, extenderProblems, sendBatch, unchangedBy } from './checks.js';
import { extenderRequests } from './extender-requests.js';
import { closeConnections, requestsSent } from './http.js';
import { failedProperties, holds, timeLimit } from './property.js';
import { NODES, PODS, type Seeded, StateTracker, WAITING, seededWorld } from './world.js';

let seeded: Seeded;
let tracker: StateTracker;
let requests: ReturnType<typeof extenderRequests>;

beforeAll(async () => {
  seeded = await seededWorld();
  const { world } = seeded;
  const nodes: V1Node[] = await Promise.all(Object.keys(NODES).map((name) => world.core.readNode({ name })));
  const pods: V1Pod[] = (await world.core.listNamespacedPod({ namespace: 'ns1' })).items;
  requests = extenderRequests({ pods, nodes, names: seeded.names });
  // the first call a leader answers sends the pods that wait for an address back to the scheduler
  await fetch(`${world.floatip.extenderUrl}/v1/filter`, { method: 'POST', body: '{}' });
  tracker = await StateTracker.start(world);
}, 60_000);

afterAll(async () => {
  closeConnections();
  await seeded?.world.stop();
});

const base = () => seeded.world.floatip.extenderUrl;

test(
  'filter, prioritize and preempt: no 5xx, well-formed answers, no state change',
  async () => {
    await holds('extender reads', fc.array(requests.reads, { minLength: 1, maxLength: 8 }), 1000, (batch) =>
      unchangedBy(seeded.world, tracker, base(), batch, extenderProblems),
    );
  },
  timeLimit(150_000),
);

/** Deletes and re-creates the waiting pods that binds bound, so that binds keep having pods to bind. */
async function recycle(): Promise<void> {
  const { world } = seeded;
  for (const spec of PODS.filter((p) => WAITING.includes(p.name))) {
    if (!world.floatip.cluster.pods.get('ns1', spec.name)?.spec?.nodeName) continue;
    await world.deletePod(spec.name);
    await world.pod(spec);
  }
  await tracker.observe();
}

test(
  'bind: a refusal changes nothing; a success binds one pod and stays consistent',
  async () => {
    let runs = 0;
    await holds('extender binds', requests.binds, 800, async (r) => {
      if (++runs % 100 === 0) await recycle();
      const { answers, violations } = await sendBatch(base(), [r], extenderProblems);
      const a = answers[0];
      const { before, after, changes } = await tracker.observe();
      if (!a) return violations;
      const refused = a.status >= 400 || (a.json as { Error?: unknown } | undefined)?.Error !== '';
      if (refused) {
        if (changes.length > 0)
          violations.push({
            requests: [r],
            answer: a,
            problem: `a refused bind changed the state: ${changes.join('; ')}`,
          });
        return violations;
      }
      const rebound = Object.keys(after.pods).filter(
        (p) => JSON.stringify(after.pods[p]) !== JSON.stringify(before.pods[p]),
      );
      const nodeOf = (s: typeof after, p: string) =>
        (s.pods[p] as { nodeName?: string } | undefined)?.nodeName;
      if (rebound.length !== 1 || nodeOf(before, rebound[0]!) !== '' || !nodeOf(after, rebound[0]!))
        violations.push({
          requests: [r],
          answer: a,
          problem: `a successful bind changed pods ${rebound.join(', ') || '(none)'}`,
        });
      return [...violations, ...(await consistency(seeded.world, r))];
    });
  },
  timeLimit(150_000),
);

test(
  'health checks, unknown paths and methods, bodies over the limit: no 5xx, well-formed, no state change',
  async () => {
    await holds('extender other', fc.array(requests.other, { minLength: 1, maxLength: 8 }), 200, (batch) =>
      unchangedBy(seeded.world, tracker, base(), batch, extenderProblems),
    );
  },
  timeLimit(150_000),
);

test('at least 5,000 requests reached the extender', () => {
  if (failedProperties().length > 0)
    throw new Error(
      `not counted: ${failedProperties().join(', ')} failed (above) before sending all its cases`,
    );
  expect(requestsSent()).toBeGreaterThanOrEqual(5000);
});
