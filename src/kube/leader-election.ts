// Leader election on a coordination.k8s.io/v1 Lease, with client-go's leaderelection semantics: the lock
// keeps galaxy-ipam's name and place (`kube-system/galaxy-ipam` by default), and operators read the
// Lease as they would any client-go controller's.
//
// Why it is safe: every write carries the resourceVersion it was decided on, so of two candidates
// racing for an expired Lease exactly one write succeeds (the other gets 409). A leader stops
// believing it leads once its last successful renew is older than the renew deadline, which is
// shorter than the lease duration after which others may take over; the gap (5 s by default)
// must cover request latency and the clock skew between replicas, because a candidate judges
// expiry from the Lease's renewTime by its own clock. (client-go instead times from when it last saw
// the record change: immune to skew, but a fresh candidate then waits a full duration even on a
// Lease that died long ago.)
//
// The parts: leadership.ts is what callers see (options and defaults, callbacks, NotLeaderError);
// leader-elector.ts the state machine; lease.ts the Lease records and the calls that read and write
// them. This module is the one door the rest of floatip imports leader election through.
export { LeaderElector } from './leader-elector.js';
export {
  type Clock,
  defaultIdentity,
  type ElectionLogger,
  LEADER_ELECTION_DEFAULTS,
  type LeaderCallbacks,
  type LeaderElectorOptions,
  NotLeaderError,
} from './leadership.js';
