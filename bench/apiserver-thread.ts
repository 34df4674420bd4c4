// The embedded API server on a worker thread (apiserver-worker.ts), as a real one is its own
// process: a benchmark then measures floatip's work, not the API server's.
import { Worker } from 'node:worker_threads';
import type { KubeObject } from '../src/apiserver/index.js';
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
      new Promise<void>((resolve) => {
        worker.once('message', () => resolve());
        worker.postMessage({ create: more });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.postMessage({ close: true });
      }),
  };
}
