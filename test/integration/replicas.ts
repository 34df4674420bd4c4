// Replicas of floatip with leader election on one embedded API server, for the HA tests: the
// namespaces, a floating-IP configuration of one node subnet (10.0.1.0/24, addresses
// 10.0.100.10-20), node a1 in it, and pods in ns1 that want an address.
import { CoreV1Api } from '@kubernetes/client-node';
import { type EmbeddedApiServer, startApiServer } from '../../src/apiserver/index.js';
import { GALAXY_DEFAULTS } from '../../src/config/galaxy-config.js';
import { DEFAULT_RESOURCE } from '../../src/pods/pod-facts.js';
import { silentLogger } from '../../src/log.js';
import { type Floatip, type FloatipOptions, startFloatip } from '../../src/server.js';
import { eventually } from './helpers.js';

export const LEASE = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 100 };

export interface HaCluster {
  readonly server: EmbeddedApiServer;
  readonly core: CoreV1Api;
  /** A replica named `identity` on the `galaxy-ipam` Lease; `options` add to or override the defaults. */
  replica(identity: string, options?: Partial<FloatipOptions>): Promise<Floatip>;
  /** Creates pod ns1/name and waits until every one of `replicas` has it in its cache. */
  pod(name: string, replicas: readonly Floatip[]): ReturnType<CoreV1Api['createNamespacedPod']>;
}

export async function startHaCluster(): Promise<HaCluster> {
  const server = await startApiServer({ port: 0, seed: 'none', log: () => undefined });
  const core = server.kubeConfig().makeApiClient(CoreV1Api);
  for (const name of ['kube-system', 'ns1']) await core.createNamespace({ body: { metadata: { name } } });
  await core.createNamespacedConfigMap({
    namespace: 'kube-system',
    body: {
      metadata: { name: 'floatingip-config' },
      data: {
        floatingips: JSON.stringify([
          {
            nodeSubnets: ['10.0.1.0/24'],
            ips: ['10.0.100.10~10.0.100.20'],
            subnet: '10.0.100.0/24',
            gateway: '10.0.100.1',
          },
        ]),
      },
    },
  });
  await core.createNode({
    body: { metadata: { name: 'a1' }, status: { addresses: [{ type: 'InternalIP', address: '10.0.1.11' }] } },
  });
  return {
    server,
    core,
    replica: (identity, options = {}) =>
      startFloatip({
        kubeConfig: server.kubeConfig(),
        galaxy: GALAXY_DEFAULTS,
        resource: DEFAULT_RESOURCE,
        poolNamespace: 'kube-system',
        bind: '127.0.0.1',
        port: 0,
        log: silentLogger(),
        resyncIntervalMs: 0,
        leaderElection: { namespace: 'kube-system', name: 'galaxy-ipam', identity, ...LEASE },
        ...options,
      }),
    async pod(name, replicas) {
      const created = await core.createNamespacedPod({
        namespace: 'ns1',
        body: {
          metadata: { name },
          spec: {
            containers: [{ name: 'c', image: 'pause', resources: { requests: { [DEFAULT_RESOURCE]: '1' } } }],
          },
        },
      });
      await eventually('every replica to see the pod', async () =>
        replicas.every((r) => r.cluster.pods.get('ns1', name)),
      );
      return created;
    },
  };
}
