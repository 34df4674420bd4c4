// The churn's sorting of the pods left unbound at its end (test/e2e/churn-unbound.ts): only a pod
// refused for its Deployment's limit while pods of a deleted ReplicaSet of that name linger is
// said apart from the stuck ones.
import type { V1Deployment, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { sortUnbound } from '../../e2e/churn-unbound.js';

const LIMIT = 'deployment d-immutable-1 has allocated 3 ips with replicas of 3, wait for releasing';
const pod = (name: string, set: { name: string; uid: string }, extra: Partial<V1Pod> = {}): V1Pod => ({
  metadata: {
    name,
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', controller: true, ...set }],
    ...extra.metadata,
  },
  spec: { containers: [], ...extra.spec },
  status: extra.status,
});
const refused = (name: string, set: { name: string; uid: string }, message = LIMIT) =>
  pod(name, set, { status: { conditions: [{ type: 'PodScheduled', status: 'False', message }] } });
const OLD = { name: 'd-immutable-1-84465785c', uid: 'old' };
const NEW = { name: 'd-immutable-1-fc7d7bb7c', uid: 'new' };
const sets = (...live: { name: string; uid: string }[]): V1ReplicaSet[] =>
  live.map((s) => ({ metadata: { name: s.name, uid: s.uid } }));
const bound = (name: string, set: { name: string; uid: string }) =>
  pod(name, set, { spec: { containers: [], nodeName: 'n1' } });

test('refused for its limit while a deleted ReplicaSet’s pods of that Deployment linger: said apart', () => {
  const sorted = sortUnbound(
    [bound('old-a', OLD), bound('new-a', NEW), refused('new-b', NEW)],
    sets(NEW),
    [],
  );
  expect(sorted.unbound).toEqual([]);
  expect(sorted.behindUncollected).toEqual([
    `new-b (PodScheduled False: ${LIMIT}), behind old-a, of a deleted ReplicaSet or Deployment that kube-controller-manager has not collected`,
  ]);
});

test('the same refusal with every ReplicaSet alive, or another reason, or only terminating leftovers: stuck', () => {
  expect(sortUnbound([bound('old-a', OLD), refused('new-b', NEW)], sets(OLD, NEW), []).unbound).toHaveLength(
    1,
  );
  expect(
    sortUnbound([bound('old-a', OLD), refused('new-b', NEW, 'no node has room')], sets(NEW), []).unbound,
  ).toHaveLength(1);
  const terminating = pod('old-a', OLD, {
    metadata: { name: 'old-a', deletionTimestamp: new Date() },
    spec: { containers: [], nodeName: 'n1' },
  });
  expect(sortUnbound([terminating, refused('new-b', NEW)], sets(NEW), []).unbound).toHaveLength(1);
  // another Deployment's leftovers (d-immutable-10) do not count for d-immutable-1
  const other = bound('x', { name: 'd-immutable-10-5d9f', uid: 'gone' });
  expect(sortUnbound([other, refused('new-b', NEW)], sets(NEW), []).unbound).toHaveLength(1);
});

test('a ReplicaSet that still exists but whose Deployment was deleted (and re-created) holds uncollected pods too', () => {
  const owned = (set: { name: string; uid: string }, deployment: string): V1ReplicaSet => ({
    metadata: {
      name: set.name,
      uid: set.uid,
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name: 'd-immutable-1',
          uid: deployment,
          controller: true,
        },
      ],
    },
  });
  const live: V1Deployment[] = [{ metadata: { name: 'd-immutable-1', uid: 'd2' } }];
  const pods = [bound('old-a', OLD), refused('new-b', NEW)];
  // the old ReplicaSet belongs to the deleted incarnation d1: its pod waits for the collector
  expect(sortUnbound(pods, [owned(OLD, 'd1'), owned(NEW, 'd2')], live).behindUncollected).toHaveLength(1);
  // both belong to the Deployment that exists: a rollout, and a pod left unbound there is stuck
  expect(sortUnbound(pods, [owned(OLD, 'd2'), owned(NEW, 'd2')], live).unbound).toHaveLength(1);
});

test('a stuck pod’s app is described as the soak must keep it: Deployment, ReplicaSets, pods and FloatingIPs', () => {
  const deployment: V1Deployment = {
    metadata: { name: 'd-immutable-1', uid: 'd2', generation: 4 },
    spec: { replicas: 3, selector: {}, template: {} },
    status: { replicas: 4, updatedReplicas: 3, observedGeneration: 3 },
  };
  const set: V1ReplicaSet = {
    metadata: {
      name: OLD.name,
      uid: OLD.uid,
      generation: 2,
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd-immutable-1', uid: 'd2', controller: true },
      ],
    },
    spec: { replicas: 1, selector: {} },
    status: { replicas: 1, observedGeneration: 2 },
  };
  const sorted = sortUnbound(
    [bound('old-a', OLD), refused('new-b', NEW), bound('x', { name: 'd-immutable-10-5d9f', uid: 'u10' })],
    [set, { ...set, metadata: { ...set.metadata, name: NEW.name, uid: NEW.uid } }],
    [deployment],
    [
      { name: '10.0.0.5', key: 'dp_e2e-soak_d-immutable-1_old-a' },
      { name: '10.0.0.6', key: 'dp_e2e-soak_d-immutable-1_' },
      { name: '10.0.0.7', key: 'dp_e2e-soak_d-immutable-10_x' },
    ],
  );
  expect(sorted.unbound).toHaveLength(1);
  expect(sorted.chains).toEqual([
    [
      'app d-immutable-1:',
      '  Deployment d2: replicas 3, status 4 (updated 3), generation 4 observed 3',
      `  ReplicaSet ${OLD.name} old of Deployment d-immutable-1 d2: replicas 1, status 1, generation 2 observed 2`,
      `  ReplicaSet ${NEW.name} new of Deployment d-immutable-1 d2: replicas 1, status 1, generation 2 observed 2`,
      `  pod old-a of ReplicaSet ${OLD.name} old: node n1, no phase`,
      `  pod new-b of ReplicaSet ${NEW.name} new: node none, no phase`,
      '  FloatingIP 10.0.0.5: dp_e2e-soak_d-immutable-1_old-a',
      '  FloatingIP 10.0.0.6: dp_e2e-soak_d-immutable-1_',
    ].join('\n'),
  ]);
  // a pod stuck for another reason names no app, so nothing to describe
  expect(sortUnbound([refused('new-b', NEW, 'no node has room')], [], []).chains).toEqual([]);
});
