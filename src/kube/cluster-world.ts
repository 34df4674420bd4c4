// The cluster as the rooms that decide see it: pods (cache, else API server), nodes, and the two
// writes to pods floatip makes (the binding, and an annotation). A client adapter: it decides
// nothing. Every write first asks `guard`, which throws on a replica that must not write.
import {
  CoreV1Api,
  type KubeConfig,
  PatchStrategy,
  type ConfigurationOptions,
  Observable,
  setHeaderOptions,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { kubeError } from './custom-resources.js';
import { ClusterPods, type PodLookup } from './pod-lookup.js';
import type { Reflector } from './reflector.js';

/** Per-call options that abort the call after `ms` (its middleware runs after the shared 30 s bound is set). */
function abortAfter(ms: number): ConfigurationOptions {
  const signal = AbortSignal.timeout(Math.max(1, Math.floor(ms)));
  return {
    middleware: [
      {
        pre: (context) => {
          context.setSignal(signal);
          return new Observable(Promise.resolve(context));
        },
        post: (response) => new Observable(Promise.resolve(response)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}

export class ClusterWorld {
  readonly pods: PodLookup;
  private readonly core: CoreV1Api;
  private readonly nodeCache: Pick<Reflector<V1Node>, 'get'>;

  constructor(
    kubeConfig: KubeConfig,
    caches: { readonly pods: Pick<Reflector<V1Pod>, 'get'>; readonly nodes: Pick<Reflector<V1Node>, 'get'> },
    /** Called before every write; throws to refuse it (a replica that is not the leader). */
    private readonly guard: () => void = () => undefined,
  ) {
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.pods = new ClusterPods(kubeConfig, caches.pods);
    this.nodeCache = caches.nodes;
  }

  /** The node as the cache has it, or undefined. */
  node(name: string): V1Node | undefined {
    return this.nodeCache.get(name);
  }

  /** The node from the API server, or undefined when there is none. */
  async fetchNode(name: string): Promise<V1Node | undefined> {
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
    try {
      await this.core.createNamespacedPodBinding(
        {
          namespace,
          name,
          body: {
            apiVersion: 'v1',
            kind: 'Binding',
            metadata: { name, namespace, ...(uid ? { uid } : {}), annotations },
            target: { apiVersion: 'v1', kind: 'Node', name: node },
          },
        },
        timeoutMs === undefined ? undefined : abortAfter(timeoutMs),
      );
    } catch (err) {
      throw kubeError(err, `bind pod ${namespace}/${name} to ${node}`);
    }
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
    try {
      await this.core.patchNamespacedPod(
        { namespace, name, body: { metadata: { uid, annotations } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    } catch (err) {
      throw kubeError(err, `annotate pod ${namespace}/${name}`);
    }
  }
}
