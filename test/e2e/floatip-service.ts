// floatip's REST API as a Service of the cluster, for what reaches it through the API server's
// service proxy (kubectl fip release): the Service manifests/ deploy (kube-system/floatip, port
// `api-port` 9041) without a selector, and its Endpoints set by hand to a floatip running on this
// machine. kube-apiserver proxies only to an endpoint address that is a Pod's IP (the address's
// targetRef must name a pod whose status.podIPs has it) and never to loopback, so a Pod object
// stands for the local floatip: `floatip-host` in kube-system, bound to a Node object of the same
// name that no (fake) kubelet manages, with this machine's first non-loopback IPv4 address as its
// IP; floatip must listen there (`--bind 0.0.0.0`).
import { networkInterfaces } from 'node:os';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { apiRequest, proxyPath } from '../../src/fip/cluster.js';
import { ENI_IP } from './cluster.js';
import { httpCode } from './kube-errors.js';
import { createNodes, deleteNodes } from './nodes.js';
import { waitFor } from './wait.js';

export const SERVICE_NAMESPACE = 'kube-system';
export const SERVICE_NAME = 'floatip';
/** The Node and the Pod standing for the machine floatip runs on; a kubelet must leave them alone. */
export const FLOATIP_HOST = 'floatip-host';

/** This machine's first non-internal IPv4 address; throws when it has none. */
export function hostAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  throw new Error('this machine has no non-loopback IPv4 address for the API server to proxy to');
}

const ignoreConflict = (err: unknown) => {
  if (httpCode(err) !== 409) throw err;
};

/** Creates (or points again) kube-system/floatip at `address:apiPort`, and waits until the proxy reaches it. */
export async function exposeFloatipApi(
  kc: KubeConfig,
  apiPort: number,
  address = hostAddress(),
): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const namespace = SERVICE_NAMESPACE;
  const hasNode = await core.readNode({ name: FLOATIP_HOST }).then(
    () => true,
    () => false,
  );
  if (!hasNode) await createNodes([FLOATIP_HOST], [address], { [ENI_IP]: '0' }, { kubeConfig: kc });
  await core
    .createNamespacedPod({
      namespace,
      body: {
        metadata: { name: FLOATIP_HOST, labels: { app: 'floatip' } },
        spec: {
          nodeName: FLOATIP_HOST,
          hostNetwork: true,
          containers: [{ name: 'floatip', image: 'floatip' }],
        },
      },
    })
    .catch(ignoreConflict);
  const pod = await core.readNamespacedPod({ name: FLOATIP_HOST, namespace });
  pod.status = { phase: 'Running', hostIP: address, podIP: address, podIPs: [{ ip: address }] };
  await core.replaceNamespacedPodStatus({ name: FLOATIP_HOST, namespace, body: pod });
  const metadata = { name: SERVICE_NAME, namespace };
  await core
    .createNamespacedService({
      namespace,
      body: { metadata, spec: { ports: [{ name: 'api-port', port: 9041, targetPort: apiPort }] } },
    })
    .catch(ignoreConflict);
  const body = {
    metadata,
    subsets: [
      {
        addresses: [{ ip: address, targetRef: { kind: 'Pod', namespace, name: FLOATIP_HOST } }],
        ports: [{ name: 'api-port', port: apiPort }],
      },
    ],
  };
  let last = '';
  // the endpoints controller may still be deleting the Endpoints of a Service deleted just before:
  // write them until a request through the proxy arrives
  await waitFor(
    `floatip's REST API through the service proxy at ${address}:${apiPort}`,
    async () => {
      try {
        await core.createNamespacedEndpoints({ namespace, body });
      } catch (err) {
        ignoreConflict(err);
        await core.replaceNamespacedEndpoints({ name: SERVICE_NAME, namespace, body });
      }
      const path = proxyPath({ namespace, name: SERVICE_NAME, port: 'api-port' }, '/v1/subnets');
      const answer = await apiRequest(kc, 'GET', path);
      if (answer.status === 200) return true;
      last = `${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`;
      return undefined;
    },
    { timeoutMs: 15_000, intervalMs: 250, describe: () => last },
  );
}

export async function removeFloatipApi(kc: KubeConfig): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const namespace = SERVICE_NAMESPACE;
  await core.deleteNamespacedService({ name: SERVICE_NAME, namespace }).catch(() => undefined);
  await core.deleteNamespacedEndpoints({ name: SERVICE_NAME, namespace }).catch(() => undefined);
}

/** The Service, its Endpoints, and the Pod and Node standing for this machine. */
export async function removeFloatipHost(kc: KubeConfig): Promise<void> {
  await removeFloatipApi(kc);
  const core = kc.makeApiClient(CoreV1Api);
  await core
    .deleteNamespacedPod({ name: FLOATIP_HOST, namespace: SERVICE_NAMESPACE, gracePeriodSeconds: 0 })
    .catch(() => undefined);
  await deleteNodes([FLOATIP_HOST], kc);
}
