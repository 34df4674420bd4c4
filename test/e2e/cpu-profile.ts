// Reading a V8 .cpuprofile (node --cpu-prof) for bench:e2e: where floatip's CPU time went, as self
// time per package or floatip module, and inclusive time of floatip's own functions.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Which part of the process a frame belongs to. */
function areaOf(url: string, name: string): string {
  if (url === '') {
    if (name.startsWith('(')) return name; // (garbage collector), (idle), (program)
    return `native ${name || '(anonymous)'}`;
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) return `npm ${pkg}`;
  const own = /\/dist\/(src\/.+)\.js$/.exec(url)?.[1];
  if (own) return `floatip ${own}`;
  if (url.startsWith('node:')) return url.replace(/^node:(internal\/)?/, 'node ');
  return url;
}

/**
 * `window`: CLOCK_MONOTONIC microseconds (V8's profile clock, and process.hrtime's in any process on
 * the machine), so that only the samples of the measured run count, not start-up, warm-up or the
 * releases after it.
 */
export function summarizeProfile(file: string, top = 20, window?: { from: number; to: number }): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  let time = profile.startTime;
  profile.samples.forEach((id, i) => {
    time += profile.timeDeltas[i] ?? 0;
    if (window && (time < window.from || time > window.to)) return;
    const dt = (profile.timeDeltas[i] ?? 0) / 1000; // ms
    const node = byId.get(id);
    if (!node) return;
    const { functionName, url } = node.callFrame;
    if (functionName === '(idle)') return;
    total += dt;
    const area = areaOf(url, functionName);
    self.set(area, (self.get(area) ?? 0) + dt);
    // inclusive time of floatip's own functions (each once per stack)
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (!frame || !frame.url.includes('/dist/src/')) continue;
      const key = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/.*\/dist\//, '')}:${frame.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + dt);
    }
  });
  const rows = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([k, ms]) =>
          `    ${((100 * ms) / total).toFixed(1).padStart(5)} %  ${ms.toFixed(0).padStart(6)} ms  ${k}`,
      );
  const wall = (window ? window.to - window.from : profile.endTime - profile.startTime) / 1000;
  return [
    `  sampled busy ${total.toFixed(0)} ms of ${wall.toFixed(0)} ms (wall time not idle: on a CPU, or ` +
      `runnable and waiting for one)${window ? ` from ${window.from} to ${window.to} µs` : ''}; self time by area:`,
    ...rows(self),
    `  inclusive time of floatip's functions:`,
    ...rows(inclusive),
  ].join('\n');
}
