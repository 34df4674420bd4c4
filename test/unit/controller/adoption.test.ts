// Adoption, through the adoption piece alone: a bound pod's annotated addresses are taken for its
// key when free and configured (by the sweep; on its own changes once it runs); one held by another
// key is a conflict, warned about, left alone.
import type { V1Pod } from '@kubernetes/client-node';
import { Adoption, leaderPendingHolds, liveHolder, ownHolder } from '../../../src/controller/adoption.js';
import { type Allocation, ReleasePolicy } from '../../../src/ipam/index.js';
import { lifecycleDeps, pod } from './fakes.js';

/** Adoption as the lifecycle runs it: every pod it is handed is one the pod cache has. */
function cachedAdoption() {
  const faked = lifecycleDeps();
  const adoption = new Adoption(faked.deps);
  const cached = (p: V1Pod) => {
    faked.pods.add(p);
    return p;
  };
  return {
    ...faked,
    adoption,
    adopt: (p: V1Pod) => adoption.adopt(cached(p)),
    sweep: (ps: V1Pod[]) => adoption.sweep(ps.map(cached)),
    soon: (p: V1Pod) => adoption.soon(cached(p)),
  };
}

const web0 = (ips: string[], phase = 'Running') =>
  pod({
    name: 'web-0',
    uid: 'u1',
    owner: { kind: 'StatefulSet', name: 'web' },
    policy: 'immutable',
    nodeName: 'a1',
    phase,
    ips,
  });

test('free configured addresses in a running pod’s annotation are taken for its key', async () => {
  const { adopt, store } = cachedAdoption();
  await adopt(web0(['10.0.100.12', 'fd00:100::12']));
  const attrs = { policy: ReleasePolicy.Immutable, nodeName: 'a1', podUid: 'u1' };
  expect(store.writes).toEqual([
    { op: 'allocateIP', ip: '10.0.100.12', key: 'sts_ns1_web_web-0', attrs },
    { op: 'allocateIP', ip: 'fd00:100::12', key: 'sts_ns1_web_web-0', attrs },
  ]);
});

test('an address another key holds is a conflict: warned about and left; one not configured is held as an orphan', async () => {
  const { adopt, store, lines } = cachedAdoption();
  store.hold('10.0.100.12', 'NULL_ns1_NULL_other', { podUid: 'u9' });
  await adopt(web0(['10.0.100.12', '10.9.9.9', '10.0.100.13']));
  expect(store.writes).toEqual([
    expect.objectContaining({ op: 'allocateIP', ip: '10.9.9.9', key: 'sts_ns1_web_web-0' }),
    expect.objectContaining({ op: 'allocateIP', ip: '10.0.100.13', key: 'sts_ns1_web_web-0' }),
  ]);
  expect(store.allocator.get('10.0.100.12')?.key).toBe('NULL_ns1_NULL_other');
  // galaxy left an address outside the configuration free in memory: it went to another pod once
  // its range came back, while this pod ran with it
  expect(store.allocator.get('10.9.9.9')?.key).toBe('sts_ns1_web_web-0');
  expect(store.allocator.orphanedCount).toBe(1);
  expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual([
    'conflict ip 10.0.100.12 found for both sts_ns1_web_web-0 and NULL_ns1_NULL_other',
    'failed to find floating ip by 10.9.9.9 in cache: adopted for the bound pod all the same, kept as an orphan outside the configuration',
  ]);
});

test('what the pod’s key holds already, and a pod without the annotation, change nothing', async () => {
  const { adopt, store } = cachedAdoption();
  store.hold('10.0.100.12', 'sts_ns1_web_web-0', { podUid: 'u1' });
  await adopt(web0(['10.0.100.12']));
  await adopt(pod({ name: 'solo' }));
  expect(store.writes).toEqual([]);
});

test('the resync’s sweep adopts for bound pods that have not finished, running or not yet', async () => {
  const { sweep, store } = cachedAdoption();
  const unbound = pod({ name: 'solo', phase: 'Pending', ips: ['10.0.100.20'] });
  const bound = pod({ name: 'next', uid: 'u2', nodeName: 'a1', phase: 'Pending', ips: ['10.0.100.21'] });
  const done = pod({ name: 'job', uid: 'u3', nodeName: 'a1', phase: 'Succeeded', ips: ['10.0.100.22'] });
  const failed = pod({ name: 'crash', uid: 'u4', nodeName: 'a1', phase: 'Failed', ips: ['10.0.100.23'] });
  await sweep([web0(['10.0.100.12']), unbound, bound, done, failed]);
  expect(store.writes).toEqual([
    expect.objectContaining({ op: 'allocateIP', ip: '10.0.100.12', key: 'sts_ns1_web_web-0' }),
    expect.objectContaining({ op: 'allocateIP', ip: '10.0.100.21', key: 'NULL_ns1_NULL_next' }),
  ]);
});

test('a pod seen changing is adopted once it runs (galaxy), not while bound and pending', async () => {
  const { soon, store } = cachedAdoption();
  soon(web0(['10.0.100.12'], 'Pending'));
  soon(web0(['10.0.100.13']));
  await new Promise((resolve) => setImmediate(resolve));
  expect(store.writes.map((w) => w.ip)).toEqual(['10.0.100.13']);
});

test('an address kept on the pod’s key (no pod UID) is taken by the running pod that carries it', async () => {
  // kube-apiserver v1.20 ignores a Binding's UID: a bind for web-0's old incarnation can bind its
  // successor, which then runs with the address while the resync keeps it (UID cleared) for the
  // old one; without this the object names no pod for as long as web-0 runs
  const { adopt, store } = cachedAdoption();
  store.hold('10.0.100.12', 'sts_ns1_web_web-0', { policy: ReleasePolicy.Immutable });
  await adopt(web0(['10.0.100.12']));
  const attrs = { policy: ReleasePolicy.Immutable, nodeName: 'a1', podUid: 'u1' };
  expect(store.writes).toEqual([
    expect.objectContaining({
      op: 'update',
      ip: '10.0.100.12',
      owner: { key: 'sts_ns1_web_web-0', podUid: '' },
      attrs,
    }),
  ]);
  expect(store.allocator.get('10.0.100.12')).toMatchObject(attrs);
});

test('an address the pod’s key holds for another incarnation is left to the resync’s UID check', async () => {
  const { adopt, store } = cachedAdoption();
  store.hold('10.0.100.12', 'sts_ns1_web_web-0', { podUid: 'u0' });
  await adopt(web0(['10.0.100.12']));
  expect(store.writes).toEqual([]);
});

test('a pod gone from the cache since the sweep listed it, or there as another incarnation, is not adopted for', async () => {
  // its deletion's release may have run between the list and the adoption: taking the address
  // then would hold it for a pod that no longer exists
  const { adoption, pods, store } = cachedAdoption();
  const gone = pod({ name: 'gone', uid: 'u5', nodeName: 'a1', ips: ['10.0.100.24'] });
  const replaced = pod({ name: 'web-0', uid: 'u0', nodeName: 'a1', ips: ['10.0.100.25'] });
  pods.add(web0(['10.0.100.26']));
  await adoption.sweep([gone, replaced]);
  expect(store.writes).toEqual([]);
});

describe('who holds a deleted object’s address (ownHolder, liveHolder)', () => {
  const held = {
    ip: '10.0.100.10',
    family: 4,
    key: 'NULL_ns1_NULL_p1',
    policy: ReleasePolicy.PodDelete,
    nodeName: 'a1',
    podUid: 'u1',
    reserved: false,
  } as unknown as Allocation;
  const p1 = (nodeName?: string) =>
    pod({ name: 'p1', uid: 'u1', ...(nodeName ? { nodeName } : { phase: 'Pending' }) });
  const pods = (p: V1Pod) => ({ get: () => p, list: () => [p] });

  test('its own pod on a node holds it; pending, only where pendingHolds says why (the leader)', () => {
    expect(ownHolder(p1('a1'), held)).toEqual({ key: 'NULL_ns1_NULL_p1', attrs: expect.anything() });
    // a follower: the leader's undo of a failed bind, most likely; nobody runs with it
    expect(ownHolder(p1(), held)).toBeUndefined();
    expect(liveHolder(pods(p1()), held)).toBeUndefined();
    // the leader: its binding may still land (an answer lost), and the log says why
    const leader = leaderPendingHolds(
      () => true,
      () => false,
    );
    expect(ownHolder(p1(), held, leader)).toEqual({
      key: 'NULL_ns1_NULL_p1',
      attrs: expect.anything(),
      why: expect.stringMatching(
        /^it is not on a node yet, and a binding of it with this address may still land/,
      ),
    });
    expect(liveHolder(pods(p1()), held, leader)?.key).toBe('NULL_ns1_NULL_p1');
    // this replica's own bind, between its write and the binding
    const binding = leaderPendingHolds(
      () => true,
      (ns, name) => `${ns}/${name}` === 'ns1/p1',
    );
    expect(ownHolder(p1(), held, binding)?.why).toBe('this replica is binding it now');
    // another incarnation, or a finished pod, holds nothing whatever the leader says
    const other = pod({ name: 'p1', uid: 'u2', phase: 'Pending' });
    expect(ownHolder(other, held, leader)).toBeUndefined();
    const done = pod({ name: 'p1', uid: 'u1', phase: 'Failed' });
    expect(ownHolder(done, held, leader)).toBeUndefined();
    // a replica that does not lead (any more) keeps nothing for a pending pod
    const deposed = leaderPendingHolds(
      () => false,
      () => true,
    );
    expect(ownHolder(p1(), held, deposed)).toBeUndefined();
  });
});
