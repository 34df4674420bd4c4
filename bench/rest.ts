// GET /v1/ip over HTTP with 100,000 allocations: how long one call takes, for the unfiltered list
// (a walk of the address space, independent of the count), for filters that select every
// allocation (a bounded heap near the front, a full sort deep inside), and for one app.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { restApp } from '../src/api/index.js';
import { Allocator, ReleasePolicy, parsePoolConfig } from '../src/ipam/index.js';
import { silentLogger } from '../src/log.js';
import { DecisionLocks } from '../src/store/decision-locks.js';
import type { BenchResult } from './types.js';

const ALLOCATIONS = 100_000;

const CONFIG = parsePoolConfig([
  {
    nodeSubnets: ['10.1.0.0/24'],
    ips: ['10.4.0.1~10.7.255.254'],
    subnet: '10.4.0.0/14',
    gateway: '10.4.0.0',
  },
]);

export async function benchRest(): Promise<BenchResult[]> {
  const allocator = new Allocator(CONFIG);
  for (let i = 0; i < ALLOCATIONS; i++) {
    allocator.allocate({
      key: `dp_ns${i % 20}_app-${i % 300}_app-${i % 300}-5d8f7c9b4-${i.toString(36)}`,
      nodeSubnet: '10.1.0.0/24',
      attrs: { policy: ReleasePolicy.Immutable, nodeName: `node-${i % 50}`, podUid: `uid-${i}` },
    });
  }
  const app = restApp({
    allocator,
    store: {} as never,
    pods: { cached: () => undefined, find: () => Promise.resolve(undefined) },
    pools: {} as never,
    locks: new DecisionLocks(),
    events: { record: () => undefined },
    log: silentLogger(),
  });
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const cases: [string, string, number][] = [
    ['unfiltered, first page', '/v1/ip', 10],
    ['unfiltered, page 5,000', '/v1/ip?page=5000', 10],
    ['unfiltered, sorted by pod name', '/v1/ip?sort=podname', 300],
    ['keyword matching all 100,000, first page, IP order', '/v1/ip?keyword=app', 300],
    [
      'keyword matching all 100,000, page 9,000, namespace desc',
      '/v1/ip?keyword=app&page=9000&sort=namespace%20desc',
      500,
    ],
    ['one namespace (5,000 of 100,000), by parts', '/v1/ip?namespace=ns7', 300],
    ['one app (333 IPs), by its key prefix', '/v1/ip?namespace=ns7&appName=app-7&appType=deployment', 20],
    [
      'one pod, by its exact key',
      '/v1/ip?namespace=ns7&appName=app-7&appType=deployment&podName=app-7-5d8f7c9b4-7',
      10,
    ],
    ['unfiltered, a page of 9,999', '/v1/ip?size=9999', 300],
  ];
  const results: BenchResult[] = [];
  try {
    for (const [name, path, targetMs] of cases) {
      const runs: number[] = [];
      for (let r = 0; r < 5; r++) {
        const start = process.hrtime.bigint();
        const res = await fetch(`${url}${path}`);
        if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
        runs.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
      const best = Math.min(...runs);
      results.push({
        name: `GET /v1/ip with ${ALLOCATIONS.toLocaleString('en')} allocations: ${name}`,
        value: Math.round(best * 10) / 10,
        unit: 'ms',
        target: `< ${targetMs} ms`,
        met: best < targetMs,
      });
    }
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return results;
}
