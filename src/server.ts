// The composition root: builds every room from the options, starts them in order, and stops them
// in reverse. Start: CRDs -> configuration -> FloatingIP objects restored -> Pools and cluster
// caches -> the extender listens.
import { type RequestListener, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { restApp } from './api/index.js';
import type { GalaxyConfig } from './config/galaxy-config.js';
import { PoolConfigSource } from './controller/pool-config.js';
import { type DecisionLocks, Extender } from './extender/extender.js';
import { extenderApp } from './extender/http.js';
import { NodeFacts } from './extender/node-subnets.js';
import { ClusterWorld } from './extender/world.js';
import { Allocator } from './ipam/index.js';
import { ClusterCache } from './kube/cluster.js';
import { ensureCrds } from './kube/crds.js';
import { CustomResourceClient } from './kube/custom-resources.js';
import { KubeEventRecorder } from './kube/events.js';
import type { Logger } from './log.js';
import { FLOATING_IP_PLURAL, GROUP, VERSION } from './store/floating-ip-object.js';
import { FloatingIPStore } from './store/floating-ip-store.js';
import { KeyedLock } from './store/keyed-lock.js';
import { PoolStore } from './store/pool-store.js';

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
  /** Check the REST API's answers against its OpenAPI document (tests). */
  readonly validateApiResponses?: boolean;
  readonly log: Logger;
}

export interface Floatip {
  readonly extenderUrl: string;
  readonly apiUrl: string;
  readonly allocator: Allocator;
  readonly store: FloatingIPStore;
  readonly cluster: ClusterCache;
  readonly pools: PoolStore;
  readonly locks: DecisionLocks;
  readonly events: KubeEventRecorder;
  close(): Promise<void>;
}

export async function startFloatip(options: FloatipOptions): Promise<Floatip> {
  const { kubeConfig, log } = options;
  const created = await ensureCrds(kubeConfig);
  if (created.length > 0) log.info({ crds: created }, 'custom resource definitions created');
  if (options.galaxy.cloudProviderGrpcAddr) {
    log.warn(
      { cloudProviderGrpcAddr: options.galaxy.cloudProviderGrpcAddr },
      'cloud provider hooks are not supported; ignored',
    );
  }
  const events = new KubeEventRecorder(kubeConfig, log);
  const allocator = new Allocator();
  const nodes = new NodeFacts(allocator);
  const config = new PoolConfigSource(options.galaxy, allocator, log, events);
  config.onChange(() => nodes.clearSubnets());
  const store = new FloatingIPStore(
    new CustomResourceClient(kubeConfig, { group: GROUP, version: VERSION, plural: FLOATING_IP_PLURAL }),
    kubeConfig,
    allocator,
    log,
  );
  const pools = new PoolStore(kubeConfig, options.poolNamespace, log);
  const cluster = new ClusterCache(kubeConfig, log);
  cluster.nodes.on('delete', (node) => nodes.forget(node.metadata?.name ?? ''));
  const locks: DecisionLocks = { pods: new KeyedLock(), apps: new KeyedLock() };
  const stops: (() => Promise<void>)[] = [];
  try {
    await config.start(kubeConfig);
    stops.push(() => config.stop());
    await store.start();
    stops.push(() => store.stop());
    await Promise.all([pools.start(), cluster.start()]);
    stops.push(
      () => pools.stop(),
      () => cluster.stop(),
    );
    const world = new ClusterWorld(kubeConfig, cluster, pools);
    const extender = new Extender(locks, store, world, nodes, events, log, {
      resource: options.resource,
    });
    const server = await listen(extenderApp(extender, nodes, log), options.bind, options.port);
    stops.push(() => close(server));
    const { port } = server.address() as AddressInfo;
    const extenderUrl = `http://${options.bind === '0.0.0.0' ? '127.0.0.1' : options.bind}:${port}`;
    log.info({ url: extenderUrl }, 'scheduler extender listening');
    const api = await listen(
      restApp({
        allocator,
        store,
        cluster,
        fetchPod: (namespace, name) => world.fetchPod(namespace, name),
        pools,
        locks,
        events,
        log,
        validateResponses: options.validateApiResponses ?? false,
      }),
      options.bind,
      options.apiPort ?? 0,
    );
    stops.push(() => close(api));
    const apiUrl = urlOf(options.bind, api);
    log.info({ url: apiUrl }, 'REST API listening');
    return {
      extenderUrl,
      apiUrl,
      allocator,
      store,
      cluster,
      pools,
      locks,
      events,
      async close() {
        for (const stop of stops.reverse()) await stop();
        await events.flush();
      },
    };
  } catch (err) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    throw err;
  }
}

function listen(app: RequestListener, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer(app);
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

function urlOf(bind: string, server: Server): string {
  const { port } = server.address() as AddressInfo;
  return `http://${bind === '0.0.0.0' ? '127.0.0.1' : bind}:${port}`;
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
