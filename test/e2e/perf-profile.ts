// bench:e2e's on-CPU profile of an extender's process (FLOATIP_BENCH_E2E_PERF=1): `perf record -e
// cpu-clock -g` on its pid over the measured run, the process started with node's
// --perf-basic-prof and --interpreted-frames-native-stack so that its JavaScript frames have names.
// Unlike node --cpu-prof, which samples wall-clock time and so counts the time a process waits
// for a core as time in the function it waits in (on two cores filled by the control plane, half
// of all samples in writev), perf's cpu-clock samples a task only while it runs: each sample is CPU
// time. The summary gives, per area, the CPU-seconds of the samples with a frame of that area on
// their stack (an area's callees included, so areas overlap), per 1,000 pods.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Samples per second of CPU time. */
const FREQUENCY = 1999;

/** node's flags that name JavaScript frames for perf. */
// perf reads JavaScript's names from /tmp/perf-<pid>.map; the V8 log these flags also start is not
// needed, and would land as isolate-*.log in the directory the benchmark runs from (V8 writes a log
// named /dev/null to stdout, which is floatip's log: so a file in the temporary directory)
export const PERF_NODE_ARGS = [
  '--perf-basic-prof',
  '--interpreted-frames-native-stack',
  '--no-logfile-per-isolate',
  `--logfile=${join(tmpdir(), 'floatip-bench-perf-v8.log')}`,
];

/** The areas a sample's time counts in: every one that any frame of its stack matches. */
const AREAS: readonly (readonly [string, RegExp])[] = [
  ['JSON.parse', /Builtin_JsonParse/],
  ['JSON.stringify', /Builtin_JsonStringify/],
  ['TLS reads (watch events, answers to the writes) and what they call', /TLSWrap::OnStreamRead/],
  ['HTTP parsing (llhttp)', /llhttp__internal_execute/],
  ['the extender answers: node http server', /parserOnIncoming|node:_http_server/],
  ['socket writes (writev)', /StreamBase::Writev/],
  ['kernel', /do_syscall_64|irqentry_exit|asm_sysvec/],
  ['undici (the writes)', /node_modules\/undici\//],
  ['promise jobs (after an await)', /Builtins_RunMicrotasks/],
  ['timers', /processTimers/],
  ['setImmediate callbacks', /processImmediate/],
  ['GC on the main thread', /Heap::|Scavenger|MarkCompact/],
  ['pino (log lines)', /node_modules\/(pino|sonic-boom)\//],
  ['prom-client (metrics)', /node_modules\/prom-client\//],
  ['client-node', /node_modules\/@kubernetes\/client-node\//],
];

/** floatip's own modules (dist/src/...), by the innermost of them on a sample's stack. */
const OWN = /file:\/\/\/.*\/dist\/src\/(.+?\.js)/;

/**
 * Where a sample's work began: the outermost of these on its stack (each callback's stack starts at
 * the event loop). Calls read on the extender's port run node's HTTP parser; the API server's
 * answers and watch events arrive as TLS reads.
 */
const SOURCES: readonly (readonly [string, RegExp])[] = [
  ["the extender's calls", /Parser::OnStreamRead/],
  ['TLS reads', /TLSWrap::OnStreamRead/],
  ['setImmediate', /CheckImmediate|processImmediate/],
  ['new connections', /ConnectionWrap<.*>::OnConnection/],
];

/** Native work below JavaScript that any extender pays for what it reads and writes. */
const SHARED_NATIVE = /Builtin_JsonParse|Builtin_JsonStringify|llhttp__internal_execute|StreamBase::Writev/;

export interface PerfRecording {
  stop(): Promise<void>;
}

/** Starts recording `pid`'s on-CPU stacks into `file`; stop() ends it and waits for perf to write it. */
export function recordCpu(pid: number, file: string): PerfRecording {
  const perf: ChildProcess = spawn(
    'perf',
    ['record', '-e', 'cpu-clock', '-F', String(FREQUENCY), '-g', '-p', String(pid), '-o', file],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const said: string[] = [];
  perf.stderr!.on('data', (d: Buffer) => said.push(d.toString()));
  const exited = new Promise<string>((resolve, reject) => {
    perf.once('error', (err) => reject(new Error(`perf record: ${err.message} (is linux-perf installed?)`)));
    perf.once('exit', (code, signal) => resolve(signal ?? String(code)));
  });
  return {
    async stop() {
      perf.kill('SIGINT');
      // perf writes its file and ends by the signal it was sent
      const end = await exited;
      if (end !== 'SIGINT' && end !== '0')
        throw new Error(`perf record ended with ${end}: ${said.join('').slice(-1000)}`);
    },
  };
}

interface Sample {
  readonly thread: string;
  readonly frames: string[];
}

/** `perf script`'s text: a header line per sample, then its frames innermost first, then a blank line. */
function samplesOf(text: string): Sample[] {
  const samples: Sample[] = [];
  let current: Sample | undefined;
  for (const line of text.split('\n')) {
    if (line.trim() === '') {
      if (current) samples.push(current);
      current = undefined;
    } else if (!/^\s/.test(line)) {
      current = { thread: line.trim().split(/\s+/)[1] ?? '', frames: [] };
    } else if (current) {
      // "  7f96cff38e9c JS:~removeAt node:internal/priority_queue:89:11+0xdc (/tmp/perf-7444.map)"
      const frame = line.trim().replace(/^[0-9a-f]+ /, '');
      current.frames.push(frame.replace(/\+0x[0-9a-f]+ \(.*\)$/, ''));
    }
  }
  if (current) samples.push(current);
  return samples;
}

/** The summary of a recording, per 1,000 pods of a run of `pods`. */
export async function summarizePerf(file: string, pods: number, top = 12): Promise<string> {
  const { stdout } = await promisify(execFile)('perf', ['script', '-i', file], { maxBuffer: 2 ** 30 });
  const samples = samplesOf(stdout);
  const perThread = new Map<string, number>();
  for (const s of samples) perThread.set(s.thread, (perThread.get(s.thread) ?? 0) + 1);
  const main = [...perThread].sort((a, b) => b[1] - a[1])[0]?.[0];
  const seconds = (n: number) => ((n / FREQUENCY) * 1000) / pods;
  const areas = new Map<string, number>();
  const own = new Map<string, number>();
  const sources = new Map<string, number>();
  let ownCode = 0;
  let mainSamples = 0;
  for (const s of samples) {
    if (s.thread !== main) continue;
    mainSamples++;
    for (const [area, re] of AREAS)
      if (s.frames.some((f) => re.test(f))) areas.set(area, (areas.get(area) ?? 0) + 1);
    const module = s.frames.map((f) => OWN.exec(f)?.[1]).find((m) => m !== undefined);
    if (module) own.set(module, (own.get(module) ?? 0) + 1);
    // frames are innermost first: the last that names a source is where the stack began
    const outermost = [...s.frames].reverse().find((f) => SOURCES.some(([, re]) => re.test(f)));
    const began = SOURCES.find(([, re]) => outermost !== undefined && re.test(outermost))?.[0] ?? 'the rest';
    sources.set(began, (sources.get(began) ?? 0) + 1);
    // floatip's own JavaScript: the innermost JavaScript frame is floatip's, with no parse, JSON or
    // socket write under it (those any extender pays for the same bytes)
    const innermostJs = s.frames.find((f) => f.startsWith('JS:'));
    if (innermostJs && OWN.test(innermostJs) && !s.frames.some((f) => SHARED_NATIVE.test(f))) ownCode++;
  }
  const line = (entries: Map<string, number>) =>
    [...entries]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([what, n]) => `${what} ${seconds(n).toFixed(2)}`)
      .join(', ');
  return [
    `  ${file}: CPU-s per 1,000 pods sampled: main thread ${seconds(mainSamples).toFixed(2)}, ` +
      `other threads (V8's compiler and GC helpers, libuv) ${seconds(samples.length - mainSamples).toFixed(2)}`,
    `    by area (inclusive, overlapping): ${line(areas)}`,
    `    by where the work began (each sample once): ${line(sources)}`,
    ...(own.size > 0
      ? [
          `    floatip's own JavaScript (innermost frame in dist/src, no JSON, HTTP parsing or socket ` +
            `write under it): ${seconds(ownCode).toFixed(3)}`,
        ]
      : []),
    ...(own.size > 0 ? [`    by floatip module (innermost on the stack): ${line(own)}`] : []),
  ].join('\n');
}
