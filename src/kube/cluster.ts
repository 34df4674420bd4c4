// The cluster as floatip sees it: read-only caches of the resources it reacts to, each kept in step
// by a Reflector. Started together; every consumer reads from here, nobody lists on a hot path.
// Only what is read: a Deployment pod's app comes from its ReplicaSet's name (galaxy's rule), so
// ReplicaSets, whose status changes with every pod they create, are not watched. Pods and their
// workloads change in bursts as pods are placed: their watches read in batches (watch-pacing.ts),
// and a bind that misses its pod reads what has come first. Nodes change seldom, and a filter must
// know a new node as soon as kube-scheduler does: their watch reads each event as it comes.
// Deployments and StatefulSets are followed only from the first time a decision needs them (a
// release policy other than the default: watchWorkloads); a cluster whose pods all release their
// addresses on deletion never has floatip hold its workloads or read their status changes.
import {
  AppsV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1Deployment,
  type V1Node,
  type V1Pod,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import type { Logger } from '../log.js';
import { Reflector } from './reflector.js';
import { apiClient } from './resend.js';
import { watchPacing } from './watch-pacing.js';

export class ClusterCache {
  readonly pods: Reflector<V1Pod>;
  readonly nodes: Reflector<V1Node>;
  readonly deployments: Reflector<V1Deployment>;
  readonly statefulSets: Reflector<V1StatefulSet>;

  constructor(kubeConfig: KubeConfig, log: Logger) {
    const core = apiClient(kubeConfig, CoreV1Api);
    const apps = apiClient(kubeConfig, AppsV1Api);
    const common = { kubeConfig, log };
    this.pods = new Reflector<V1Pod>({
      ...common,
      name: 'pods',
      path: '/api/v1/pods',
      list: (page) => core.listPodForAllNamespaces(page),
      pacing: watchPacing,
    });
    this.nodes = new Reflector<V1Node>({
      ...common,
      name: 'nodes',
      path: '/api/v1/nodes',
      list: (page) => core.listNode(page),
    });
    this.deployments = new Reflector<V1Deployment>({
      ...common,
      name: 'deployments',
      path: '/apis/apps/v1/deployments',
      list: (page) => apps.listDeploymentForAllNamespaces(page),
      pacing: watchPacing,
    });
    this.statefulSets = new Reflector<V1StatefulSet>({
      ...common,
      name: 'statefulsets',
      path: '/apis/apps/v1/statefulsets',
      list: (page) => apps.listStatefulSetForAllNamespaces(page),
      pacing: watchPacing,
    });
  }

  /** Set by the first watchWorkloads(): the workload caches listed and followed from then on. */
  private workloads: Promise<void> | undefined;
  private stopped = false;

  private get all() {
    return [this.pods, this.nodes, ...(this.workloads ? [this.deployments, this.statefulSets] : [])];
  }

  /** Follows pods and nodes; Deployments and StatefulSets wait for watchWorkloads(). */
  async start(): Promise<void> {
    await Promise.all([this.pods.start(), this.nodes.start()]);
  }

  /** Whether the Deployment and StatefulSet caches are being filled or followed. */
  get watchingWorkloads(): boolean {
    return this.workloads !== undefined;
  }

  /**
   * Starts following Deployments and StatefulSets, once; resolves when both are listed (at once
   * after that). After stop() (floatip's last step, once nothing decides any more) it rejects
   * rather than let a decision read caches that were never filled.
   */
  watchWorkloads(): Promise<void> {
    if (this.stopped && !this.workloads)
      return Promise.reject(
        new Error('the cluster caches are stopped: Deployments and StatefulSets not listed'),
      );
    this.workloads ??= Promise.all([this.deployments.start(), this.statefulSets.start()]).then(
      () => undefined,
    );
    return this.workloads;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.all.map((r) => r.stop()));
  }

  /** Every cache as the API server has it now (Reflector.catchUp). */
  async catchUp(): Promise<void> {
    await Promise.all(this.all.map((r) => r.catchUp()));
  }
}
