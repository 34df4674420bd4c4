// Leader election over real HTTP against the embedded API server: one leader among candidates,
// takeover after a crash (only once the Lease expired) and after a release (at once), leadership
// ending at the renew deadline or when someone else writes the Lease, and the Lease as client-go writes it.
import { hostname } from 'node:os';
import { CoordinationV1Api } from '@kubernetes/client-node';
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import {
  LEADER_ELECTION_DEFAULTS,
  LeaderElector,
  NotLeaderError,
  type ElectionLogger,
} from '../../src/kube/leader-election.js';
import { waitFor, withServer } from '../apiserver/helpers.js';

const LEASE_MS = 1000;
const DEADLINE_MS = 600;
const RETRY_MS = 100;
const NAMESPACE = 'kube-system';
const NAME = 'galaxy-ipam';
const LEASE_PATH = `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases/${NAME}`;
const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const LEASE_UPDATES = { verb: 'update', resource: 'leases', name: NAME } as const;

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}
interface Lease {
  metadata: { resourceVersion: string; annotations?: Record<string, string> };
  spec: LeaseSpec;
}

/** One candidate and what it went through, with wall-clock times. */
interface Candidate {
  elector: LeaderElector;
  started: number[];
  stopped: number[];
  leaders: string[];
  logs: { level: string; msg: string; obj: object }[];
}

let server: EmbeddedApiServer;
let candidates: Candidate[];

beforeEach(async () => {
  server = await withServer({ seed: 'none' });
  candidates = [];
});
afterEach(async () => {
  await Promise.all(candidates.map((c) => c.elector.stop({ release: false })));
  await server.close();
});

function candidate(identity: string, address?: string): Candidate {
  const started: number[] = [];
  const stopped: number[] = [];
  const seen: string[] = [];
  const logs: Candidate['logs'] = [];
  const log: ElectionLogger = {
    debug: (obj, msg) => void logs.push({ level: 'debug', msg, obj }),
    info: (obj, msg) => void logs.push({ level: 'info', msg, obj }),
    warn: (obj, msg) => void logs.push({ level: 'warn', msg, obj }),
  };
  const elector = new LeaderElector(
    {
      kubeConfig: server.kubeConfig(),
      namespace: NAMESPACE,
      name: NAME,
      identity,
      leaseDurationMs: LEASE_MS,
      renewDeadlineMs: DEADLINE_MS,
      retryPeriodMs: RETRY_MS,
      log,
      ...(address ? { address } : {}),
    },
    {
      onStartedLeading: () => void started.push(Date.now()),
      onStoppedLeading: () => void stopped.push(Date.now()),
      onNewLeader: (id) => void seen.push(id),
    },
  );
  const c: Candidate = { elector, started, stopped, leaders: seen, logs };
  candidates.push(c);
  return c;
}

/** The Lease as served, on the wire (client-node would turn its times into Dates). */
async function readLease(): Promise<Lease> {
  const res = await fetch(server.url + LEASE_PATH);
  expect(res.status).toBe(200);
  return (await res.json()) as Lease;
}

const ms = (time: string | undefined): number => Date.parse(time ?? '');
const sleep = (delayMs: number): Promise<void> => new Promise((r) => setTimeout(r, delayMs));
const leaders = (): LeaderElector[] => candidates.filter((c) => c.elector.isLeader()).map((c) => c.elector);

test('of two candidates exactly one leads, and the other learns who', async () => {
  const a = candidate('replica-a');
  const b = candidate('replica-b');
  a.elector.start();
  b.elector.start();
  await waitFor('a leader', () => leaders().length > 0);
  const [leader, follower] = a.elector.isLeader() ? [a, b] : [b, a];
  await waitFor('the follower to see the leader', () => follower.leaders.length > 0);
  expect(follower.leaders).toEqual([leader.elector.identity]);
  expect(follower.elector.leader()).toBe(leader.elector.identity);
  expect(leader.leaders).toEqual([leader.elector.identity]);

  // Several renews later nothing has changed hands.
  for (let i = 0; i < 20; i++) {
    expect(leaders()).toEqual([leader.elector]);
    await sleep(RETRY_MS / 2);
  }
  expect(leader.started).toHaveLength(1);
  expect(leader.stopped).toHaveLength(0);
  expect(follower.started).toHaveLength(0);
  expect((await readLease()).spec.holderIdentity).toBe(leader.elector.identity);
});

test('the leader publishes its address on the Lease; followers read it; a release takes it away', async () => {
  const a = candidate('replica-a', 'https://10.0.0.1:9040');
  const b = candidate('replica-b', 'https://10.0.0.2:9040');
  a.elector.start();
  await waitFor('a to lead', () => a.elector.isLeader());
  b.elector.start();
  expect(a.elector.leaderAddress()).toBe('https://10.0.0.1:9040');
  await waitFor('b to see the leader', () => b.elector.leader() === 'replica-a');
  expect(b.elector.leaderAddress()).toBe('https://10.0.0.1:9040');
  expect((await readLease()).metadata.annotations?.['floatip.io/leader-address']).toBe(
    'https://10.0.0.1:9040',
  );
  await a.elector.stop({ release: true });
  await waitFor('b to lead', () => b.elector.isLeader());
  expect(b.elector.leaderAddress()).toBe('https://10.0.0.2:9040');
  expect((await readLease()).metadata.annotations?.['floatip.io/leader-address']).toBe(
    'https://10.0.0.2:9040',
  );
  await b.elector.stop({ release: true });
  // released: nobody to reach
  expect((await readLease()).metadata.annotations?.['floatip.io/leader-address']).toBeUndefined();
});

test('candidates starting together never both lead', async () => {
  const all = ['r1', 'r2', 'r3', 'r4'].map((id) => candidate(id));
  for (const c of all) c.elector.start();
  await waitFor('a leader', () => leaders().length > 0);
  for (let i = 0; i < 30; i++) {
    expect(leaders()).toHaveLength(1);
    await sleep(10);
  }
  expect(all.flatMap((c) => c.started)).toHaveLength(1);
  const leader = leaders()[0]?.identity;
  await waitFor('everyone to see the leader', () => all.every((c) => c.elector.leader() === leader));
});

test('after a crash the other takes over once the Lease has expired, not before', async () => {
  const a = candidate('replica-a');
  a.elector.start();
  await waitFor('a to lead', () => a.elector.isLeader());
  const b = candidate('replica-b');
  b.elector.start();
  await waitFor('b to see a', () => b.leaders.includes('replica-a'));

  await a.elector.stop({ release: false });
  const crashed = Date.now();
  const last = await readLease();
  expect(last.spec.holderIdentity).toBe('replica-a');
  const expiry = ms(last.spec.renewTime) + (last.spec.leaseDurationSeconds ?? 0) * 1000;

  await waitFor('b to lead', () => b.elector.isLeader(), 3 * LEASE_MS);
  const tookOver = b.started[0] as number;
  expect(tookOver).toBeGreaterThanOrEqual(expiry);
  // Within about one lease duration: the expiry plus a poll or two.
  expect(tookOver - crashed).toBeLessThan(LEASE_MS + 4 * RETRY_MS);

  const lease = await readLease();
  expect(lease.spec.holderIdentity).toBe('replica-b');
  expect(ms(lease.spec.acquireTime)).toBeGreaterThanOrEqual(expiry);
  expect(lease.spec.leaseTransitions).toBe((last.spec.leaseTransitions ?? 0) + 1);
  expect(b.leaders).toEqual(['replica-a', 'replica-b']);
});

test('a leader that releases on stop is replaced at once', async () => {
  const a = candidate('replica-a');
  a.elector.start();
  await waitFor('a to lead', () => a.elector.isLeader());
  const b = candidate('replica-b');
  b.elector.start();
  await waitFor('b to see a', () => b.leaders.includes('replica-a'));
  const before = await readLease();

  const stopping = a.elector.stop(); // release is the default
  expect(a.elector.isLeader()).toBe(false); // at once, before the release is written
  expect(a.stopped).toHaveLength(1);
  await stopping;
  const released = Date.now();

  await waitFor('b to lead', () => b.elector.isLeader(), LEASE_MS);
  expect((b.started[0] as number) - released).toBeLessThan(LEASE_MS / 2);
  const lease = await readLease();
  expect(lease.spec.holderIdentity).toBe('replica-b');
  expect(lease.spec.leaseTransitions).toBe((before.spec.leaseTransitions ?? 0) + 1);
});

test('renew failures past the renew deadline end leadership, and the old leader writes no more', async () => {
  const a = candidate('replica-a');
  a.elector.start();
  await waitFor('a to lead', () => a.elector.isLeader());
  const epoch = a.elector.assertLeader();
  expect(epoch).toBe(1);
  expect(a.elector.leadership()).toBe(1);

  server.faults.failNext(LEASE_UPDATES, 500, { times: 1000 });
  const lastRenewed = ms((await readLease()).spec.renewTime);
  await waitFor('a to stop leading', () => a.stopped.length > 0, 2 * LEASE_MS);
  const attempts = server.faults.pending()[0]?.fired ?? 0;
  expect(attempts).toBeGreaterThanOrEqual(2); // it kept trying until the deadline

  expect(a.elector.isLeader()).toBe(false);
  expect(a.elector.leadership()).toBeUndefined();
  expect(() => a.elector.assertLeader()).toThrow(NotLeaderError);
  expect(() => a.elector.assertLeader(epoch)).toThrow(/not the leader of Lease kube-system\/galaxy-ipam/);
  // It gave up at the deadline, not before and not much after.
  const stoppedAt = a.stopped[0] as number;
  expect(stoppedAt - lastRenewed).toBeGreaterThanOrEqual(DEADLINE_MS);
  expect(stoppedAt - lastRenewed).toBeLessThan(DEADLINE_MS + 3 * RETRY_MS);
  const why = a.logs.find((l) => l.msg.startsWith('stopped leading'));
  expect(why?.msg).toMatch(/renew deadline/);
  expect(why?.obj).toMatchObject({ lease: 'kube-system/galaxy-ipam', identity: 'replica-a' });

  // Until its old Lease expires it only reads: not one more update is even attempted.
  const rv = (await readLease()).metadata.resourceVersion;
  await sleep(lastRenewed + LEASE_MS - Date.now() - 50);
  expect(server.faults.pending()[0]?.fired).toBe(attempts);
  expect((await readLease()).metadata.resourceVersion).toBe(rv);

  // Once the API server is back and the Lease has expired it may lead again, in a new term.
  server.faults.clear();
  await waitFor('a to lead again', () => a.elector.isLeader(), 2 * LEASE_MS);
  expect(a.elector.assertLeader()).toBe(2);
  expect(() => a.elector.assertLeader(epoch)).toThrow(/term 1 has ended/);
  const lease = await readLease();
  expect(ms(lease.spec.acquireTime)).toBeGreaterThanOrEqual(lastRenewed + LEASE_MS);
  expect(lease.spec.leaseTransitions).toBe(0); // the same holder: no transition
});

test('a renew that hangs past the deadline ends leadership without waiting for its answer', async () => {
  const a = candidate('replica-a');
  a.elector.start();
  await waitFor('a to lead', () => a.elector.isLeader());
  server.faults.delayNext(LEASE_UPDATES, 3 * LEASE_MS, { times: 1000 });
  const lastRenewed = ms((await readLease()).spec.renewTime);
  await waitFor('a to stop leading', () => a.stopped.length > 0, 2 * LEASE_MS);
  expect((a.stopped[0] as number) - lastRenewed).toBeLessThan(DEADLINE_MS + 3 * RETRY_MS);
  expect(a.elector.isLeader()).toBe(false);
  server.faults.clear();
});

test('a leader whose Lease is overwritten by another holder stops at its next renew', async () => {
  const a = candidate('replica-a');
  a.elector.start();
  await waitFor('a to lead', () => a.elector.isLeader());
  const epoch = a.elector.assertLeader();

  const api = server.kubeConfig().makeApiClient(CoordinationV1Api);
  const current = await api.readNamespacedLease({ name: NAME, namespace: NAMESPACE });
  const overwritten = Date.now();
  await api.replaceNamespacedLease({
    name: NAME,
    namespace: NAMESPACE,
    body: { ...current, spec: { ...current.spec, holderIdentity: 'intruder', renewTime: new Date() } },
  });

  await waitFor('a to stop leading', () => a.stopped.length > 0, LEASE_MS);
  expect((a.stopped[0] as number) - overwritten).toBeLessThan(3 * RETRY_MS); // well before the deadline
  expect(a.elector.isLeader()).toBe(false);
  expect(a.leaders).toEqual(['replica-a', 'intruder']);
  expect(a.elector.leader()).toBe('intruder');
  const refused = (() => {
    try {
      a.elector.assertLeader(epoch);
    } catch (err) {
      return err;
    }
  })();
  expect(refused).toBeInstanceOf(NotLeaderError);
  expect(refused).toMatchObject({
    lease: 'kube-system/galaxy-ipam',
    identity: 'replica-a',
    leader: 'intruder',
  });
  expect(a.logs.find((l) => l.msg.startsWith('stopped leading'))?.msg).toMatch(/held by intruder/);

  // The intruder never renews; a takes the Lease back once it expires, as a new holder.
  await waitFor('a to lead again', () => a.elector.isLeader(), 3 * LEASE_MS);
  const lease = await readLease();
  expect(lease.spec.holderIdentity).toBe('replica-a');
  expect(lease.spec.leaseTransitions).toBe(1);
});

test('the Lease carries what client-go writes, and leaseTransitions counts holder changes', async () => {
  const a = candidate('replica-a');
  a.elector.start();
  await waitFor('a to lead', () => a.elector.isLeader());
  const created = await readLease();
  expect(created.spec).toEqual({
    holderIdentity: 'replica-a',
    leaseDurationSeconds: 1,
    acquireTime: expect.stringMatching(MICRO_TIME),
    renewTime: expect.stringMatching(MICRO_TIME),
    leaseTransitions: 0,
  });

  await sleep(3 * RETRY_MS);
  const renewed = await readLease();
  expect(renewed.spec.acquireTime).toBe(created.spec.acquireTime);
  expect(ms(renewed.spec.renewTime)).toBeGreaterThan(ms(created.spec.renewTime));
  expect(renewed.spec.renewTime).toMatch(MICRO_TIME);

  // Released: nobody holds it, it expires in a second, and the count is unchanged until someone takes it.
  await a.elector.stop();
  const released = await readLease();
  expect(released.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 0 });
  expect(released.spec.renewTime).toMatch(MICRO_TIME);

  const b = candidate('replica-b');
  b.elector.start();
  await waitFor('b to lead', () => b.elector.isLeader());
  expect((await readLease()).spec).toMatchObject({ holderIdentity: 'replica-b', leaseTransitions: 1 });

  // b crashes; a new a takes over after expiry: another change of holder.
  await b.elector.stop({ release: false });
  const c = candidate('replica-c');
  c.elector.start();
  await waitFor('c to lead', () => c.elector.isLeader(), 3 * LEASE_MS);
  expect((await readLease()).spec).toMatchObject({ holderIdentity: 'replica-c', leaseTransitions: 2 });
});

test('defaults are galaxy-ipam’s, and impossible timings are refused', () => {
  const kubeConfig = server.kubeConfig();
  const elector = new LeaderElector({ kubeConfig });
  expect(elector).toMatchObject({
    namespace: 'kube-system',
    name: 'galaxy-ipam',
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
  });
  expect(LEADER_ELECTION_DEFAULTS).toMatchObject({ namespace: 'kube-system', name: 'galaxy-ipam' });
  expect(elector.identity).toMatch(new RegExp(`^${hostname()}_[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$`));
  expect(new LeaderElector({ kubeConfig }).identity).not.toBe(elector.identity);
  expect(elector.isLeader()).toBe(false);
  expect(() => elector.assertLeader()).toThrow(/no leader is known/);

  expect(() => new LeaderElector({ kubeConfig, leaseDurationMs: 10_000 })).toThrow(
    /lease duration 10000 ms must exceed the renew deadline/,
  );
  expect(() => new LeaderElector({ kubeConfig, renewDeadlineMs: 2_000 })).toThrow(/1.2 × the retry period/);
});

test('a failing callback is logged and election goes on', async () => {
  const logs: string[] = [];
  const log: ElectionLogger = { info: () => undefined, warn: (_obj, msg) => void logs.push(msg) };
  const elector = new LeaderElector(
    {
      kubeConfig: server.kubeConfig(),
      identity: 'replica-a',
      leaseDurationMs: LEASE_MS,
      renewDeadlineMs: DEADLINE_MS,
      retryPeriodMs: RETRY_MS,
      log,
    },
    {
      onStartedLeading: () => {
        throw new Error('boom');
      },
      onNewLeader: () => Promise.reject(new Error('bang')),
    },
  );
  candidates.push({ elector, started: [], stopped: [], leaders: [], logs: [] });
  elector.start();
  await waitFor('a to lead', () => elector.isLeader());
  await waitFor('the failures to be logged', () => logs.length === 2);
  expect(logs).toEqual(['leader election callback failed', 'leader election callback failed']);
  await sleep(3 * RETRY_MS);
  expect(elector.isLeader()).toBe(true);
});
