// Namespaces and Deployments for scenarios: pods that request the ENI IP resource, so the scheduler
// sends them to the extender, with an image nothing ever pulls.
import { AppsV1Api, CoreV1Api, type KubeConfig, type V1Deployment } from '@kubernetes/client-node';
import { clusterKubeConfig, ENI_IP } from './cluster.js';
import { describeError, httpCode } from './kube-errors.js';

export interface DeploymentOptions {
  readonly replicas: number;
  /** Extra labels on the Deployment and its pods. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Container limits; default one ENI IP. */
  readonly limits?: Readonly<Record<string, string>>;
  /** Default: Kubernetes' 30 s, so deletions wait for the (fake) kubelet as in a real cluster. */
  readonly terminationGracePeriodSeconds?: number;
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
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'registry.invalid/floatip-e2e/pause:3.2',
              resources: { limits: { ...(options.limits ?? { [ENI_IP]: '1' }) } },
            },
          ],
          ...(options.terminationGracePeriodSeconds !== undefined
            ? { terminationGracePeriodSeconds: options.terminationGracePeriodSeconds }
            : {}),
        },
      },
    },
  };
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

/** Creates the namespace unless it exists. */
export async function ensureNamespace(
  name: string,
  kubeConfig: KubeConfig = clusterKubeConfig(),
): Promise<void> {
  try {
    await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
  } catch (err) {
    if (httpCode(err) !== 409) throw new Error(`creating namespace ${name}: ${describeError(err)}`);
  }
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
