// Cold start of the FloatingIP store: list every object from the embedded API server (paged),
// restore the allocator, and have the watch open, with 10,000 and 100,000 objects.
import { startApiServer, type KubeObject } from '../src/apiserver/index.js';
import { Allocator, parsePoolConfig } from '../src/ipam/index.js';
import { ensureCrds } from '../src/kube/crds.js';
import { CustomResourceClient } from '../src/kube/custom-resources.js';
import { silentLogger } from '../src/log.js';
import { FLOATING_IP_PLURAL, GROUP, VERSION } from '../src/store/floating-ip-object.js';
import { FloatingIPStore } from '../src/store/floating-ip-store.js';
import type { BenchResult } from './types.js';

// a /14 holds 100,000 addresses from 10.4.0.1 up
const CONFIG = parsePoolConfig([
  {
    nodeSubnets: ['10.1.0.0/24'],
    ips: ['10.4.0.1~10.7.255.254'],
    subnet: '10.4.0.0/14',
    gateway: '10.4.0.0',
  },
]);

function floatingIP(i: number): KubeObject {
  const n = 0x0a040001 + i;
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'FloatingIP',
    metadata: { name: `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}` },
    spec: {
      key: `dp_default_app-${i % 300}_app-${i % 300}-5d8f7c9b4-${i.toString(36)}`,
      attribute: `{"NodeName":"node-${i % 50}","Uid":"0f4c2b1e-8d3a-4c7e-9b1a-${i.toString(16).padStart(12, '0')}"}`,
      policy: 1,
      updateTime: '2026-01-01T00:00:00Z',
    },
  };
}

async function coldStart(objects: number, targetMs: number): Promise<BenchResult> {
  const server = await startApiServer({ port: 0, seed: 'none', log: () => undefined });
  try {
    const kubeConfig = server.kubeConfig();
    await ensureCrds(kubeConfig);
    server.createObjects(Array.from({ length: objects }, (_, i) => floatingIP(i)));
    const runs: number[] = [];
    for (let r = 0; r < 3; r++) {
      const store = new FloatingIPStore(
        new CustomResourceClient(kubeConfig, { group: GROUP, version: VERSION, plural: FLOATING_IP_PLURAL }),
        kubeConfig,
        new Allocator(CONFIG),
        silentLogger(),
      );
      const start = process.hrtime.bigint();
      const report = await store.start();
      runs.push(Number(process.hrtime.bigint() - start) / 1e6);
      await store.stop();
      if (report.loaded !== objects) throw new Error(`cold start loaded ${report.loaded} of ${objects}`);
    }
    const best = Math.min(...runs);
    return {
      name: `cold start with ${objects.toLocaleString('en')} FloatingIP objects (list + restore + watch)`,
      value: Math.round(best),
      unit: 'ms',
      target: `< ${targetMs.toLocaleString('en')} ms`,
      met: best < targetMs,
    };
  } finally {
    await server.close();
  }
}

export async function benchStore(): Promise<BenchResult[]> {
  return [await coldStart(10_000, 1000), await coldStart(100_000, 5000)];
}
