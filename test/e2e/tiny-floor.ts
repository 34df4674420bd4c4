// bench:e2e's floors (tiny-crd, tiny-crd-full) as child processes: test/e2e/tiny-floor-main.ts
// bundled by esbuild next to dist/ (the packages stay in node_modules) and started with node, so
// that the floor's CPU is its own process's, read from /proc like floatip's, rather than the
// difference of the benchmark process between runs (which also held jest and the harness's own work).
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { build } from 'esbuild';
import { floatipKubeconfig, REPO_ROOT } from './floatip.js';

export interface TinyFloorSeen {
  readonly calls: Record<'filter' | 'prioritize' | 'bind' | 'preempt' | 'other', number>;
  readonly filterForms: ('Nodes' | 'NodeNames')[];
  readonly bindErrors: string[];
}

export interface TinyFloor {
  readonly pid: number;
  /**
   * How late its event loop ran a 10 ms timer since the last call ("p50 10.1, p99 12.0, max 15.2
   * ms"), counted afresh from now on (SIGUSR2).
   */
  loopDelay(): Promise<string>;
  /** SIGTERM; resolves with what it saw once it exited. */
  stop(): Promise<TinyFloorSeen>;
}

const BUNDLE = join(REPO_ROOT, 'dist/test/tiny-floor.mjs');
let bundled: Promise<unknown> | undefined;

export async function startTinyFloor(
  options: { recordObjects?: boolean; watch?: boolean | 'pods'; nodeArgs?: readonly string[] } = {},
): Promise<TinyFloor> {
  bundled ??= build({
    entryPoints: [join(REPO_ROOT, 'test/e2e/tiny-floor-main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile: BUNDLE,
    logLevel: 'warning',
  });
  await bundled;
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      BUNDLE,
      // floatip's own credentials (its ServiceAccount's token), not the admin's client certificate:
      // the API server authenticates and authorizes each write by who makes it, and the floor's
      // writes must cost it what floatip's do
      JSON.stringify({
        recordObjects: options.recordObjects,
        watch: options.watch,
        kubeconfig: floatipKubeconfig(),
      }),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: process.env,
    },
  );
  const stderr: string[] = [];
  child.stderr!.on('data', (d: Buffer) => stderr.push(d.toString()));
  const lines = createInterface({ input: child.stdout! });
  // 'close', not 'exit': by then its stdout has been read to the end
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const said: string[] = [];
  const loopReadings: ((delay: string) => void)[] = [];
  const listening = new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => {
      if (line.startsWith('{"loop":')) {
        loopReadings.shift()?.((JSON.parse(line) as { loop: string }).loop);
        return;
      }
      said.push(line);
      if (line === 'listening') resolve();
    });
    void exited.then((code) =>
      reject(new Error(`tiny floor exited (${code}) before listening: ${stderr.join('').slice(-2000)}`)),
    );
  });
  await listening;
  return {
    pid: child.pid!,
    loopDelay() {
      // a floor that has exited answers no signal: its reading fails rather than hangs the bench
      const reading = new Promise<string>((resolve) => loopReadings.push(resolve));
      child.kill('SIGUSR2');
      const gone = exited.then((code) => {
        throw new Error(`tiny floor exited (${code}) before its loop reading`);
      });
      gone.catch(() => undefined); // the floor's later, normal exit is no one's error
      return Promise.race([reading, gone]);
    },
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      const last = said.at(-1) ?? '';
      if (code !== 0 || !last.startsWith('{'))
        throw new Error(`tiny floor ended with ${code}: ${last} ${stderr.join('').slice(-2000)}`);
      return JSON.parse(last) as TinyFloorSeen;
    },
  };
}
