// The churn's reading of kube-scheduler's log (test/e2e/scheduler-log.ts), on lines as both versions
// write them: the v1.37.2 lines are from a CI run's log, the v1.20.2 ones as its cache.go writes them.
import { schedulerExitsIn } from '../../e2e/scheduler-log.js';

const RELIST =
  'I1201 15:43:17.766779    5518 reflector.go:507] "Caches populated" type="*v1.Pod" reflector="k8s.io/client-go@v0.37.2/tools/cache/reflector.go:343"';
const NODE_RELIST =
  'I1201 15:43:15.834468    5518 reflector.go:507] "Caches populated" type="*v1.Node" reflector="k8s.io/client-go@v0.37.2/tools/cache/reflector.go:343"';
const exitAt = (time: string, pod = 'e2e-churn/s-immutable-0') =>
  `E1201 ${time}    5518 cache.go:662] "Pod updated on a different node than previously added to. Scheduler cache is corrupted and can badly affect scheduling decisions" logger="UnhandledError" podKey="75c21cfc-0364-4ca1-bac9-334b0aa607b8" pod="${pod}"`;
const V120_EXIT = [
  'E1201 10:01:02.000100   77 cache.go:528] Pod 0c1d updated on a different node than previously added to.',
  'F1201 10:01:02.000200   77 cache.go:529] Schedulercache is corrupted and can badly affect scheduling decisions',
].join('\n');

test('an exit right after the pod relist is counted as the relist’s, with the pod it names', () => {
  expect(schedulerExitsIn([NODE_RELIST, RELIST, exitAt('15:43:17.769226')].join('\n'))).toEqual({
    total: 1,
    onRelist: 1,
    lastPod: 'e2e-churn/s-immutable-0',
  });
});

test('an exit long after the relist, after another kind’s relist, or in a restarted scheduler is not', () => {
  expect(schedulerExitsIn([RELIST, exitAt('15:43:19.000000')].join('\n'))).toMatchObject({
    total: 1,
    onRelist: 0,
  });
  expect(schedulerExitsIn([NODE_RELIST, exitAt('15:43:15.900000')].join('\n'))).toMatchObject({
    total: 1,
    onRelist: 0,
  });
  const restarted = [
    RELIST,
    '=== kube-scheduler started again 2026-12-01T15:43:17Z by component.sh',
    exitAt('15:43:17.900000'),
  ];
  expect(schedulerExitsIn(restarted.join('\n'))).toMatchObject({ total: 1, onRelist: 0 });
});

test('v1.20.2’s spelling is counted too; a log without exits counts none', () => {
  expect(schedulerExitsIn(V120_EXIT)).toEqual({ total: 1, onRelist: 0 });
  expect(schedulerExitsIn([RELIST, NODE_RELIST].join('\n'))).toEqual({ total: 0, onRelist: 0 });
});
