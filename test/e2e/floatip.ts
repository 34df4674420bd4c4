// floatip itself, as the real binary: `node dist/src/main.js serve` as a child process against the
// e2e cluster (globalSetup builds dist/ first). Start, stop (SIGTERM), kill (SIGKILL), wait for
// /readyz, and its log: kept in memory for failure messages and written to the run directory.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../harness/free-port.js';
import { extenderPort, loadCluster, runDir } from './cluster.js';
import { sleep } from './wait.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const FLOATIP_MAIN = join(REPO_ROOT, 'dist/src/main.js');

export interface LeaderElection {
  /** Go durations, e.g. "3s". */
  readonly leaseDuration: string;
  readonly renewDeadline: string;
  readonly retryPeriod: string;
}

export interface FloatipOptions {
  /** Names the log file (`<run dir>/floatip-<name>.log`) and the process in failure messages. */
  readonly name?: string;
  /** The extender port; default the suite's (where the scheduler calls); 0: a free port floatip picks. */
  readonly port?: number;
  /** Default off (`--leader-elect=false`): one replica that always leads. */
  readonly leaderElect?: false | LeaderElection;
  /** Default 5s, so leaks (two passes) are collected within a scenario's patience. */
  readonly resyncInterval?: string;
  /** Default info. */
  readonly logLevel?: string;
  /** More flags. */
  readonly args?: readonly string[];
  /** Flags for node itself, e.g. `--cpu-prof`. */
  readonly nodeArgs?: readonly string[];
  /** A plain health port (`--health-port`): probed instead of the extender port (mTLS). */
  readonly healthPort?: number;
  /** The extender port serves TLS (`--tls-cert-file`): its URL is https. */
  readonly tls?: boolean;
  /** Default the cluster's admin kubeconfig; e.g. one through a fault proxy. */
  readonly kubeconfig?: string;
}

/**
 * The kubeconfig floatip runs with: its ServiceAccount's (global-setup.ts writes it, after applying
 * the shipped RBAC), so the suite shows a permission the manifests lack; else the admin's.
 */
export function floatipKubeconfig(): string {
  const sa = join(runDir(), 'floatip-sa.kubeconfig');
  return existsSync(sa) ? sa : loadCluster().KUBECONFIG;
}

export const FAST_LEADER_ELECTION: LeaderElection = {
  leaseDuration: '3s',
  renewDeadline: '2s',
  retryPeriod: '500ms',
};

/** Every process started and not yet exited, so a scenario's failure can show their logs. */
const live = new Set<FloatipProcess>();
// never leave a floatip behind on the suite's ports, whatever way the test process ends
process.once('exit', () => live.forEach((p) => p.killNow()));
let counter = 0;

/** One `floatip serve` process. */
export class FloatipProcess {
  readonly name: string;
  readonly logFile: string;
  /** Exits with code/signal; never rejects. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private readonly lines: { at: number; text: string }[] = [];
  private readonly log: WriteStream;
  private partial = '';
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private boundPort: number | undefined;
  private readonly healthPort: number | undefined;
  private readonly scheme: 'http' | 'https';

  private constructor(
    readonly args: readonly string[],
    options: FloatipOptions,
    readonly apiPort: number | undefined,
  ) {
    this.name = `${options.name ?? 'floatip'}-${++counter}`;
    this.logFile = join(runDir(), `floatip-${this.name}.log`);
    this.log = createWriteStream(this.logFile);
    this.log.write(`# node ${[...(options.nodeArgs ?? []), FLOATIP_MAIN, ...args].join(' ')}\n`);
    if (options.port) this.boundPort = options.port;
    this.healthPort = options.healthPort;
    this.scheme = options.tls ? 'https' : 'http';
    this.child = spawn(process.execPath, [...(options.nodeArgs ?? []), FLOATIP_MAIN, ...args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    this.child.stdout?.on('data', (chunk: Buffer) => this.take(chunk));
    this.child.stderr?.on('data', (chunk: Buffer) => this.take(chunk));
    live.add(this);
    this.exited = new Promise((resolve) => {
      const done = (code: number | null, signal: NodeJS.Signals | null) => {
        if (this.exit) return;
        this.exit = { code, signal };
        live.delete(this);
        this.take(Buffer.from(`\n# exited: code ${code} signal ${signal}\n`));
        this.log.end();
        resolve(this.exit);
      };
      this.child.on('exit', done);
      this.child.on('error', (err) => {
        this.take(Buffer.from(`\n# spawn failed: ${err.message}\n`));
        done(null, null);
      });
    });
  }

  /** Starts a process; resolves when it is spawned (not yet listening: see ready()). */
  static async start(options: FloatipOptions = {}): Promise<FloatipProcess> {
    if (!existsSync(FLOATIP_MAIN)) {
      throw new Error(`${FLOATIP_MAIN} is missing: run \`npm run build\` (the e2e globalSetup does)`);
    }
    const port = options.port ?? extenderPort();
    const le = options.leaderElect ?? false;
    const apiPort = supportsApiPort() ? await freePort() : undefined;
    const args = [
      'serve',
      '--kubeconfig',
      options.kubeconfig ?? floatipKubeconfig(),
      '--bind',
      '127.0.0.1',
      '--port',
      String(port),
      ...(apiPort !== undefined ? ['--api-port', String(apiPort)] : []),
      `--resync-interval=${options.resyncInterval ?? '5s'}`,
      `--log-level=${options.logLevel ?? 'info'}`,
      ...(le
        ? [
            '--leader-elect=true',
            `--leader-elect-lease-duration=${le.leaseDuration}`,
            `--leader-elect-renew-deadline=${le.renewDeadline}`,
            `--leader-elect-retry-period=${le.retryPeriod}`,
          ]
        : ['--leader-elect=false']),
      ...(options.healthPort !== undefined ? [`--health-port=${options.healthPort}`] : []),
      ...(options.args ?? []),
    ];
    return new FloatipProcess(args, options, apiPort);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  /** The extender port, once known (given, or read from the "listening" log line). */
  get port(): number | undefined {
    return this.boundPort;
  }

  get url(): string {
    if (this.boundPort === undefined) throw new Error(`${this.name}: not listening yet`);
    return `${this.scheme}://127.0.0.1:${this.boundPort}`;
  }

  /** Where /readyz and /healthz are asked: the health port if any, else the extender port. */
  private get probeUrl(): string {
    return this.healthPort !== undefined ? `http://127.0.0.1:${this.healthPort}` : this.url;
  }

  /** GET /readyz: 200 when this replica answers the scheduler (every replica with a configuration, not shutting down). */
  async isReady(): Promise<boolean> {
    if (!this.running || this.boundPort === undefined) return false;
    try {
      const res = await fetch(`${this.probeUrl}/readyz`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      return res.status === 200;
    } catch {
      return false;
    }
  }

  /** GET /healthz answers: the process is up and listening (leader or follower). */
  async isListening(): Promise<boolean> {
    if (!this.running || this.boundPort === undefined) return false;
    try {
      const res = await fetch(`${this.probeUrl}/healthz`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      return res.status === 200;
    } catch {
      return false;
    }
  }

  /** Waits until /readyz answers 200 (or, with `{ listening: true }`, until it listens at all). */
  async ready(options: { timeoutMs?: number; listening?: boolean } = {}): Promise<this> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.running) {
        throw new Error(
          `${this.name} exited (${JSON.stringify(this.exit)}) before it was ready\n${this.tail()}`,
        );
      }
      if (options.listening ? await this.isListening() : await this.isReady()) return this;
      if (Date.now() > deadline) {
        throw new Error(
          `${this.name} not ${options.listening ? 'listening' : 'ready'} after ${timeoutMs} ms\n${this.tail()}`,
        );
      }
      await sleep(100);
    }
  }

  /** SIGTERM (graceful: drains binds, releases the lease) and waits for the exit; SIGKILL after 15 s. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(timer);
  }

  /** SIGKILL: no shutdown at all, as a crashed or OOM-killed process. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGKILL without waiting (the test process is exiting). */
  killNow(): void {
    if (this.running) this.child.kill('SIGKILL');
  }

  /** Parsed log records (pino JSON lines) whose msg contains `text`. */
  records(text: string): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    for (const { text: line } of this.lines) {
      if (!line.includes(text)) continue;
      try {
        const record = JSON.parse(line) as Record<string, unknown>;
        if (typeof record.msg === 'string' && record.msg.includes(text)) out.push(record);
      } catch {
        // not a JSON line
      }
    }
    return out;
  }

  /** The last `count` log lines (since `since`, a Date.now() value), for a failure message. */
  tail(count = 40, since = 0): string {
    const lines = this.lines.filter((l) => l.at >= since).slice(-count);
    return [
      `--- ${this.name} (pid ${this.pid}, ${this.running ? 'running' : `exited ${JSON.stringify(this.exit)}`}), ` +
        `last ${lines.length} lines; all in ${this.logFile}`,
      ...lines.map((l) => l.text),
    ].join('\n');
  }

  private take(chunk: Buffer): void {
    this.log.write(chunk);
    const text = this.partial + chunk.toString();
    const parts = text.split('\n');
    this.partial = parts.pop() ?? '';
    const now = Date.now();
    for (const line of parts) {
      if (line === '') continue;
      this.lines.push({ at: now, text: line });
      if (this.boundPort === undefined && line.includes('scheduler extender listening')) {
        const url = /"url":"([^"]+)"/.exec(line)?.[1];
        if (url) this.boundPort = Number(new URL(url).port);
      }
    }
    // bounded: a scale run logs thousands of lines (the file has them all)
    if (this.lines.length > 5000) this.lines.splice(0, this.lines.length - 4000);
  }
}

/** Every floatip process still running. */
export function liveFloatips(): FloatipProcess[] {
  return [...live];
}

/** Stops every process a test started (afterAll's safety net). */
export async function stopAllFloatips(): Promise<void> {
  await Promise.all([...live].map((p) => p.stop()));
}

/**
 * A scenario: a jest test whose failure message carries the log tail of every floatip process that
 * ran during it, so a failing scenario names itself and shows what floatip did.
 */
export function scenario(name: string, fn: () => Promise<void>, timeoutMs?: number): void {
  test(
    name,
    async () => {
      const since = Date.now();
      const seen = new Set(live);
      const track = setInterval(() => live.forEach((p) => seen.add(p)), 200);
      try {
        await fn();
      } catch (err) {
        live.forEach((p) => seen.add(p));
        const logs = [...seen].map((p) => p.tail(60, since)).join('\n');
        if (err instanceof Error) {
          err.message = `${err.message}\n\nfloatip logs during ${name.split(' ')[0]}:\n${logs}`;
          throw err;
        }
        throw new Error(`${String(err)}\n\nfloatip logs during ${name.split(' ')[0]}:\n${logs}`);
      } finally {
        clearInterval(track);
      }
    },
    timeoutMs,
  );
}

let apiPortFlag: boolean | undefined;

/** Whether this build has the REST API's `--api-port` flag (issue 8; not merged everywhere yet). */
export function supportsApiPort(): boolean {
  if (apiPortFlag === undefined) {
    const help = spawnSync(process.execPath, [FLOATIP_MAIN, 'serve', '--help'], { encoding: 'utf8' });
    apiPortFlag = help.stdout.includes('--api-port');
  }
  return apiPortFlag;
}
