// Sending refused pods back to the scheduler, as a unit: what is touched, when, and only once.
import { REQUEUED_ANNOTATION, Requeue, type PodRef } from '../../../src/controller/requeue.js';
import { silentLogger } from '../../../src/log.js';

function setup(putAside: PodRef[] = []) {
  const touched: string[] = [];
  const counted: string[] = [];
  let serving = true;
  const requeue = new Requeue(
    (namespace, name, uid, annotations) => {
      expect(Object.keys(annotations)).toEqual([REQUEUED_ANNOTATION]);
      touched.push(`${namespace}/${name}@${uid}`);
      return Promise.resolve();
    },
    silentLogger(),
    { putAside: () => putAside, serving: () => serving, counted: (why, n) => counted.push(`${why} ${n}`) },
  );
  return { requeue, touched, counted, setServing: (s: boolean) => (serving = s) };
}

test('the UID rule: the refused pod is touched once its old incarnation is settled, not before', async () => {
  const { requeue, touched, counted } = setup();
  requeue.refused('ns1', 'web-0', 'u2');
  await requeue.settled('ns1', 'web-1');
  expect(touched).toEqual([]);
  await requeue.settled('ns1', 'web-0');
  await requeue.settled('ns1', 'web-0');
  expect(touched).toEqual(['ns1/web-0@u2']);
  expect(counted).toEqual(['uid-rule 1']);
});

test('an app at its limit: its waiting pods are touched when an address under its prefix comes back', async () => {
  const { requeue, touched } = setup();
  requeue.refusedForApp('dp_ns1_web_', 'ns1', 'web-x', 'u1');
  requeue.refusedForApp('dp_ns1_web_', 'ns1', 'web-y', 'u2');
  requeue.refusedForApp('dp_ns1_api_', 'ns1', 'api-x', 'u3');
  await requeue.appChanged('dp_ns1_other_a');
  expect(touched).toEqual([]);
  await requeue.appChanged('dp_ns1_web_web-z');
  expect(touched.sort()).toEqual(['ns1/web-x@u1', 'ns1/web-y@u2']);
  expect(requeue.waiting).toBe(1);
});

test('a freed address sends back the pod waiting longest for its subnet, one per address', async () => {
  const { requeue, touched } = setup();
  requeue.refusedForSubnets('ns1', 'p1', 'u1', new Set(['A']));
  requeue.refusedForSubnets('ns1', 'p2', 'u2', new Set(['A', 'B']));
  requeue.refusedForSubnets('ns1', 'p3', 'u3', new Set(['B']));
  // refused again, p1 keeps its place in the line
  requeue.refusedForSubnets('ns1', 'p1', 'u1', new Set(['A']));
  await requeue.addressFreed(['B']);
  await requeue.addressFreed(['A']);
  await requeue.addressFreed(['C']);
  expect(touched).toEqual(['ns1/p2@u2', 'ns1/p1@u1']);
});

test('a bound pod and a settled pod wait for nothing any more', async () => {
  const { requeue, touched } = setup();
  requeue.refusedForSubnets('ns1', 'p1', 'u1', new Set(['A']));
  requeue.refusedForApp('dp_ns1_web_', 'ns1', 'p2', 'u2');
  requeue.bound('ns1', 'p1');
  await requeue.settled('ns1', 'p2');
  await requeue.addressFreed(['A']);
  await requeue.appChanged('dp_ns1_web_x');
  expect(touched).toEqual([]);
  expect(requeue.waiting).toBe(0);
});

test('pods put aside while floatip was away: sent back once it listens and serves, and again at the first call', async () => {
  const { requeue, touched, setServing } = setup([{ namespace: 'ns1', name: 'p1', uid: 'u1' }]);
  setServing(false);
  requeue.startedListening();
  requeue.called();
  expect(touched).toEqual([]);
  setServing(true);
  requeue.maybeStartedServing();
  await new Promise((r) => setImmediate(r));
  requeue.called();
  requeue.called();
  await new Promise((r) => setImmediate(r));
  expect(touched).toEqual(['ns1/p1@u1', 'ns1/p1@u1']);
});

test('after a takeover, pods put aside are swept once more when the old leader’s last binds have ended', async () => {
  const putAside: PodRef[] = [];
  const touched: string[] = [];
  const requeue = new Requeue(
    (namespace, name) => {
      touched.push(`${namespace}/${name}`);
      return Promise.resolve();
    },
    silentLogger(),
    { putAside: () => putAside, serving: () => true, lateSweepMs: 50 },
  );
  requeue.startedListening();
  await new Promise((r) => setImmediate(r));
  expect(touched).toEqual([]);
  // a bind still under way on the old leader fails after the first sweep: its pod is put aside then
  putAside.push({ namespace: 'ns1', name: 'late', uid: 'u1' });
  await new Promise((r) => setTimeout(r, 120));
  expect(touched).toEqual(['ns1/late']);
  requeue.stop();
});

test('a touch that fails (the pod is gone) is logged, not thrown, and not counted', async () => {
  const counted: string[] = [];
  const requeue = new Requeue(() => Promise.reject(new Error('gone')), silentLogger(), {
    putAside: () => [],
    serving: () => true,
    counted: (why, n) => counted.push(`${why} ${n}`),
  });
  expect(await requeue.kick([{ namespace: 'ns1', name: 'p1', uid: 'u1' }])).toBe(0);
  expect(counted).toEqual([]);
});
