// The composition root: builds every room from the options, starts them in order, and stops them
// in reverse. Start: CRDs -> configuration -> FloatingIP objects restored -> Pools and cluster
// caches -> the extender listens (extender-port.ts).
import { restApp } from './api/index.js';
import { startUsageSampling } from './api/dashboard.js';
import { kubernetesAuth } from './api/kube-auth.js';
import { withPlainMetrics } from './api/metrics-port.js';
import { RecentEvents } from './api/recent-events.js';
import { UsageHistory } from './api/usage-history.js';
import {
  type BindingNow,
  keyRunsWith,
  leaderPendingHolds,
  liveHolder,
  ownHolder,
} from './controller/adoption.js';
import { Lifecycle } from './controller/lifecycle.js';
import { PoolConfigSource } from './controller/pool-config.js';
import { Requeue, putAsidePods } from './controller/requeue.js';
import { Workloads } from './controller/workloads.js';
import { Binder } from './extender/bind.js';
import { DEFAULT_BIND_BUDGET_MS } from './extender/binding.js';
import { NodeFacts } from './extender/node-subnets.js';
import { healthHandler } from './extender/plain-answers.js';
import { NotedRefusals } from './extender/pod-placement.js';
import { SchedulingQueries } from './extender/queries.js';
import { AllocationKey, Allocator, POOL_KEY_PREFIX } from './ipam/index.js';
import { ClusterCache } from './kube/cluster.js';
import { ClusterWorld } from './kube/cluster-world.js';
import { ensureCrds } from './kube/crds.js';
import { CustomResourceClient } from './kube/custom-resources.js';
import { KubeEventRecorder } from './kube/events.js';
import { LeaderElector } from './kube/leader-election.js';
import { renewConnections, shareConnections } from './kube/shared-agent.js';
import { Metrics } from './metrics/metrics.js';
import { INBOUND_REQUEST_TIMEOUT_MS, close, listen, urlOf } from './ports.js';
import { FLOATING_IP_PLURAL, GROUP, VERSION } from './store/floating-ip-object.js';
import { DecisionLocks } from './store/decision-locks.js';
import { FloatingIPStore } from './store/floating-ip-store.js';
import { PoolStore } from './store/pool-store.js';
import { listenWebhook } from './webhook-port.js';
import { listenExtender } from './extender-port.js';
import type { Floatip, FloatipOptions } from './floatip-options.js';

export type { Floatip, FloatipOptions } from './floatip-options.js';
export type { WebhookOptions } from './webhook-port.js';

export async function startFloatip(options: FloatipOptions): Promise<Floatip> {
  const { kubeConfig, log } = options;
  // one pooled keep-alive connection set to the API server, not a TLS handshake per call
  shareConnections(kubeConfig);
  const created = await ensureCrds(kubeConfig);
  if (created.length > 0) log.info({ crds: created }, 'custom resource definitions created');
  if (options.galaxy.cloudProviderGrpcAddr) {
    log.warn(
      { cloudProviderGrpcAddr: options.galaxy.cloudProviderGrpcAddr },
      'cloud provider hooks are not supported; ignored',
    );
  }
  if (options.extenderClientCa !== undefined && !options.tls) {
    throw new Error('a client CA for the extender port needs its serving certificate and key');
  }
  // every replica keeps its caches warm and answers the scheduler; only the leader decides and writes
  let elector: LeaderElector | undefined;
  const isLeader = () => elector?.isLeader() ?? true;
  const guard = () => {
    elector?.assertLeader();
  };
  let shuttingDown = false;
  // a replica that has just taken the Lease decides only once its caches hold what the API server
  // holds since then: a watch can be silent for its timeout and grace (a blackholed path) before
  // anyone can tell, and one stale view gave a running pod's address to a second pod (the churn)
  let caughtUp = options.leaderElection === undefined;
  const notDecidingBecause = (): string | undefined => {
    if (!isLeader() || shuttingDown) {
      // the Lease holder's identity (a pod's name, by default) tells an operator which replica to ask
      const leader = elector?.leader();
      const known = leader !== undefined && leader !== elector?.identity ? ` (${leader})` : '';
      return `this replica does not lead; send changes to the leader${known}`;
    }
    if (!caughtUp)
      return 'this replica has just taken the Lease and decides once it has read the cluster again; retry';
    return undefined;
  };
  const serving = () => notDecidingBecause() === undefined;
  // who runs with a deleted object's address comes from the pod cache (liveHolder): a new leader's
  // may still show pods long gone (its watches silent), so it settles such deletions only once it
  // has read the pods again in its term (FollowObserver.deferSettling)
  let podsFresh = false;

  const written = new KubeEventRecorder(kubeConfig, log);
  // every Event goes through the dashboard's list of the latest on its way to the API server
  const events = new RecentEvents(written);
  const allocator = new Allocator();
  const pools = new PoolStore(kubeConfig, options.poolNamespace, log, guard);
  const nodes = new NodeFacts(allocator);
  const config = new PoolConfigSource(options.galaxy, allocator, log, events);
  const metrics = new Metrics({
    allocator,
    isLeader,
    ready: () => (notServingBecause() ?? notReadyBecause()) === undefined,
    configRefused: () => config.refused,
    pools: () => pools.list(),
  });
  // the scheduler is answered by every replica once a configuration is in force
  const notServingBecause = (): string | undefined => config.notReadyBecause;
  const notReadyBecause = () => (shuttingDown ? 'this replica is shutting down' : undefined);
  config.onChange(() => nodes.clearSubnets());
  const cluster = new ClusterCache(kubeConfig, log);
  cluster.nodes.on('add', (node) => nodes.observe(node));
  cluster.nodes.on('update', (node) => nodes.observe(node));
  cluster.nodes.on('delete', (node) => nodes.forget(node.metadata?.name ?? ''));
  const world = new ClusterWorld(kubeConfig, cluster, guard);
  const requeue = new Requeue((...args) => world.annotatePod(...args), log, {
    putAside: () => putAsidePods(cluster.pods.list(), options.resource),
    serving: () => serving() && notServingBecause() === undefined,
    counted: (why, pods) => metrics.requeued.inc({ why }, pods),
    // once the previous leader's last binds have ended (their budget), and a second more
    lateSweepMs: (options.bindTimeoutMs ?? DEFAULT_BIND_BUDGET_MS) + 1000,
  });
  // a configuration that arrives late (or changes) may let pods put aside meanwhile go on
  config.onChange(() => requeue.maybeStartedServing());
  // an operator's new ranges or a Pool's new size end the waits that the scheduler would keep
  config.onChange(() => void requeue.configChanged());
  pools.onChange((name) => void requeue.appChanged(`${POOL_KEY_PREFIX}${name}_`));
  // the binder is built after the store: whether it is binding a pod is asked of it then
  let binder: Binder | undefined;
  const bindingNow: BindingNow = (namespace, name) => binder?.isBinding(namespace, name) ?? false;
  // a pending pod's binding may land after its answer was lost: the leader keeps what a deleted
  // object recorded for it, a follower frees it (README "Release policies in motion")
  const pendingHolds = leaderPendingHolds(isLeader, bindingNow);
  const store = new FloatingIPStore(
    new CustomResourceClient(kubeConfig, { group: GROUP, version: VERSION, plural: FLOATING_IP_PLURAL }),
    kubeConfig,
    allocator,
    log,
    {
      writeConflict: () => metrics.writeConflicts.inc(),
      freed: (ip) => void requeue.addressFreed(allocator.nodeSubnetsServing(ip)),
      // the leader's question alone: it writes the object again, and a follower, whose pod cache
      // may lag behind the leader's release, follows the objects
      stillHeld: (a) => (isLeader() ? liveHolder(cluster.pods, a, pendingHolds) : undefined),
      deferSettling: () => isLeader() && !podsFresh,
      // a cache that does not show the pod may only lag: the API server says
      verifyHeld: async (a) => {
        const key = AllocationKey.parse(a.key);
        return key.podName
          ? ownHolder(await world.pods.fetch(key.namespace, key.podName), a, pendingHolds)
          : undefined;
      },
    },
    guard,
  );
  const locks = new DecisionLocks();
  const at = {
    host: options.bind,
    requestTimeoutMs: options.requestTimeoutMs ?? INBOUND_REQUEST_TIMEOUT_MS,
    maxConnections: options.maxConnectionsPerPort,
    log,
  };
  const stops: (() => Promise<void>)[] = [];
  let healthUrl: string | undefined;
  try {
    await config.start(kubeConfig);
    stops.push(() => config.stop());
    await store.start();
    stops.push(() => store.stop());
    // galaxy may have handed a pod a gateway or network address: kept, and an operator told
    config.reportExcludedInUse();
    const workloads = new Workloads(kubeConfig, cluster, pools, log);
    const lifecycle = new Lifecycle(
      {
        store,
        cluster,
        workloads,
        pods: world.pods,
        locks,
        events,
        log,
        observer: {
          released: (_a, action, cause) => metrics.releases.inc({ action: action.kind, cause }),
          leakFound: () => metrics.leaks.inc(),
          resynced: (outcome) => metrics.resyncs.inc({ outcome }),
          retried: () => metrics.writeRetries.inc({ what: 'release-job' }),
          settled: (namespace, name) => void requeue.settled(namespace, name),
          appChanged: (key) => void requeue.appChanged(key),
        },
      },
      {
        resource: options.resource,
        resyncIntervalMs: options.resyncIntervalMs ?? options.galaxy.resyncIntervalMinutes * 60_000,
        parkedIpTtlMs: options.parkedIpTtlMs ?? 0,
        clock: options.clock,
      },
    );
    metrics.watchQueue(lifecycle.queue);
    lifecycle.attach();
    await Promise.all([
      pools.start(),
      cluster.start(),
      workloads.start(),
      workloads.followFor(allocator.all()),
    ]);
    // a replica without leader election has read every pod now (one with it, in each term's catch-up)
    const podsRead = () => {
      podsFresh = true;
      store.settleDeferred();
    };
    if (!options.leaderElection) podsRead();
    stops.push(
      () => pools.stop(),
      () => cluster.stop(),
      () => workloads.stop(),
    );
    // once the FloatingIP objects are restored and the configuration read, and before this replica
    // may lead: its own writes of FloatingIP objects go through a webhook (failurePolicy Fail)
    let webhookUrl: string | undefined;
    if (options.webhook) {
      const deps = {
        settings: options.galaxy,
        allocator,
        poolNamespace: options.poolNamespace,
        keyRunsWith: (ip: string, key: string) => keyRunsWith(cluster.pods, ip, key),
      };
      const hook = await listenWebhook(options.webhook, deps, log, at);
      stops.push(() => hook.stop());
      webhookUrl = hook.url;
    }
    stops.push(() => lifecycle.stop());
    stops.push(async () => requeue.stop());
    // a filter refusing a pod for later is noted: a follower then asks the leader (http.ts)
    const refusals = new NotedRefusals(requeue);
    const verbs = {
      queries: new SchedulingQueries(allocator, nodes, world, workloads, log, options.resource, refusals),
      binder: new Binder(
        store,
        locks,
        world,
        nodes,
        workloads,
        events,
        log,
        {
          resource: options.resource,
          ...(options.bindTimeoutMs !== undefined ? { budgetMs: options.bindTimeoutMs } : {}),
        },
        requeue,
      ),
    };
    binder = verbs.binder;
    // a pod refused before the pod cache had it is remembered once the cache has it
    cluster.pods.on('add', (pod) => verbs.queries.podCached(pod));
    cluster.pods.on('update', (pod) => verbs.queries.podCached(pod));
    const extender = await listenExtender(
      options,
      {
        verbs,
        refusals,
        leader: {
          get identity() {
            return elector?.identity ?? '';
          },
          decides: serving,
          // while it catches up this replica leads, and the call waits here rather than on itself
          leaderAddress: () => (isLeader() ? undefined : elector?.leaderAddress()),
          noLeaderBecause: () => (isLeader() ? notDecidingBecause() : undefined),
          refresh: async () => elector?.refreshLeader(),
        },
        handOver: async () => elector?.stop({ release: true }),
        notServingBecause,
        notReadyBecause,
        onServe: () => requeue.called(),
        metrics,
        log,
      },
      at,
    );
    // SIGTERM: not ready (callers go elsewhere), decide nothing new (forwarded instead), then the
    // port's own stop: finish the binds being decided, hand the Lease on, relay what is in flight
    stops.push(async () => {
      shuttingDown = true;
      await extender.stop();
    });
    const extenderUrl = extender.url;
    if (options.healthPort !== undefined) {
      const healthServer = await listen(
        'the health port (--health-port)',
        healthHandler(() => notServingBecause() ?? notReadyBecause()),
        at,
        options.healthPort,
      );
      stops.push(() => close(healthServer));
      healthUrl = urlOf(options.bind, healthServer);
      // with --health-port 0 this line is the only place that says which port it is
      log.info({ url: healthUrl }, 'health probes listening');
    }
    // lists again everything decisions read, then takes every bound pod's addresses for it
    // (adoption), so that no bind hands out an address whose object this replica never saw
    const catchUp = async (stillLeading: () => boolean) => {
      await Promise.all([
        config.catchUp(),
        store.catchUp(),
        pools.catchUp(),
        cluster.catchUp().then(() => {
          if (stillLeading()) podsRead();
        }),
        workloads.catchUp(),
      ]);
      await lifecycle.adoptPlaced();
    };
    if (options.leaderElection) {
      const leading = new LeaderElector(
        {
          kubeConfig,
          address: options.advertiseAddress ?? extenderUrl,
          ...options.leaderElection,
          log,
        },
        {
          onStartedLeading: () => {
            const term = leading.leadership();
            const started = Date.now();
            podsFresh = false;
            renewConnections(kubeConfig);
            catchUp(() => term !== undefined && leading.leadership() === term).then(
              () => {
                if (term === undefined || leading.leadership() !== term) return;
                caughtUp = true;
                log.info(
                  { ms: Date.now() - started },
                  'caught up with the API server; deciding as the leader',
                );
                lifecycle.start();
                requeue.maybeStartedServing();
              },
              (err: unknown) =>
                log.warn({ err: (err as Error).message }, 'stopped before catching up with the API server'),
            );
          },
          onStoppedLeading: () => {
            caughtUp = false;
            podsFresh = false;
            void lifecycle.pause();
          },
        },
      );
      elector = leading;
      // stopped (the Lease handed on) by the extender's own stop above, once its binds are done
      leading.start();
    } else {
      lifecycle.start();
    }
    requeue.startedListening();
    const usage = new UsageHistory();
    const clock = options.clock ?? Date.now;
    const stopSampling = startUsageSampling({ allocator, pools, usage, clock }, USAGE_SAMPLE_MS);
    stops.push(async () => stopSampling());
    const metricsText = async () => ({
      contentType: metrics.registry.contentType,
      text: await metrics.registry.metrics(),
    });
    const api = await listen(
      'the REST API port (--api-port)',
      withPlainMetrics(
        restApp({
          allocator,
          store,
          pods: world.pods,
          pools,
          locks,
          events,
          log,
          notDecidingBecause,
          metrics: async (_req, res) => {
            const { contentType, text } = await metricsText();
            res.type(contentType).send(text);
          },
          validateResponses: options.validateApiResponses ?? false,
          released: (key) => {
            metrics.releases.inc({ action: 'release', cause: 'rest' });
            void requeue.released(key);
          },
          ...(options.apiAuth === 'kubernetes' ? { authenticate: kubernetesAuth(kubeConfig, log) } : {}),
          dashboard: { events, usage, parkedTtlMs: options.parkedIpTtlMs ?? 0, clock },
        }),
        metricsText,
      ),
      at,
      options.apiPort ?? 0,
      options.tls,
    );
    if (options.apiAuth !== 'kubernetes') {
      log.warn(
        'the REST API is open to anyone who can reach it (--api-auth=none, galaxy’s behaviour); use --api-auth=kubernetes',
      );
    }
    stops.push(() => close(api));
    const apiUrl = urlOf(options.bind, api, options.tls);
    log.info({ url: apiUrl }, 'REST API listening');
    return {
      extenderUrl,
      apiUrl,
      webhookUrl,
      healthUrl,
      allocator,
      store,
      cluster,
      pods: world.pods,
      pools,
      locks,
      lifecycle,
      requeue,
      nodeFacts: nodes,
      events: written,
      metrics,
      isLeader,
      elector,
      async close() {
        for (const stop of stops.reverse()) await stop();
        await written.flush();
      },
    };
  } catch (err) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    throw err;
  }
}

/** How often the dashboard's usage history is sampled (it keeps an hour). */
const USAGE_SAMPLE_MS = 30_000;
