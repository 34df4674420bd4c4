// Composition of the embedded API server: registry, store, verbs, watches, faults, persistence and the HTTP
// listener, started in-process. A development aid and test backend, never a production store.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { CrdController } from './crd-controller.js';
import { namespaceDefaults, podDefaults, workloadDefaults } from './defaults.js';
import { FaultController } from './faults.js';
import { createHandler } from './handler.js';
import { loadState, stateJson, StateWriter } from './persistence.js';
import { CRD_STORAGE_KEY, ResourceRegistry, storageKeyOf, type ResourceType } from './registry.js';
import { ResourceService, type ResourceHooks } from './resources.js';
import { demoSeed } from './seed.js';
import { objectKey, Store } from './store.js';
import type { KubeObject } from './types.js';
import type { ReviewTable } from './reviews.js';
import { WatchHub } from './watch.js';

export interface ApiServerOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** What a server without a state file starts with: the demo cluster (default), nothing, or these objects. */
  seed?: 'demo' | 'none' | KubeObject[];
  /** Keep the objects in this JSON file across restarts. When it exists, it is loaded and `seed` is ignored. */
  stateFile?: string;
  /** How many changes watches can resume from (default 10,000); older resourceVersions get 410 Gone. */
  historySize?: number;
  /** How often a watch with allowWatchBookmarks gets a BOOKMARK (default 60 s, like kube-apiserver). */
  bookmarkIntervalMs?: number;
  /** How long changes are coalesced before the state file is written (default 200 ms). */
  persistDebounceMs?: number;
  /** Where unexpected internal errors are reported (default: stderr). */
  log?: (message: string) => void;
  /** Who TokenReviews authenticate and what SubjectAccessReviews allow (default: nobody, nothing). */
  auth?: ReviewTable;
}

export interface EmbeddedApiServer {
  /** e.g. http://127.0.0.1:34567 */
  readonly url: string;
  readonly port: number;
  /** Fault injection for tests: failing or delayed requests, dropped watches, expired history. */
  readonly faults: FaultController;
  /** A client-node KubeConfig for this server (context "floatip-dev", default namespace `namespace`). */
  kubeConfig(namespace?: string): KubeConfig;
  /** The current global resourceVersion (etcd's revision). */
  revision(): number;
  /**
   * Creates objects in-process, bypassing HTTP (for large fixtures and benchmarks), with the same
   * semantics as POST. Namespaced objects without a namespace go to "default". Returns the stored objects.
   */
  createObjects(objects: KubeObject[]): KubeObject[];
  /** Writes the state file now (if there is one) and waits for it. */
  flush(): Promise<void>;
  /** Ends all watches, stops listening, and writes the state file one last time. */
  close(): Promise<void>;
}

const DEFAULT_HISTORY = 10_000;

function formatHostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

export async function startApiServer(opts: ApiServerOptions = {}): Promise<EmbeddedApiServer> {
  const host = opts.host ?? '127.0.0.1';
  const log = opts.log ?? ((message: string) => process.stderr.write(`${message}\n`));
  const registry = new ResourceRegistry();
  const builtinStorageKeys = new Set(registry.all().map((rt) => rt.storageKey));
  const saved = opts.stateFile ? await loadState(opts.stateFile) : undefined;
  const store = new Store({ historySize: opts.historySize ?? DEFAULT_HISTORY });
  const watches = new WatchHub(store);
  const crds = new CrdController({
    registry,
    store,
    builtinStorageKeys,
    dropWatches: (storageKey) => watches.dropStorage(storageKey),
  });
  const hooks = new Map<string, ResourceHooks>([
    [CRD_STORAGE_KEY, crds.hooks],
    ['pods', podDefaults],
    ['namespaces', namespaceDefaults],
    [storageKeyOf('apps', 'deployments'), workloadDefaults],
    [storageKeyOf('apps', 'replicasets'), workloadDefaults],
    [storageKeyOf('apps', 'statefulsets'), workloadDefaults],
  ]);
  const service = new ResourceService(store, (rt) => hooks.get(rt.storageKey) ?? {});
  const faults = new FaultController(watches, {
    expire: () => {
      store.history.compact(store.revision);
      return store.revision;
    },
  });

  const typeOf = (obj: KubeObject, what: string): ResourceType => {
    const rt = registry.byKind(String(obj.apiVersion ?? ''), String(obj.kind ?? ''));
    if (!rt) {
      throw new Error(
        `${what}: no served resource for apiVersion ${String(obj.apiVersion)} kind ${String(obj.kind)}` +
          ` (${obj.metadata?.name ?? 'unnamed'}); a custom resource needs its CRD first`,
      );
    }
    return rt;
  };
  // CRDs first, so that the objects they define have a type when their turn comes.
  const crdsFirst = (objects: KubeObject[]): KubeObject[] => [
    ...objects.filter((o) => o.kind === 'CustomResourceDefinition'),
    ...objects.filter((o) => o.kind !== 'CustomResourceDefinition'),
  ];
  const createObjects = (objects: KubeObject[], what = 'createObjects'): KubeObject[] =>
    crdsFirst(objects).map((obj) => {
      const rt = typeOf(obj, what);
      const ns = rt.namespaced ? (obj.metadata?.namespace ?? 'default') : undefined;
      return service.create(rt, ns, structuredClone(obj)).obj;
    });

  if (saved && opts.stateFile) {
    for (const obj of crdsFirst(saved.objects)) {
      const rt = typeOf(obj, `state file ${opts.stateFile}`);
      const ns = rt.namespaced ? obj.metadata?.namespace : undefined;
      store.restore(rt.storageKey, objectKey(ns, obj.metadata?.name ?? ''), obj);
      if (rt.storageKey === CRD_STORAGE_KEY) crds.register(obj);
    }
    store.resetRevision(saved.revision);
  } else {
    const seed = opts.seed ?? 'demo';
    if (seed === 'demo') createObjects(demoSeed(), 'demo seed');
    else if (Array.isArray(seed)) createObjects(seed, 'seed');
  }

  let writer: StateWriter | undefined;
  let unsubscribe: (() => void) | undefined;
  if (opts.stateFile) {
    const stateWriter = new StateWriter(
      opts.stateFile,
      () =>
        stateJson(
          store.revision,
          (function* () {
            for (const s of store.allObjects()) yield s.json;
          })(),
        ),
      opts.persistDebounceMs ?? 200,
      log,
    );
    writer = stateWriter;
    unsubscribe = store.subscribe(() => stateWriter.changed());
    // A seeded fresh state is written at once, so a crash right after start still leaves a file.
    if (!saved) stateWriter.changed();
  }

  let address = '';
  const handler = createHandler({
    registry,
    store,
    service,
    watches,
    faults,
    serverAddress: () => address,
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
    log,
    reviews: opts.auth ?? {},
  });
  const server: Server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  address = `${formatHostForUrl(host)}:${port}`;
  const url = `http://${address}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    faults,
    revision: () => store.revision,
    createObjects: (objects) => createObjects(objects),
    kubeConfig(namespace = 'default') {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'floatip-dev', server: url, skipTLSVerify: true }],
        users: [{ name: 'floatip-dev' }],
        contexts: [{ name: 'floatip-dev', cluster: 'floatip-dev', user: 'floatip-dev', namespace }],
        currentContext: 'floatip-dev',
      });
      return kc;
    },
    flush: async () => {
      await writer?.flush();
    },
    close() {
      closing ??= (async () => {
        watches.dropAll();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        unsubscribe?.();
        await writer?.flush();
      })();
      return closing;
    },
  };
}
