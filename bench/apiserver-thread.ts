// The embedded API server on a worker thread (apiserver-worker.ts), as a real one is its own
// process: a benchmark then measures floatip's work, not the API server's.
import { Worker } from 'node:worker_threads';
import type { KubeObject } from '../src/apiserver/index.js';
import { GALAXY_DEFAULTS } from '../src/config/galaxy-config.js';
import { silentLogger } from '../src/log.js';
import { DEFAULT_RESOURCE } from '../src/pods/pod-facts.js';
import { startFloatip } from '../src/server.js';
import { plainKubeConfig } from './kubeconfig.js';

/** The API server in a worker thread; resolves with its URL and a way to add objects and stop it. */
export async function apiServerThread(objects: KubeObject[]) {
  const worker = new Worker(new URL('./apiserver-worker.js', import.meta.url), { workerData: { objects } });
  const url = await new Promise<string>((resolve, reject) => {
    worker.once('message', (m: { url: string }) => resolve(m.url));
    worker.once('error', reject);
  });
  const kubeConfig = plainKubeConfig(url);
  return {
    kubeConfig,
    create: (more: KubeObject[]) =>
      new Promise<void>((resolve, reject) => {
        worker.once('message', (answer: { refused?: string }) =>
          answer.refused === undefined
            ? resolve()
            : reject(new Error(`the API server refused an object: ${answer.refused}`)),
        );
        worker.postMessage({ create: more });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.postMessage({ close: true });
      }),
  };
}

/**
 * floatip on this thread against the embedded API server on its own, seeded with the kube-system
 * and `namespace` namespaces, floatip's ConfigMap holding `config`, and `objects`.
 */
export async function floatipOnApiServerThread(namespace: string, config: unknown, objects: KubeObject[]) {
  const server = await apiServerThread([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'floatingip-config', namespace: 'kube-system' },
      data: { floatingips: JSON.stringify(config) },
    },
    ...objects,
  ]);
  const floatip = await startFloatip({
    kubeConfig: server.kubeConfig,
    galaxy: GALAXY_DEFAULTS,
    resource: DEFAULT_RESOURCE,
    poolNamespace: 'kube-system',
    bind: '127.0.0.1',
    port: 0,
    log: silentLogger(),
    resyncIntervalMs: 0,
  });
  return { server, floatip };
}
