// Every metric floatip exposes, defined once, on one prom-client registry (served at /metrics on
// the API port, galaxy's place). galaxy's names are kept so existing dashboards work; floatip's own
// start with floatip_. What an alert on each means is in the README's metrics section.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { type Allocator, POOL_KEY_PREFIX, ofMainFamily } from '../ipam/index.js';

/** The release queue's state, as its gauges read it. */
export interface QueueState {
  readonly depth: number;
  readonly oldestAgeMs: number;
}

/** What the gauges read at scrape time. */
export interface MetricSources {
  readonly allocator: Allocator;
  readonly isLeader?: () => boolean;
  /** Whether this replica is ready (its /readyz answers 200): caches synced, a configuration in force. */
  readonly ready?: () => boolean;
  /** Whether the ConfigMap's latest version was refused (the last valid one stays in force). */
  readonly configRefused?: () => boolean;
  /** The Pool objects floatip reads (name and size). */
  readonly pools?: () => readonly { readonly name: string; readonly size: number }[];
}

export class Metrics {
  readonly registry = new Registry();
  /** The release queue the queue gauges report (made after the metrics: it is the lifecycle's). */
  private queue: QueueState | undefined;

  // galaxy's (docs/galaxy.md#metrics)
  readonly scheduleLatency = new Histogram({
    name: 'galaxy_schedule_latency',
    help: 'Galaxy schedule latency in seconds',
    labelNames: ['func'] as const,
    buckets: [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4],
    registers: [this.registry],
  });

  // floatip's
  readonly extenderLatency = new Histogram({
    name: 'floatip_extender_request_duration_seconds',
    help: 'Time to answer a kube-scheduler extender call, by verb and outcome',
    labelNames: ['verb', 'outcome'] as const,
    // up to 10 s: a bind may take its whole 4 s budget (DEFAULT_BIND_BUDGET_MS), and a quantile that
    // falls past the last finite bucket reads as that bucket's bound, so 2.5 s hid every slow bind
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly allocationFailures = new Counter({
    name: 'floatip_allocation_failures_total',
    help: 'Filter and bind calls that could not give a pod its addresses, by reason',
    labelNames: ['verb', 'reason'] as const,
    registers: [this.registry],
  });
  readonly writeConflicts = new Counter({
    name: 'floatip_write_conflicts_total',
    help: 'FloatingIP writes refused because the object had changed (409); each is re-read and decided again',
    registers: [this.registry],
  });
  readonly writeRetries = new Counter({
    name: 'floatip_write_retries_total',
    help: 'Writes and release jobs tried again after a conflict or failure',
    labelNames: ['what'] as const,
    registers: [this.registry],
  });
  readonly releases = new Counter({
    name: 'floatip_releases_total',
    help: 'Addresses released, parked or kept after their pod, by action and cause',
    labelNames: ['action', 'cause'] as const,
    registers: [this.registry],
  });
  readonly leaks = new Counter({
    name: 'floatip_leaks_total',
    help: 'Addresses found by resync whose pod is gone, finished or re-created, and settled per their policy',
    registers: [this.registry],
  });
  readonly requeued = new Counter({
    name: 'floatip_requeued_pods_total',
    help: 'Pods sent back to kube-scheduler once what held them back cleared, by what it was',
    labelNames: ['why'] as const,
    registers: [this.registry],
  });

  readonly resyncs = new Counter({
    name: 'floatip_resyncs_total',
    help: 'Resync passes, by outcome: failure when some allocation could not be checked (its leak is missed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  constructor(sources: MetricSources) {
    collectDefaultMetrics({ register: this.registry });
    // both outcomes exist from the start, so "failures and no success" can be asked of a fresh replica
    for (const outcome of ['success', 'failure']) this.resyncs.inc({ outcome }, 0);
    const { allocator } = sources;
    new Gauge({
      name: 'galaxy_ip_counter',
      help: 'Galaxy floating ip counter',
      labelNames: ['type', 'subnet', 'first_ip'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const s of allocator.stats()) {
          const labels = { subnet: s.subnet, first_ip: s.firstIP };
          this.set({ type: 'total', ...labels }, Number(s.total));
          this.set({ type: 'allocated', ...labels }, s.allocated);
        }
      },
    });
    new Gauge({
      name: 'floatip_addresses',
      help: 'Addresses per configured entry and state (IPv4 and IPv6): allocated (every held one, reserved included), free, reserved (a part of allocated), excluded (never handed out: network, broadcast, gateway); orphaned ones are outside every entry',
      labelNames: ['entry', 'family', 'subnet', 'state'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const s of allocator.stats()) {
          const labels = { entry: String(s.entry), family: `ipv${s.family}`, subnet: s.subnet };
          this.set({ ...labels, state: 'allocated' }, s.allocated);
          this.set({ ...labels, state: 'free' }, Number(s.free));
          this.set({ ...labels, state: 'reserved' }, s.reserved);
          this.set({ ...labels, state: 'excluded' }, s.excluded);
        }
        this.set(
          { entry: 'none', family: 'any', subnet: 'none', state: 'orphaned' },
          allocator.orphanedCount,
        );
      },
    });
    const depth: Gauge = new Gauge({
      name: 'floatip_release_queue_depth',
      help: 'Pods whose addresses wait to be released, parked or kept',
      registers: [this.registry],
      collect: () => depth.set(this.queue?.depth ?? 0),
    });
    const oldest: Gauge = new Gauge({
      name: 'floatip_release_queue_oldest_seconds',
      help: 'Age of the oldest waiting release job',
      registers: [this.registry],
      collect: () => oldest.set((this.queue?.oldestAgeMs ?? 0) / 1000),
    });
    new Gauge({
      name: 'floatip_pool_size',
      help: 'The size of each Pool: the most addresses its pods may hold at once',
      labelNames: ['pool'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const pool of sources.pools?.() ?? []) this.set({ pool: pool.name }, pool.size);
      },
    });
    new Gauge({
      name: 'floatip_pool_addresses',
      help: 'Addresses each Pool holds, in pods as its size counts (a dual-stack pod once, not twice): in-use (pods holding some, counted against the size) and parked (waiting for the next pods)',
      labelNames: ['pool', 'state'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { name } of sources.pools?.() ?? []) {
          // as the size counts (appUsage): pods holding addresses, whatever their families; parked
          // ones in pods' worth (a pair parked in a dual-stack node subnet waits for one pod)
          const parkedKey = `${POOL_KEY_PREFIX}${name}_`;
          const all = allocator.byPool(name);
          const parked = all.filter((a) => a.key === parkedKey);
          const pods = new Set(all.filter((a) => a.key !== parkedKey).map((a) => a.key));
          this.set({ pool: name, state: 'in-use' }, pods.size);
          this.set({ pool: name, state: 'parked' }, ofMainFamily(parked, (a) => a.family).length);
        }
      },
    });
    new Gauge({
      name: 'floatip_config_refused',
      help: '1 while the floatingip-config ConfigMap as written is refused (invalid; the last valid configuration, if any, stays in force), 0 otherwise',
      registers: [this.registry],
      collect() {
        this.set(sources.configRefused?.() === true ? 1 : 0);
      },
    });
    new Gauge({
      name: 'floatip_ready',
      help: '1 while this replica is ready (answers the scheduler; /readyz 200), 0 while it is not',
      registers: [this.registry],
      collect() {
        this.set(sources.ready === undefined || sources.ready() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'floatip_leader',
      help: '1 on the replica that holds the lease (answers the scheduler and writes), 0 elsewhere',
      registers: [this.registry],
      collect() {
        this.set(sources.isLeader === undefined || sources.isLeader() ? 1 : 0);
      },
    });
  }

  /** Reports this release queue's depth and age. */
  watchQueue(queue: QueueState): void {
    this.queue = queue;
  }

  /**
   * Times an extender call: its histogram, galaxy's (on success only, and only for a pod that wants
   * an address, as galaxy) and failures.
   */
  observeExtender(
    verb: 'filter' | 'prioritize' | 'bind' | 'preempt',
    seconds: number,
    failure?: string,
    wantsAddress = true,
  ): void {
    this.extenderLatency.observe({ verb, outcome: failure ? 'failure' : 'success' }, seconds);
    if (failure) this.allocationFailures.inc({ verb, reason: reasonOf(failure) });
    else if ((verb === 'filter' || verb === 'bind') && wantsAddress)
      this.scheduleLatency.observe({ func: verb }, seconds);
  }

  /** A call answered without an error that left the pod no node, some for want of a free address. */
  refusedForWantOfAddress(verb: 'filter'): void {
    this.allocationFailures.inc({ verb, reason: 'no-free-ip' });
  }
}

/** The failure of a bind that a follower could not get a leader to decide (reason `no-leader`). */
export const NO_LEADER_DECIDED = 'no leader decided the bind';

/** A bounded label from an error text: its stable start, without addresses, keys or names. */
export function reasonOf(message: string): string {
  if (message.startsWith('no enough available ips left')) return 'no-free-ip';
  if (message.startsWith('waiting for delete event')) return 'waiting-for-delete';
  if (message.startsWith('reached pool')) return 'pool-size';
  if (message.includes('wait for releasing')) return 'app-limit';
  if (message.startsWith('release policy')) return 'policy-not-supported';
  if (message.startsWith('failed to find pod')) return 'pod-not-found';
  if (message.startsWith('update pod')) return 'binding-failed';
  if (message.startsWith('unsupported app type')) return 'unsupported-app-type';
  if (message === NO_LEADER_DECIDED) return 'no-leader';
  if (message.startsWith('unmarshal pod cni args') || message.startsWith('bad IPRange'))
    return 'bad-annotation';
  return 'other';
}
