// What floatip is started with (FloatipOptions) and what a started floatip offers its owner (the
// CLI, the tests and the benchmarks): the composition root's interface, apart from its wiring
// (server.ts).
import type { KubeConfig } from '@kubernetes/client-node';
import type { GalaxyConfig } from './config/galaxy-config.js';
import type { Lifecycle } from './controller/lifecycle.js';
import type { Requeue } from './controller/requeue.js';
import type { NodeFacts } from './extender/node-subnets.js';
import type { Allocator } from './ipam/index.js';
import type { ClusterCache } from './kube/cluster.js';
import type { KubeEventRecorder } from './kube/events.js';
import type { LeaderElector, LeaderElectorOptions } from './kube/leader-election.js';
import type { PodLookup } from './kube/pod-lookup.js';
import type { Logger } from './log.js';
import type { Metrics } from './metrics/metrics.js';
import type { DecisionLocks } from './store/decision-locks.js';
import type { FloatingIPStore } from './store/floating-ip-store.js';
import type { PoolStore } from './store/pool-store.js';
import type { WebhookOptions } from './webhook-port.js';

export interface FloatipOptions {
  readonly kubeConfig: KubeConfig;
  readonly galaxy: GalaxyConfig;
  /** The extended resource that marks pods wanting a floating IP. */
  readonly resource: string;
  /** Where Pool objects are read (galaxy: kube-system). */
  readonly poolNamespace: string;
  readonly bind: string;
  /** The extender's port; 0 picks a free one. */
  readonly port: number;
  /** The REST API's port (galaxy: 9041); 0 or absent picks a free one. */
  readonly apiPort?: number;
  /** `kubernetes`: REST callers authenticated by TokenReview, authorised by SubjectAccessReview; `none` (default): galaxy's open API. */
  readonly apiAuth?: 'none' | 'kubernetes';
  /** Serve both ports over TLS with this certificate and key (PEM). */
  readonly tls?: { readonly cert: string; readonly key: string };
  /** The validating admission webhook over HTTPS on its own port (0 picks a free one); off without it. */
  readonly webhook?: WebhookOptions;
  /**
   * The extender port asks every client for a certificate signed by this CA (PEM) and refuses the
   * others in the TLS handshake; followers present `tls` to the leader with it. Needs `tls`.
   */
  readonly extenderClientCa?: string;
  /** A plain-HTTP port with /healthz and /readyz only (kubelet's probes carry no client certificate). */
  readonly healthPort?: number;
  /** Published on the Lease: where followers reach this replica when it leads (default: its extender URL). */
  readonly advertiseAddress?: string;
  /**
   * How long a bind may take from its arrival to its binding's answer (default 4 s): below
   * kube-scheduler's extender httpTimeout, so that no binding lands after the scheduler gave up.
   */
  readonly bindTimeoutMs?: number;
  /** How long a follower waits for a leader to decide a forwarded bind or preempt (default: bindTimeoutMs). */
  readonly forwardDeadlineMs?: number;
  /** After SIGTERM, /readyz answers 503 this long while everything else still answers (default 0). */
  readonly shutdownDelayMs?: number;
  /** Check the REST API's answers against its OpenAPI document (tests). */
  readonly validateApiResponses?: boolean;
  readonly log: Logger;
  /** Resync period; default the galaxy config's resyncInterval; 0 turns the periodic resync off. */
  readonly resyncIntervalMs?: number;
  /** Parked `never` addresses of gone workloads are released after this long; 0 (default) never. */
  readonly parkedIpTtlMs?: number;
  /** What the lifecycle reads the time from (the parked-IP TTL); default Date.now (tests move it). */
  readonly clock?: () => number;
  /** Leader election on a Lease; without it this replica always leads. */
  readonly leaderElection?: Omit<LeaderElectorOptions, 'kubeConfig' | 'log'>;
  /** How long a caller may take to send a whole request on any port (default INBOUND_REQUEST_TIMEOUT_MS). */
  readonly requestTimeoutMs?: number;
  /** The most connections each port keeps open (default: ports.ts's processConnectionLimit). */
  readonly maxConnectionsPerPort?: number;
}

export interface Floatip {
  readonly extenderUrl: string;
  readonly apiUrl: string;
  /** The admission webhook's base URL (POST /validate), when it is on. */
  readonly webhookUrl: string | undefined;
  /** The plain health port's URL, when one was asked for. */
  readonly healthUrl: string | undefined;
  readonly allocator: Allocator;
  readonly store: FloatingIPStore;
  readonly cluster: ClusterCache;
  /** Pods: the cache, else the API server. */
  readonly pods: PodLookup;
  readonly pools: PoolStore;
  readonly locks: DecisionLocks;
  readonly lifecycle: Lifecycle;
  /** Pods waiting to be sent back to the scheduler. */
  readonly requeue: Requeue;
  /** What the extender knows about nodes. */
  readonly nodeFacts: NodeFacts;
  readonly events: KubeEventRecorder;
  readonly metrics: Metrics;
  /** Whether this replica leads (always, without leader election). */
  isLeader(): boolean;
  readonly elector: LeaderElector | undefined;
  /** Stops taking binds, finishes those in flight, releases the lease, stops everything. */
  close(): Promise<void>;
}
