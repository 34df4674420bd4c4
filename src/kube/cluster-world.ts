// The cluster as the rooms that decide see it: pods (cache, else API server), nodes, and the two
// writes to pods floatip makes (the binding, and an annotation). A client adapter: it decides
// nothing. Every write first asks `guard`, which throws on a replica that must not write.
import { CoreV1Api, type KubeConfig, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { kubeError } from './api-error.js';
import { LeanClient } from './lean-client.js';
import { checkPathSegment, isPathSegment } from './path-segment.js';
import { ClusterPods, MAX_NAME, type PodLookup } from './pod-lookup.js';
import type { Reflector } from './reflector.js';
import { apiClient } from './resend.js';

export class ClusterWorld {
  readonly pods: PodLookup;
  private readonly core: CoreV1Api;
  private readonly nodeCache: Pick<Reflector<V1Node>, 'get'>;
  /** The binding on every bind, and the annotation: the lean client (lean-client.ts). */
  private readonly writer: LeanClient;

  constructor(
    kubeConfig: KubeConfig,
    caches: {
      readonly pods: Pick<Reflector<V1Pod>, 'get' | 'readArrived'>;
      readonly nodes: Pick<Reflector<V1Node>, 'get'>;
    },
    /** Called before every write; throws to refuse it (a replica that is not the leader). */
    private readonly guard: () => void = () => undefined,
  ) {
    this.core = apiClient(kubeConfig, CoreV1Api);
    this.writer = new LeanClient(kubeConfig);
    this.pods = new ClusterPods(kubeConfig, caches.pods);
    this.nodeCache = caches.nodes;
  }

  /** The node as the cache has it, or undefined. */
  node(name: string): V1Node | undefined {
    return this.nodeCache.get(name);
  }

  /** The node from the API server, or undefined when there is none. */
  async fetchNode(name: string): Promise<V1Node | undefined> {
    // no node has such a name, and in a URL it names something else (`nodes/..` is the API's root)
    if (!isPathSegment(name) || name.length > MAX_NAME) return undefined;
    try {
      return await this.core.readNode({ name });
    } catch (err) {
      const e = kubeError(err, `get node ${name}`);
      if (e.status === 404) return undefined;
      throw e;
    }
  }

  /**
   * POSTs the pod's binding to `node`, with these annotations (only for incarnation `uid`, if given),
   * given up after `timeoutMs` (a KubeApiError of status 0, as for any call whose answer never came).
   */
  async bind(
    namespace: string,
    name: string,
    uid: string,
    node: string,
    annotations: Record<string, string>,
    timeoutMs?: number,
  ): Promise<void> {
    this.guard();
    checkPathSegment(namespace, `bind pod ${namespace}/${name}`);
    checkPathSegment(name, `bind pod ${namespace}/${name}`);
    await this.writer.post(
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/binding`,
      {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name, namespace, ...(uid ? { uid } : {}), annotations },
        target: { apiVersion: 'v1', kind: 'Node', name: node },
      },
      `bind pod ${namespace}/${name} to ${node}`,
      timeoutMs,
      this.guard,
    );
  }

  /**
   * Merges these annotations into the pod, only while it is the incarnation `uid` (the UID in the
   * patch must match, or the API server refuses it).
   */
  async annotatePod(
    namespace: string,
    name: string,
    uid: string,
    annotations: Record<string, string>,
  ): Promise<void> {
    this.guard();
    checkPathSegment(namespace, `annotate pod ${namespace}/${name}`);
    checkPathSegment(name, `annotate pod ${namespace}/${name}`);
    await this.writer.write(
      'MERGE-PATCH',
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`,
      { metadata: { uid, annotations } },
      `annotate pod ${namespace}/${name}`,
      undefined,
      this.guard,
    );
  }
}
