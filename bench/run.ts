// `npm run bench`: every benchmark, with the machine it ran on. Pass suite names to run only those.
import os from 'node:os';
import { benchApiServer } from './apiserver.js';
import { benchCni } from './cni.js';
import { benchCycle } from './cycle.js';
import { benchExtender } from './extender.js';
import { benchIpam } from './ipam.js';
import { benchRest } from './rest.js';
import { benchStore } from './store.js';
import type { BenchResult } from './types.js';
import { benchWatch } from './watch.js';

const suites: Record<string, () => BenchResult[] | Promise<BenchResult[]>> = {
  ipam: benchIpam,
  apiserver: benchApiServer,
  store: benchStore,
  extender: benchExtender,
  cycle: benchCycle,
  rest: benchRest,
  cni: benchCni,
  watch: benchWatch,
};

function machine(): string {
  const cpus = os.cpus();
  const gib = (os.totalmem() / 2 ** 30).toFixed(0);
  return `${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, ${gib} GiB, Node.js ${process.version}, ${os.platform()} ${os.release()}`;
}

function format(r: BenchResult): string {
  const value = r.value.toLocaleString('en');
  const target = r.target ? `  (target ${r.target}: ${r.met ? 'met' : 'NOT met'})` : '';
  return `  ${r.name.padEnd(92)} ${value.padStart(12)} ${r.unit}${target}`;
}

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !(name in suites));
if (unknown.length > 0) {
  process.stderr.write(
    `unknown benchmark suite(s): ${unknown.join(', ')}; known: ${Object.keys(suites).join(', ')}\n`,
  );
  process.exit(2);
}
process.stdout.write(`machine: ${machine()}\n`);
for (const [name, run] of Object.entries(suites)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  process.stdout.write(`${name}:\n`);
  for (const result of await run()) process.stdout.write(`${format(result)}\n`);
}
