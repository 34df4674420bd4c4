// Keeping an informer alive: client-node's informer stops for good on a watch or list error (other
// than 410 Gone), which would silently freeze a fake kubelet or a measurement.
import type { Informer, KubernetesObject } from '@kubernetes/client-node';
import { describeError } from './kube-errors.js';

export interface RunningInformer {
  stop(): Promise<void>;
}

/**
 * Starts the informer (resolving once the initial list is processed and the watch is open) and
 * restarts it after `retryMs` whenever it fails; each failure is passed to `report`. It resumes
 * from its last resourceVersion, or lists again if that has expired.
 */
export async function runInformer<T extends KubernetesObject>(
  informer: Informer<T>,
  report: (message: string) => void,
  retryMs = 500,
): Promise<RunningInformer> {
  let running = true;
  let timer: NodeJS.Timeout | undefined;
  informer.on('error', (err: unknown) => {
    if (!running) return;
    report(`watch failed, restarting in ${retryMs} ms: ${describeError(err)}`);
    timer = setTimeout(() => {
      if (running) informer.start().catch((e: unknown) => report(`restart failed: ${describeError(e)}`));
    }, retryMs);
  });
  await informer.start();
  return {
    async stop() {
      running = false;
      clearTimeout(timer);
      await informer.stop();
    },
  };
}
