// The tiny extender as a process of its own (test/e2e/tiny-floor.ts bundles and starts it), so that
// bench:e2e reads the floor's CPU from its process accounting as it reads floatip's. Its options
// come as JSON in argv[2]; it prints one line when it listens, and on SIGTERM closes and prints what
// it saw (calls, filter forms, bind errors) as one JSON line before it exits. On SIGUSR2 it prints
// how late its event loop ran a 10 ms timer since the last SIGUSR2 (as floatip's /metrics reports
// its own, through prom-client) and starts counting again.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { KubeConfig } from '@kubernetes/client-node';
import { startTinyExtender } from './tiny-extender.js';

const options = JSON.parse(process.argv[2] ?? '{}') as {
  recordObjects?: boolean;
  watch?: boolean | 'pods';
  port?: number;
  /** The kubeconfig to write and watch with (floatip's); the cluster's admin one without. */
  kubeconfig?: string;
};
let kubeConfig: KubeConfig | undefined;
if (options.kubeconfig) {
  kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(options.kubeconfig);
}
const tiny = await startTinyExtender({ ...options, kubeConfig });
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
process.on('SIGUSR2', () => {
  const ms = (ns: number) => (ns / 1e6).toFixed(1);
  const delay = `p50 ${ms(loop.percentile(50))}, p99 ${ms(loop.percentile(99))}, max ${ms(loop.max)} ms`;
  loop.reset();
  process.stdout.write(`${JSON.stringify({ loop: delay })}\n`);
});
process.stdout.write('listening\n');
process.once('SIGTERM', () => {
  void tiny.close().finally(() => {
    const seen = { calls: tiny.calls, filterForms: [...tiny.filterForms], bindErrors: tiny.bindErrors };
    process.stdout.write(`${JSON.stringify(seen)}\n`, () => process.exit(0));
  });
});
