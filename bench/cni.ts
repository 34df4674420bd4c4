// floatip-cni on the pod start path: ADD and DEL p50/p99 from spawn to exit (Node.js start
// included), the API server local, through the macvlan delegate, in real network namespaces; next
// to a bare Node.js start and the delegate run alone with the same static IPAM. Needs root and
// Debian's containernetworking-plugins (test/cni/setup.ts installs them for the tests).
import { execFile, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { promisify } from 'node:util';
import type { BenchResult } from './types.js';

const exec = promisify(execFile);
const RUNS = Number(process.env.FLOATIP_BENCH_CNI_RUNS ?? 60);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function benchCni(): Promise<BenchResult[]> {
  try {
    accessSync('/usr/lib/cni/macvlan', constants.X_OK);
    if (process.getuid?.() !== 0) throw new Error('not root');
  } catch {
    process.stdout.write('  (skipped: needs root and /usr/lib/cni from containernetworking-plugins)\n');
    return [];
  }
  const prefix = `fcb${process.pid % 100000}`;
  const [nodeNs, peerNs, podNs, master] = [`${prefix}-node`, `${prefix}-peer`, `${prefix}-pod`, `${prefix}m`];
  const namespaces = [nodeNs, peerNs, podNs];
  try {
    for (const ns of namespaces) {
      await exec('ip', ['netns', 'add', ns]);
      await exec('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    }
    await exec('ip', [
      'link',
      'add',
      master,
      'netns',
      nodeNs,
      'type',
      'veth',
      'peer',
      'name',
      `${prefix}p`,
      'netns',
      peerNs,
    ]);
    await exec('ip', ['-n', nodeNs, 'link', 'set', master, 'up']);
    // a master without carrier would hold IPv6 DAD, and so each dual-stack ADD, for 10 s
    await exec('ip', ['-n', peerNs, 'link', 'set', `${prefix}p`, 'up']);
    const worker = new URL('./cni-worker.js', import.meta.url).pathname;
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        'ip',
        ['netns', 'exec', nodeNs, process.execPath, worker, master, podNs, String(RUNS)],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0 ? resolve(text) : reject(new Error(`bench/cni-worker exited ${code}`)),
      );
    });
    const samples = JSON.parse(out) as Record<string, number[]>;
    return Object.entries(samples).flatMap(([name, times]) => {
      const sorted = [...times].sort((a, b) => a - b);
      const round = (x: number) => Math.round(x * 10) / 10;
      return [
        { name: `${name} (${sorted.length} runs): p50`, value: round(percentile(sorted, 50)), unit: 'ms' },
        { name: `${name} (${sorted.length} runs): p99`, value: round(percentile(sorted, 99)), unit: 'ms' },
      ];
    });
  } finally {
    for (const ns of namespaces) await exec('ip', ['netns', 'del', ns]).catch(() => undefined);
  }
}
