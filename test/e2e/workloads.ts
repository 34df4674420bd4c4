// Namespaces and Deployments for scenarios: pods that request the ENI IP resource, so the scheduler
// sends them to the extender, with an image nothing ever pulls.
import {
  AppsV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1Deployment,
  type V1PodTemplateSpec,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { clusterKubeConfig, ENI_IP } from './cluster.js';
import { describeError, httpCode } from './kube-errors.js';
import { waitFor } from './wait.js';

/** An image nothing ever pulls: the kubelets are fake. */
const IMAGE = 'registry.invalid/floatip-e2e/pause:3.2';

export interface DeploymentOptions {
  readonly replicas: number;
  /** Extra labels on the Deployment and its pods. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Container limits; default one ENI IP. */
  readonly limits?: Readonly<Record<string, string>>;
  /** Default: Kubernetes' 30 s, so deletions wait for the (fake) kubelet as in a real cluster. */
  readonly terminationGracePeriodSeconds?: number;
  /** Pod annotations, e.g. the release policy or the pool. */
  readonly annotations?: Readonly<Record<string, string>>;
  /** Keeps a scenario's pods on its own nodes. */
  readonly nodeSelector?: Readonly<Record<string, string>>;
}

/** The pod template both workload kinds share. */
function podTemplate(labels: Record<string, string>, options: DeploymentOptions): V1PodTemplateSpec {
  return {
    metadata: { labels, ...(options.annotations ? { annotations: { ...options.annotations } } : {}) },
    spec: {
      containers: [
        {
          name: 'app',
          image: IMAGE,
          resources: { limits: { ...(options.limits ?? { [ENI_IP]: '1' }) } },
        },
      ],
      ...(options.nodeSelector ? { nodeSelector: { ...options.nodeSelector } } : {}),
      ...(options.terminationGracePeriodSeconds !== undefined
        ? { terminationGracePeriodSeconds: options.terminationGracePeriodSeconds }
        : {}),
    },
  };
}

export function deployment(namespace: string, name: string, options: DeploymentOptions): V1Deployment {
  const labels = { app: name, ...options.labels };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas: options.replicas,
      selector: { matchLabels: { app: name } },
      template: podTemplate(labels, options),
    },
  };
}

/**
 * A StatefulSet (pods `<name>-0..`), Parallel pod management so scenarios do not wait for each
 * ordinal in turn. serviceName is required by the API; no Service is needed for scheduling.
 */
export function statefulSet(namespace: string, name: string, options: DeploymentOptions): V1StatefulSet {
  const labels = { app: name, ...options.labels };
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace, labels },
    spec: {
      replicas: options.replicas,
      serviceName: name,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { app: name } },
      template: podTemplate(labels, options),
    },
  };
}

export async function createStatefulSet(
  body: V1StatefulSet,
  kubeConfig: KubeConfig = clusterKubeConfig(),
): Promise<V1StatefulSet> {
  const namespace = body.metadata?.namespace ?? 'default';
  try {
    return await kubeConfig.makeApiClient(AppsV1Api).createNamespacedStatefulSet({ namespace, body });
  } catch (err) {
    throw new Error(`creating statefulset ${namespace}/${body.metadata?.name}: ${describeError(err)}`);
  }
}

export async function createDeployment(
  body: V1Deployment,
  kubeConfig: KubeConfig = clusterKubeConfig(),
): Promise<V1Deployment> {
  const namespace = body.metadata?.namespace ?? 'default';
  try {
    return await kubeConfig.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace, body });
  } catch (err) {
    throw new Error(`creating deployment ${namespace}/${body.metadata?.name}: ${describeError(err)}`);
  }
}

/**
 * Creates the namespace unless it exists, and waits until it takes pods. A new namespace's default
 * ServiceAccount (and on v1.20 its token Secret) is made by controllers a moment later, and until
 * then the ServiceAccount admission plugin refuses every pod (v1.20: 500 "No API token found for
 * service account"); a pod created directly, not by a controller that retries, would fail the
 * scenario. A server-side dry run goes through that admission and writes nothing.
 */
export async function ensureNamespace(
  name: string,
  kubeConfig: KubeConfig = clusterKubeConfig(),
): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  try {
    await core.createNamespace({ body: { metadata: { name } } });
  } catch (err) {
    if (httpCode(err) !== 409) throw new Error(`creating namespace ${name}: ${describeError(err)}`);
  }
  const probe = {
    metadata: { name: 'admission-probe' },
    spec: { containers: [{ name: 'app', image: IMAGE }] },
  };
  await waitFor(`namespace ${name} to take pods`, async () => {
    try {
      await core.createNamespacedPod({ namespace: name, body: probe, dryRun: 'All' });
      return true;
    } catch (err) {
      throw new Error(describeError(err));
    }
  });
}

/**
 * Deletes the namespace without waiting; the namespace controller removes what is in it (pods on
 * nodes only go once a kubelet, fake or not, finishes their deletion).
 */
export async function deleteNamespace(
  name: string,
  kubeConfig: KubeConfig = clusterKubeConfig(),
): Promise<void> {
  try {
    await kubeConfig.makeApiClient(CoreV1Api).deleteNamespace({ name });
  } catch (err) {
    if (httpCode(err) !== 404) throw new Error(`deleting namespace ${name}: ${describeError(err)}`);
  }
}
