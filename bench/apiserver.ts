// How fast the embedded API server is for the traffic floatip's own benchmarks put on it: FloatingIP
// creates over HTTP through client-node, events delivered to a watcher, and paging a 100,000-object list.
import { CustomObjectsApi, Watch } from '@kubernetes/client-node';
import { startApiServer, type EmbeddedApiServer, type KubeObject } from '../src/apiserver/index.js';
import type { BenchResult } from './types.js';

const FIP = { group: 'galaxy.k8s.io', version: 'v1alpha1', plural: 'floatingips' };
const FIP_PATH = '/apis/galaxy.k8s.io/v1alpha1/floatingips';

function floatingIP(index: number, keyPrefix: string): KubeObject {
  // 10.<hi>.<mid>.<lo>: distinct, valid object names for up to 16 million objects.
  const name = `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`;
  return {
    apiVersion: 'galaxy.k8s.io/v1alpha1',
    kind: 'FloatingIP',
    metadata: { name },
    spec: {
      key: `${keyPrefix}_default_web_web-${index}`,
      attribute: '{"NodeName":"demo-node-1","Uid":""}',
      policy: 1,
      updateTime: '2026-01-01T00:00:00Z',
    },
  };
}

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = process.hrtime.bigint();
  const value = await run();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

/** Counts events on one watch until `expected` have arrived. */
async function watchUntil(
  server: EmbeddedApiServer,
  resourceVersion: string,
  expected: number,
  start: () => void,
): Promise<number> {
  let seen = 0;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const began = process.hrtime.bigint();
  const controller = await new Watch(server.kubeConfig()).watch(
    FIP_PATH,
    { resourceVersion },
    (type) => {
      if (type !== 'BOOKMARK' && ++seen === expected) resolveDone();
    },
    () => resolveDone(),
  );
  start();
  await done;
  const ms = Number(process.hrtime.bigint() - began) / 1e6;
  controller.abort();
  if (seen < expected) throw new Error(`watch ended after ${seen} of ${expected} events`);
  return ms;
}

export async function benchApiServer(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  const server = await startApiServer({ seed: 'demo', historySize: 100_000, log: () => undefined });
  try {
    const custom = server.kubeConfig().makeApiClient(CustomObjectsApi);

    // Creates over HTTP, 16 in flight, as floatip's store would issue them.
    const creates = 5000;
    const concurrency = 16;
    const before = String(server.revision());
    let next = 0;
    const created = await timed(() =>
      Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < creates) {
            const i = next++;
            await custom.createClusterCustomObject({ ...FIP, body: floatingIP(i, 'http') });
          }
        }),
      ),
    );
    results.push({
      name: `apiserver: create FloatingIP over HTTP via client-node (${creates}, ${concurrency} in flight)`,
      value: Math.round(creates / (created.ms / 1000)),
      unit: 'creates/s',
    });

    // The same creates replayed to a watcher from the version before them.
    const replayMs = await watchUntil(server, before, creates, () => undefined);
    results.push({
      name: `apiserver: watch replay to one watcher (${creates} events)`,
      value: Math.round(creates / (replayMs / 1000)),
      unit: 'events/s',
    });

    // Live events: in-process writes, delivered over HTTP to one client-node watcher.
    const live = 20_000;
    const liveMs = await watchUntil(server, String(server.revision()), live, () => {
      const batch = 1000;
      let done = 0;
      const writeBatch = (): void => {
        server.createObjects(Array.from({ length: batch }, (_, k) => floatingIP(creates + done + k, 'live')));
        done += batch;
        if (done < live) setImmediate(writeBatch);
      };
      writeBatch();
    });
    results.push({
      name: `apiserver: live watch events to one watcher (${live} writes)`,
      value: Math.round(live / (liveMs / 1000)),
      unit: 'events/s',
    });

    // Page through 100,000 objects, 500 at a time, as an informer's initial list with paging would.
    const total = 100_000;
    const have = creates + live;
    for (let i = have; i < total; i += 5000) {
      server.createObjects(
        Array.from({ length: Math.min(5000, total - i) }, (_, k) => floatingIP(i + k, 'bulk')),
      );
    }
    const paged = await timed(async () => {
      let token: string | undefined;
      let count = 0;
      do {
        const page = (await custom.listClusterCustomObject({
          ...FIP,
          limit: 500,
          ...(token ? { _continue: token } : {}),
        })) as {
          items: unknown[];
          metadata: { continue?: string };
        };
        count += page.items.length;
        token = page.metadata.continue;
      } while (token);
      return count;
    });
    if (paged.value !== total)
      throw new Error(`paged list returned ${paged.value} objects, expected ${total}`);
    results.push({
      name: `apiserver: list ${total} FloatingIPs paged by 500 via client-node`,
      value: Math.round(paged.ms),
      unit: 'ms',
    });
  } finally {
    await server.close();
  }
  return results;
}
