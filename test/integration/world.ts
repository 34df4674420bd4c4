// A small cluster for integration tests: the embedded API server, floatip started on it as in
// production (composition root, real HTTP), and helpers that play kube-scheduler (request bodies
// in its own wire format, capitalised keys) and the controllers (pods with owner references).
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { type RestDeps, restApp } from '../../src/api/index.js';
import { type ApiServerOptions, type EmbeddedApiServer, startApiServer } from '../../src/apiserver/index.js';
import { CNI_ARGS_ANNOTATION, addressOf, parseCniArgs } from '../../src/cni/args.js';
import { GALAXY_DEFAULTS, type GalaxyConfig } from '../../src/config/galaxy-config.js';
import { DEFAULT_RESOURCE, POOL_ANNOTATION, RELEASE_POLICY_ANNOTATION } from '../../src/pods/pod-facts.js';
import { silentLogger } from '../../src/log.js';
import { INBOUND_REQUEST_TIMEOUT_MS, listen } from '../../src/ports.js';
import { type Floatip, startFloatip } from '../../src/server.js';
import { fromFloatingIPObject, objectNameOf } from '../../src/store/floating-ip-object.js';
import { RELEASED_EVENT_REASON } from '../../src/store/release-audit.js';
import { eventually, installSchemalessCrds } from './helpers.js';

export interface WorldOptions {
  /** The floatingip-config entries. */
  readonly config: unknown[];
  readonly galaxy?: Partial<GalaxyConfig>;
  readonly parkedIpTtlMs?: number;
  /** The lifecycle's clock (the parked-IP TTL's cutoff). */
  readonly clock?: () => number;
  /** Tokens and grants of the API server; floatip then runs with --api-auth=kubernetes. */
  readonly auth?: ApiServerOptions['auth'];
  /**
   * How floatip reaches the API server (a proxy in front of it), asked at every start of floatip;
   * the server's own kubeconfig if not given.
   */
  readonly floatipKubeConfig?: (server: EmbeddedApiServer) => Promise<KubeConfig>;
  /** How long a caller may take to send a request to floatip's ports (its default if not given). */
  readonly requestTimeoutMs?: number;
  /** The most connections each of floatip's ports keeps open. */
  readonly maxConnectionsPerPort?: number;
  /**
   * Install galaxy's schema-less CRDs before floatip starts (which then keeps them), so that
   * createPool and createFloatingIP may store what floatip's CRDs refuse, as on such a cluster.
   */
  readonly schemalessCrds?: boolean;
}

export interface PodSpec {
  name: string;
  namespace?: string;
  owner?: { kind: string; name: string };
  policy?: 'immutable' | 'never';
  pool?: string;
  ranges?: string[][];
  /** Ask for the resource (default true). */
  wants?: boolean;
}

export class World {
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly custom: CustomObjectsApi;
  /** REST APIs served besides floatip's own (serveRest), closed by stop(). */
  private readonly restServers: Server[] = [];

  private constructor(
    readonly server: EmbeddedApiServer,
    public floatip: Floatip,
    private readonly options: WorldOptions,
  ) {
    const kc = server.kubeConfig();
    this.core = kc.makeApiClient(CoreV1Api);
    this.apps = kc.makeApiClient(AppsV1Api);
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  static async start(options: WorldOptions): Promise<World> {
    const server = await startApiServer({
      port: 0,
      seed: 'none',
      log: () => undefined,
      ...(options.auth ? { auth: options.auth } : {}),
    });
    try {
      await World.prepare(server, options);
      return new World(server, await World.floatip(server, options), options);
    } catch (err) {
      await server.close();
      throw err;
    }
  }

  /** The namespaces and the floatingip-config ConfigMap. */
  private static async prepare(server: EmbeddedApiServer, options: WorldOptions): Promise<void> {
    const core = server.kubeConfig().makeApiClient(CoreV1Api);
    if (options.schemalessCrds) installSchemalessCrds(server);
    for (const name of ['default', 'kube-system', 'ns1'])
      await core.createNamespace({ body: { metadata: { name } } });
    await core.createNamespacedConfigMap({
      namespace: 'kube-system',
      body: {
        metadata: { name: 'floatingip-config' },
        data: { floatingips: JSON.stringify(options.config) },
      },
    });
  }

  private static async floatip(server: EmbeddedApiServer, options: WorldOptions): Promise<Floatip> {
    const kubeConfig = (await options.floatipKubeConfig?.(server)) ?? server.kubeConfig();
    return startFloatip({
      kubeConfig,
      galaxy: { ...GALAXY_DEFAULTS, ...options.galaxy },
      resource: DEFAULT_RESOURCE,
      poolNamespace: 'kube-system',
      bind: '127.0.0.1',
      port: 0,
      apiPort: 0,
      validateApiResponses: true,
      ...(options.auth ? { apiAuth: 'kubernetes' as const } : {}),
      log: silentLogger(),
      // passes are run by hand (lifecycle.resync()), so that tests decide when
      resyncIntervalMs: 0,
      parkedIpTtlMs: options.parkedIpTtlMs ?? 0,
      clock: options.clock,
      ...(options.requestTimeoutMs !== undefined ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
      ...(options.maxConnectionsPerPort !== undefined
        ? { maxConnectionsPerPort: options.maxConnectionsPerPort }
        : {}),
    });
  }

  /** Stops floatip, runs `meanwhile` while it is down, and starts a new floatip on the same API server. */
  async restartFloatip(meanwhile: () => Promise<void> = async () => undefined): Promise<void> {
    await this.floatip.close();
    await meanwhile();
    this.floatip = await World.floatip(this.server, this.options);
  }

  /**
   * The end of a scenario: (after the release queue has settled, with `settle`) the consistency
   * check, then stop, whether or not the check passed: a failed check must fail the test, not leave
   * servers behind that keep jest from exiting.
   */
  async checkAndStop({ settle = false } = {}): Promise<void> {
    try {
      if (settle) await this.settle();
      await this.expectConsistent();
    } finally {
      await this.stop();
    }
  }

  async stop(): Promise<void> {
    for (const server of this.restServers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await this.floatip.close();
    await this.server.close();
  }

  /**
   * Another REST API on floatip's allocator, store, caches and locks, built with `deps` (a hook, a
   * logger the test reads), on its own port in this process; returns its URL. On a plain node
   * server, or opened as floatip opens its ports (`asPort`: its 100 Continue, its refusals).
   */
  async serveRest(deps: Partial<RestDeps> & Pick<RestDeps, 'log'>, { asPort = false } = {}): Promise<string> {
    const f = this.floatip;
    const app = restApp({
      allocator: f.allocator,
      store: f.store,
      pods: f.pods,
      pools: f.pools,
      locks: f.locks,
      events: f.events,
      ...deps,
    });
    const at = { host: '127.0.0.1', requestTimeoutMs: INBOUND_REQUEST_TIMEOUT_MS };
    const server = asPort ? await listen('a REST API', app, at, 0) : createServer(app);
    this.restServers.push(server);
    if (!asPort) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  // ---- the cluster

  async node(name: string, ...internalIPs: string[]): Promise<V1Node> {
    return this.core.createNode({
      body: {
        metadata: { name },
        status: {
          addresses: internalIPs.map((address) => ({ type: 'InternalIP', address })),
          allocatable: { cpu: '4', memory: '8Gi', pods: '110', [DEFAULT_RESOURCE]: '64' },
        },
      },
    });
  }

  /** Creates the pod and (unless `wait` is false: floatip is down) waits until floatip has seen it. */
  /** A pod written as given (annotations of any value, a node, another owner), once floatip has it. */
  async rawPod(
    name: string,
    opts: {
      namespace?: string;
      annotations?: Record<string, string>;
      owner?: { apiVersion: string; kind: string; name: string };
      nodeName?: string;
    },
  ): Promise<V1Pod> {
    const namespace = opts.namespace ?? 'ns1';
    const pod = await this.core.createNamespacedPod({
      namespace,
      body: {
        metadata: {
          name,
          annotations: opts.annotations ?? {},
          ...(opts.owner
            ? {
                ownerReferences: [{ ...opts.owner, uid: `uid-${opts.owner.name}`, controller: true }],
              }
            : {}),
        },
        spec: {
          ...(opts.nodeName ? { nodeName: opts.nodeName } : {}),
          containers: [
            {
              name: 'c',
              image: 'pause',
              resources: { requests: { [DEFAULT_RESOURCE]: '1' }, limits: { [DEFAULT_RESOURCE]: '1' } },
            },
          ],
        },
      },
    });
    await eventually(
      'the pod to reach floatip',
      async () => this.floatip.cluster.pods.get(namespace, name)?.metadata?.uid === pod.metadata?.uid,
    );
    return pod;
  }

  async pod(spec: PodSpec, { wait = true } = {}): Promise<V1Pod> {
    const annotations: Record<string, string> = {};
    if (spec.policy) annotations[RELEASE_POLICY_ANNOTATION] = spec.policy;
    if (spec.pool) annotations[POOL_ANNOTATION] = spec.pool;
    if (spec.ranges) annotations[CNI_ARGS_ANNOTATION] = JSON.stringify({ request_ip_range: spec.ranges });
    const pod = await this.core.createNamespacedPod({
      namespace: spec.namespace ?? 'ns1',
      body: {
        metadata: {
          name: spec.name,
          annotations,
          ...(spec.owner
            ? {
                ownerReferences: [
                  {
                    apiVersion: 'apps/v1',
                    kind: spec.owner.kind,
                    name: spec.owner.name,
                    uid: `uid-${spec.owner.name}`,
                    controller: true,
                  },
                ],
              }
            : {}),
        },
        spec: {
          containers: [
            {
              name: 'c',
              image: 'pause',
              resources:
                spec.wants === false
                  ? {}
                  : { requests: { [DEFAULT_RESOURCE]: '1' }, limits: { [DEFAULT_RESOURCE]: '1' } },
            },
          ],
        },
      },
    });
    if (!wait) return pod;
    await eventually(
      'the pod to reach floatip',
      async () =>
        this.floatip.cluster.pods.get(spec.namespace ?? 'ns1', spec.name)?.metadata?.uid ===
        pod.metadata?.uid,
    );
    return pod;
  }

  /** A FloatingIP object written by someone else (kubectl, galaxy): policy never, no attribute, unless given. */
  async createFloatingIP(
    name: string,
    spec: { key: string; policy?: number; attribute?: string; updateTime?: string },
    labels?: Record<string, string>,
  ): Promise<void> {
    await this.custom.createClusterCustomObject({
      group: 'galaxy.k8s.io',
      version: 'v1alpha1',
      plural: 'floatingips',
      body: {
        apiVersion: 'galaxy.k8s.io/v1alpha1',
        kind: 'FloatingIP',
        metadata: { name, ...(labels ? { labels } : {}) },
        spec: { policy: 2, attribute: '', updateTime: '2020-01-01T00:00:00Z', ...spec },
      },
    });
  }

  /**
   * A Pool object, as kubectl would create it: any size where the world has galaxy's schema-less
   * CRDs (`schemalessCrds`); floatip's CRD refuses what is no whole number >= 0, as kube-apiserver.
   */
  async createPool(name: string, size: unknown): Promise<void> {
    await this.custom.createNamespacedCustomObject({
      group: 'galaxy.k8s.io',
      version: 'v1alpha1',
      plural: 'pools',
      namespace: 'kube-system',
      body: {
        apiVersion: 'galaxy.k8s.io/v1alpha1',
        kind: 'Pool',
        metadata: { name },
        size,
        preAllocateIP: false,
      },
    });
  }

  async deployment(name: string, replicas: number, namespace = 'ns1'): Promise<void> {
    await this.apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name },
        spec: {
          replicas,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: { containers: [{ name: 'c', image: 'pause' }] },
          },
        },
      },
    });
    await this.workloadsEventually(
      'the deployment to reach floatip',
      async () => this.floatip.cluster.deployments.get(namespace, name) !== undefined,
    );
  }

  /**
   * Waits for floatip's workload caches to show a change, when it follows workloads: it does only
   * once a pod's policy needs them, and then lists what is there (ClusterCache.watchWorkloads).
   */
  private async workloadsEventually(what: string, check: () => Promise<boolean>): Promise<void> {
    if (this.floatip.cluster.watchingWorkloads) await eventually(what, check);
  }

  /**
   * A custom workload kind: its CRD (namespaced, any fields), served at `version`, with the scale
   * subresource when `scalable` (what makes its pods' `immutable` policy possible, as in galaxy).
   */
  async customWorkloadKind(kind: {
    group: string;
    kind: string;
    plural: string;
    version?: string;
    scalable?: boolean;
  }): Promise<void> {
    const ext = this.server.kubeConfig().makeApiClient(ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: `${kind.plural}.${kind.group}` },
        spec: {
          group: kind.group,
          scope: 'Namespaced',
          names: {
            kind: kind.kind,
            plural: kind.plural,
            singular: kind.kind.toLowerCase(),
            listKind: `${kind.kind}List`,
          },
          versions: [
            {
              name: kind.version ?? 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
              subresources:
                kind.scalable === false
                  ? {}
                  : { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
            },
          ],
        },
      },
    });
  }

  async statefulSet(name: string, replicas: number, namespace = 'ns1'): Promise<void> {
    await this.apps.createNamespacedStatefulSet({
      namespace,
      body: {
        metadata: { name },
        spec: {
          replicas,
          serviceName: name,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: { containers: [{ name: 'c', image: 'pause' }] },
          },
        },
      },
    });
    await this.workloadsEventually(
      'the statefulset to reach floatip',
      async () => this.floatip.cluster.statefulSets.get(namespace, name) !== undefined,
    );
  }

  async scaleStatefulSet(name: string, replicas: number, namespace = 'ns1'): Promise<void> {
    const sts = await this.apps.readNamespacedStatefulSet({ name, namespace });
    sts.spec!.replicas = replicas;
    await this.apps.replaceNamespacedStatefulSet({ name, namespace, body: sts });
    await this.workloadsEventually(
      'the new scale to reach floatip',
      async () => this.floatip.cluster.statefulSets.get(namespace, name)?.spec?.replicas === replicas,
    );
  }

  async deleteStatefulSet(name: string, namespace = 'ns1'): Promise<void> {
    await this.apps.deleteNamespacedStatefulSet({ name, namespace });
    await this.workloadsEventually(
      'the deletion to reach floatip',
      async () => this.floatip.cluster.statefulSets.get(namespace, name) === undefined,
    );
  }

  async deleteDeployment(name: string, namespace = 'ns1'): Promise<void> {
    await this.apps.deleteNamespacedDeployment({ name, namespace });
    await this.workloadsEventually(
      'the deletion to reach floatip',
      async () => this.floatip.cluster.deployments.get(namespace, name) === undefined,
    );
  }

  /** Plays the Deployment controller: sets spec.replicas and a status (rolling or settled). */
  async deploymentState(
    name: string,
    state: { replicas?: number; rolling: boolean; strategy?: unknown },
    namespace = 'ns1',
  ): Promise<void> {
    const d = await this.apps.readNamespacedDeployment({ name, namespace });
    const replicas = state.replicas ?? d.spec?.replicas ?? 1;
    if (state.replicas !== undefined || state.strategy !== undefined) {
      d.spec!.replicas = replicas;
      if (state.strategy) d.spec!.strategy = state.strategy as never;
      await this.apps.replaceNamespacedDeployment({ name, namespace, body: d });
    }
    const current = await this.apps.readNamespacedDeployment({ name, namespace });
    current.status = state.rolling
      ? { observedGeneration: current.metadata?.generation, replicas: replicas + 1, updatedReplicas: 0 }
      : {
          observedGeneration: current.metadata?.generation,
          replicas,
          updatedReplicas: replicas,
          availableReplicas: replicas,
        };
    await this.apps.replaceNamespacedDeploymentStatus({ name, namespace, body: current });
    await this.workloadsEventually('the deployment state to reach floatip', async () => {
      const seen = this.floatip.cluster.deployments.get(namespace, name);
      return (
        seen?.status?.updatedReplicas === current.status?.updatedReplicas && seen?.spec?.replicas === replicas
      );
    });
  }

  /** Plays the kubelet: sets a pod's phase. */
  async phase(name: string, phase: 'Running' | 'Failed' | 'Succeeded', namespace = 'ns1'): Promise<void> {
    const pod = await this.readPod(name, namespace);
    pod.status = { ...pod.status, phase };
    await this.core.replaceNamespacedPodStatus({ name, namespace, body: pod });
    await eventually(
      'the phase to reach floatip',
      async () => this.floatip.cluster.pods.get(namespace, name)?.status?.phase === phase,
    );
  }

  /** Waits until the release queue has done everything it was given. */
  async settle(): Promise<void> {
    await new Promise((r) => setTimeout(r, 20));
    await this.floatip.lifecycle.queue.idle();
  }

  /** The addresses a key holds, sorted. */
  held(key: string): string[] {
    return this.floatip.allocator
      .byKey(key)
      .map((a) => a.ip)
      .sort();
  }

  async deletePod(name: string, namespace = 'ns1'): Promise<void> {
    await this.core.deleteNamespacedPod({ name, namespace });
    await eventually(
      'the deletion to reach floatip',
      async () => this.floatip.cluster.pods.get(namespace, name) === undefined,
    );
  }

  async readPod(name: string, namespace = 'ns1'): Promise<V1Pod> {
    return this.core.readNamespacedPod({ name, namespace });
  }

  /** The messages of the release audit Events on an address's FloatingIP object, oldest first. */
  async releasedEvents(ip: string): Promise<string[]> {
    await this.floatip.events.flush();
    const events = await this.core.listNamespacedEvent({ namespace: 'default' });
    return events.items
      .filter((e) => e.reason === RELEASED_EVENT_REASON && e.involvedObject.name === objectNameOf(ip))
      .map((e) => e.message ?? '');
  }

  // ---- kube-scheduler's side of the wire

  async post(verb: string, body: unknown): Promise<{ status: number; json: unknown; text: string }> {
    const res = await fetch(`${this.floatip.extenderUrl}/v1/${verb}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text };
  }

  // ---- the REST API, as an operator's tool calls it

  async rest(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; json: unknown; text: string; headers: Headers }> {
    const res = await fetch(`${this.floatip.apiUrl}${path}`, {
      method,
      headers: body === undefined ? headers : { 'Content-Type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text, headers: res.headers };
  }

  /** filter as kube-scheduler sends it: names only (nodeCacheCapable) or full Node objects. */
  async filter(pod: V1Pod, nodes: string[], mode: 'names' | 'objects' = 'names') {
    const body =
      mode === 'names'
        ? { Pod: pod, Nodes: null, NodeNames: nodes }
        : {
            Pod: pod,
            Nodes: {
              metadata: {},
              items: await Promise.all(nodes.map((name) => this.core.readNode({ name }))),
            },
            NodeNames: null,
          };
    const { json } = await this.post('filter', body);
    const result = json as {
      Nodes: { items: V1Node[] } | null;
      NodeNames: string[] | null;
      FailedNodes: Record<string, string>;
      Error: string;
    };
    return {
      passed: result.NodeNames ?? result.Nodes?.items.map((n) => n.metadata?.name ?? '') ?? [],
      failed: result.FailedNodes,
      error: result.Error,
    };
  }

  async bind(pod: V1Pod, node: string): Promise<string> {
    const { json } = await this.post('bind', {
      PodName: pod.metadata?.name,
      PodNamespace: pod.metadata?.namespace,
      PodUID: pod.metadata?.uid,
      Node: node,
    });
    return (json as { Error: string }).Error;
  }

  /** The addresses in a bound pod's annotation. */
  async addressesOf(name: string, namespace = 'ns1'): Promise<string[]> {
    const pod = await this.readPod(name, namespace);
    return parseCniArgs(pod.metadata?.annotations?.[CNI_ARGS_ANNOTATION]).ipinfos.map(addressOf);
  }

  /**
   * The consistency check after every scenario: FloatingIP objects, memory and the annotations of
   * bound pods agree one to one, and no address appears twice.
   */
  async expectConsistent(): Promise<void> {
    const list = (await this.custom.listClusterCustomObject({
      group: 'galaxy.k8s.io',
      version: 'v1alpha1',
      plural: 'floatingips',
    })) as {
      items: unknown[];
    };
    const objects = new Map<string, string>();
    for (const item of list.items) {
      // an object floatip cannot read takes its address all the same: memory holds it aside
      const decoded = fromFloatingIPObject(item);
      const record = decoded.ok ? decoded.record : decoded.aside;
      if (record) objects.set(record.ip, record.key);
    }
    const memory = new Map([...this.floatip.allocator.all()].map((a) => [a.ip, a.key]));
    expect(Object.fromEntries([...memory].sort())).toEqual(Object.fromEntries([...objects].sort()));
    const pods = await this.core.listPodForAllNamespaces();
    const annotated = new Map<string, string>();
    for (const pod of pods.items) {
      // a finished pod's addresses are released with it; its annotation stays
      if (!pod.spec?.nodeName || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed')
        continue;
      for (const ip of parseCniArgs(pod.metadata?.annotations?.[CNI_ARGS_ANNOTATION]).ipinfos.map(
        addressOf,
      )) {
        expect(annotated.has(ip) ? `${ip} in ${annotated.get(ip)} and ${pod.metadata?.name}` : 'once').toBe(
          'once',
        );
        annotated.set(ip, `${pod.metadata?.namespace}/${pod.metadata?.name}`);
        expect(objects.has(ip) ? ip : `${ip} (no FloatingIP object)`).toBe(ip);
      }
    }
  }
}
