// One way to find a pod: the pod cache first (cheap, but it may lag behind the scheduler or a
// re-creation), then the cache again with what the pod watch has already been sent (it reads in
// batches: watch-pacing.ts), the API server when the cache still has no answer, or not the
// incarnation asked for.
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { LeanClient } from './lean-client.js';
import { isPathSegment } from './path-segment.js';
import type { Reflector } from './reflector.js';

/** A namespace is a DNS label, a pod's (and a node's) name a DNS subdomain: no longer than these. */
export const MAX_NAMESPACE = 63;
export const MAX_NAME = 253;

export interface PodLookup {
  /** The pod as the cache has it, or undefined. */
  cached(namespace: string, name: string): V1Pod | undefined;
  /** The pod from the API server, or undefined when there is none (404). Throws on other failures. */
  fetch(namespace: string, name: string): Promise<V1Pod | undefined>;
  /**
   * The cache's pod, else the API server's: when the cache has none, or (with `uid`) another
   * incarnation than the one asked for.
   */
  find(namespace: string, name: string, uid?: string): Promise<V1Pod | undefined>;
}

export class ClusterPods implements PodLookup {
  /** A release reads its pod (pod-gone.ts), so the lean client: as the cache, a pod as JSON has it. */
  private readonly client: LeanClient;

  constructor(
    kubeConfig: KubeConfig,
    private readonly cache: Pick<Reflector<V1Pod>, 'get' | 'readArrived'>,
  ) {
    this.client = new LeanClient(kubeConfig);
  }

  cached(namespace: string, name: string): V1Pod | undefined {
    return this.cache.get(namespace, name);
  }

  async fetch(namespace: string, name: string): Promise<V1Pod | undefined> {
    // no pod has such a name, and in a URL it names something else (`pods/..` is the namespace);
    // nor one longer than Kubernetes allows, which the API server answered 431 (a transient failure)
    if (!isPathSegment(namespace) || !isPathSegment(name)) return undefined;
    if (namespace.length > MAX_NAMESPACE || name.length > MAX_NAME) return undefined;
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
    return (await this.client.find(path, `get pod ${namespace}/${name}`)) as V1Pod | undefined;
  }

  async find(namespace: string, name: string, uid?: string): Promise<V1Pod | undefined> {
    const asked = (pod: V1Pod | undefined) => pod && (!uid || pod.metadata?.uid === uid);
    let pod = this.cached(namespace, name);
    if (asked(pod)) return pod;
    await this.cache.readArrived();
    pod = this.cached(namespace, name);
    return asked(pod) ? pod : this.fetch(namespace, name);
  }
}
