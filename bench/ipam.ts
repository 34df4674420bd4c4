// Benchmarks of the pure IPAM core (issue: foundation and IPAM core).
import { Allocator, type Attrs, ReleasePolicy, parsePoolConfig } from '../src/ipam/index.js';
import type { BenchResult } from './types.js';

const NODES = '10.1.0.0/24';
const ATTRS: Attrs = { policy: ReleasePolicy.Immutable, nodeName: 'node-1', podUid: '' };

// a /16 entry: 65,534 usable addresses
const SLASH16 = parsePoolConfig([
  { nodeSubnets: [NODES], ips: ['10.0.0.1~10.0.255.254'], subnet: '10.0.0.0/16', gateway: '10.0.0.0' },
]);
// a /14 for the 100,000-allocation cases
const SLASH14 = parsePoolConfig([
  { nodeSubnets: [NODES], ips: ['10.4.0.1~10.7.255.254'], subnet: '10.4.0.0/14', gateway: '10.4.0.0' },
]);

/** Keys shaped like real ones: Deployment pods of a few hundred apps. */
const keyOf = (i: number): string =>
  `dp_default_app-${i % 300}_app-${i % 300}-5d8f7c9b4-${(i * 7919).toString(36)}`;

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Runs `op` repeatedly for about `ms` milliseconds (after a warm-up) and returns operations per second. */
function rate(op: (i: number) => void, ms = 1000): number {
  for (let i = 0; i < 20_000; i++) op(i);
  let n = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ms) * 1_000_000n;
  let now = start;
  while (now < deadline) {
    for (let k = 0; k < 1000; k++) op(n++);
    now = process.hrtime.bigint();
  }
  return n / (Number(now - start) / 1e9);
}

function filled(fraction: number): Allocator {
  const allocator = new Allocator(SLASH16);
  const total = 65534;
  for (let i = 0; i < total; i++) allocator.allocate({ key: keyOf(i), nodeSubnet: NODES, attrs: ATTRS });
  // free a random set so that the used fraction is exact and the free addresses are scattered
  const rnd = random(1);
  const all = [...allocator.all()];
  for (let i = all.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [all[i], all[j]] = [all[j]!, all[i]!];
  }
  for (const a of all.slice(0, Math.round(total * (1 - fraction)))) allocator.release(a.ip, { key: a.key });
  return allocator;
}

function allocateRelease(fraction: number): BenchResult {
  const allocator = filled(fraction);
  const keys = Array.from({ length: 1024 }, (_, i) => `sts_bench_web_web-${i}`);
  const ops = rate((i) => {
    const key = keys[i & 1023]!;
    const [a] = allocator.allocate({ key, nodeSubnet: NODES, attrs: ATTRS });
    allocator.release(a!.ip, { key });
  });
  const target = fraction >= 0.99 ? '>= 1,000,000 ops/s' : undefined;
  return {
    name: `allocate+release in a /16 at ${Math.round(fraction * 100)} % used`,
    value: Math.round(ops),
    unit: 'ops/s',
    ...(target ? { target, met: ops >= 1_000_000 } : {}),
  };
}

function keyLookup(allocations: number): BenchResult {
  const allocator = new Allocator(SLASH14);
  for (let i = 0; i < allocations; i++)
    allocator.allocate({ key: keyOf(i), nodeSubnet: NODES, attrs: ATTRS });
  const keys = Array.from({ length: 4096 }, (_, i) => keyOf((i * 104729) % allocations));
  let found = 0;
  const ops = rate((i) => {
    found += allocator.byKey(keys[i & 4095]!).length;
  });
  if (found === 0) throw new Error('lookup found nothing');
  return {
    name: `key lookup among ${allocations.toLocaleString('en')} allocations`,
    value: Math.round(ops),
    unit: 'ops/s',
  };
}

function prefixLookup(allocations: number): BenchResult {
  const allocator = new Allocator(SLASH14);
  for (let i = 0; i < allocations; i++)
    allocator.allocate({ key: keyOf(i), nodeSubnet: NODES, attrs: ATTRS });
  // one app's prefix: what filter counts for a Deployment with a non-default policy
  let found = 0;
  const ops = rate((i) => {
    found += allocator.countByPrefix(`dp_default_app-${i % 300}_`);
  }, 500);
  if (found === 0) throw new Error('prefix count found nothing');
  return {
    name: `app prefix count among ${allocations.toLocaleString('en')} allocations`,
    value: Math.round(ops),
    unit: 'ops/s',
  };
}

function restore(): BenchResult {
  const source = new Allocator(SLASH14);
  for (let i = 0; i < 100_000; i++) {
    source.allocate({ key: keyOf(i), nodeSubnet: NODES, attrs: { ...ATTRS, podUid: `uid-${i}` } });
  }
  const records = [...source.all()].map((a) => ({ ...a }));
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const target = new Allocator(SLASH14);
    const start = process.hrtime.bigint();
    const report = target.restore(records);
    runs.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (report.loaded !== 100_000) throw new Error(`restored ${report.loaded}`);
  }
  const best = Math.min(...runs);
  return {
    name: 'restore 100,000 records',
    value: round(best),
    unit: 'ms',
    target: '< 300 ms',
    met: best < 300,
  };
}

function configureSlash64(): BenchResult {
  const text = JSON.stringify([
    {
      nodeSubnets: ['10.1.0.0/24', 'fd00:1::/64'],
      ips: ['fd00:100::~fd00:100::ffff:ffff:ffff:ffff'],
      subnet: 'fd00:100::/64',
      gateway: 'fd00:100::1',
    },
  ]);
  let allocator: Allocator | undefined;
  const ops = rate(() => {
    allocator = new Allocator(parsePoolConfig(text));
  }, 500);
  if (allocator!.stats()[0]!.total !== 2n ** 64n) throw new Error('wrong size');
  const micros = 1e6 / ops;
  return {
    name: 'parse and configure a /64 IPv6 entry',
    value: round(micros),
    unit: 'µs',
    target: 'well under 1 ms',
    met: micros < 100,
  };
}

function heapPerAllocation(): BenchResult[] {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  const n = 100_000;
  // the caller's strings exist before the allocator sees them; what the allocator adds is its cost
  const keys = Array.from({ length: n }, (_, i) => keyOf(i));
  const uids = Array.from(
    { length: n },
    (_, i) => `0f4c2b1e-8d3a-4c7e-9b1a-${i.toString(16).padStart(12, '0')}`,
  );
  gc();
  const before = process.memoryUsage().heapUsed;
  const allocator = new Allocator(SLASH14);
  for (let i = 0; i < n; i++) {
    allocator.allocate({ key: keys[i]!, nodeSubnet: NODES, attrs: { ...ATTRS, podUid: uids[i]! } });
  }
  gc();
  const own = (process.memoryUsage().heapUsed - before) / n;
  const strings = (keys.reduce((s, k) => s + k.length, 0) + uids.reduce((s, u) => s + u.length, 0)) / n;
  if (allocator.size !== n) throw new Error('lost allocations');
  return [
    {
      name: 'heap per allocation, 100,000 allocations (the allocator’s own: record, address text, indexes)',
      value: Math.round(own),
      unit: 'bytes',
      target: '< 300 bytes',
      met: own < 300,
    },
    {
      name: 'for scale: the key and pod UID text the caller passes in, per allocation',
      value: Math.round(strings + 2 * 16),
      unit: 'bytes (approx.)',
    },
  ];
}

const round = (x: number): number => Math.round(x * 100) / 100;

export function benchIpam(): BenchResult[] {
  return [
    allocateRelease(0),
    allocateRelease(0.5),
    allocateRelease(0.99),
    keyLookup(1_000),
    keyLookup(100_000),
    prefixLookup(100_000),
    restore(),
    configureSlash64(),
    ...heapPerAllocation(),
  ];
}
