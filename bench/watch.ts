// What reading one watch event costs floatip: the reflector's reader (src/kube/watch-lines.ts)
// against client-node's Watch, which it replaced, on the same stream of Deployment pods as a
// v1.20 API server writes them (managedFields and all, about 3 KiB each). The stream is written by
// a bare node:http server on a worker thread from one prepared buffer, so the reader's thread does
// nothing but read: the time until its last event is its cost. Interleaved rounds, medians.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { type KubeConfig, Watch } from '@kubernetes/client-node';
import { ApiConnection } from '../src/kube/api-connection.js';
import { shareConnections } from '../src/kube/shared-agent.js';
import { watchLines } from '../src/kube/watch-lines.js';
import { plainKubeConfig } from './kubeconfig.js';
import { deploymentPod } from './pods.js';
import type { BenchResult } from './types.js';

const EVENTS = 20_000;
const ROUNDS = 5;

/** The worker: serves every watch with the whole prepared stream, then ends it. */
function serve(): void {
  const stream = Buffer.from(
    Array.from(
      { length: EVENTS },
      (_, i) => `${JSON.stringify({ type: 'MODIFIED', object: deploymentPod(i, { bound: true }) })}\n`,
    ).join(''),
  );
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(stream);
  });
  server.listen(0, '127.0.0.1', () => {
    parentPort!.postMessage({ port: (server.address() as AddressInfo).port, bytes: stream.length });
  });
}

type Reader = 'watchLines' | 'client-node Watch';

async function readAll(kc: KubeConfig, reader: Reader): Promise<number> {
  let seen = 0;
  const began = process.hrtime.bigint();
  await new Promise<void>((resolve, reject) => {
    const onEvent = (type: string, object: unknown) => {
      // what the reflector reads of each event
      if (type && (object as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion) seen++;
    };
    if (reader === 'watchLines') {
      const request = watchLines(
        new ApiConnection(kc),
        '/api/v1/pods',
        {},
        'bench watch',
        (e) => onEvent(e.type, e.object),
        (err) => (err ? reject(err) : resolve()),
      );
      request.opened.catch(reject);
    } else {
      new Watch(kc)
        .watch('/api/v1/pods', {}, onEvent, (err) => (err ? reject(err) : resolve()))
        .catch(reject);
    }
  });
  const ms = Number(process.hrtime.bigint() - began) / 1e6;
  if (seen !== EVENTS) throw new Error(`${reader}: ${seen} of ${EVENTS} events`);
  return ms;
}

export async function benchWatch(): Promise<BenchResult[]> {
  const worker = new Worker(new URL(import.meta.url), { workerData: { serve: true } });
  const { port, bytes } = await new Promise<{ port: number; bytes: number }>((resolve) =>
    worker.once('message', resolve),
  );
  try {
    const kc = plainKubeConfig(`http://127.0.0.1:${port}`);
    shareConnections(kc);
    const readers: Reader[] = ['client-node Watch', 'watchLines'];
    const times: Record<Reader, number[]> = { watchLines: [], 'client-node Watch': [] };
    await readAll(kc, 'watchLines'); // warm both up first
    await readAll(kc, 'client-node Watch');
    for (let round = 0; round < ROUNDS; round++)
      for (const reader of round % 2 ? readers : [...readers].reverse())
        times[reader].push(await readAll(kc, reader));
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const perEvent = (reader: Reader) => Math.round((median(times[reader]) * 1000 * 10) / EVENTS) / 10;
    const size = `${EVENTS.toLocaleString('en')} pod events of ${Math.round(bytes / EVENTS).toLocaleString('en')} bytes`;
    return [
      {
        name: `watch: client-node's Watch, ${size}, per event`,
        value: perEvent('client-node Watch'),
        unit: 'µs',
      },
      {
        name: `watch: floatip's reader (watch-lines.ts), the same, per event`,
        value: perEvent('watchLines'),
        unit: 'µs',
      },
    ];
  } finally {
    await worker.terminate();
  }
}

if (!isMainThread && (workerData as { serve?: boolean } | undefined)?.serve) serve();
