// The README's "Try it" walkthrough as a test runs it: its shell block with the ports moved, and its
// "prints" block as line patterns ("…" stands for what differs run to run). Shared by
// test/integration/readme.test.ts (after `npm start`, with the kubectl on PATH) and the e2e suite
// (with each control plane's own kubectl: v1.20.2 reads /openapi/v2, the current one v3).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './harness/free-port.js';

export const ROOT = path.resolve(new URL('../', import.meta.url).pathname);
export const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The fenced blocks of a kind, in order, after `from`. */
export function blocks(kind: string, from = 0): string[] {
  const out: string[] = [];
  const fence = new RegExp('```' + kind + '\\n([\\s\\S]*?)\\n```', 'g');
  fence.lastIndex = from;
  for (let m = fence.exec(README); m; m = fence.exec(README)) out.push(m[1]!);
  return out;
}

export interface WalkthroughPorts {
  readonly embedded: number;
  readonly extender: number;
  readonly api: number;
}

/** Ports off the defaults, so that a floatip already running on this machine does not interfere. */
export async function freePorts(): Promise<WalkthroughPorts> {
  return { embedded: await freePort(), extender: await freePort(), api: await freePort() };
}

export interface StartedFloatip {
  readonly process: ChildProcess;
  /** Everything it printed so far. */
  output(): string;
  /** SIGTERM to its process group (npm and the node it started), and its exit awaited. */
  stop(): Promise<void>;
}

/**
 * Runs `command` (a shell command that starts floatip with no cluster) in `cwd` with its ports set
 * by the FLOATIP_* variables, and waits until it says where its REST API is.
 */
export async function startFloatip(
  command: string,
  cwd: string,
  ports: WalkthroughPorts,
  timeoutMs: number,
): Promise<StartedFloatip> {
  let output = '';
  const child = spawn('sh', ['-c', command], {
    cwd,
    env: {
      ...process.env,
      FLOATIP_EMBEDDED_PORT: String(ports.embedded),
      FLOATIP_PORT: String(ports.extender),
      FLOATIP_API_PORT: String(ports.api),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise((r) => child.once('exit', r));
  const started: StartedFloatip = {
    process: child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
      await exited;
    },
  };
  const deadline = Date.now() + timeoutMs;
  while (!output.includes('REST API: ')) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await started.stop();
      throw new Error(`${command} did not come up:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return started;
}

export interface WalkthroughRun {
  /** What it printed, line by line. */
  readonly got: string[];
  /** The README's "prints" block as one pattern per line. */
  readonly expected: RegExp[];
}

/** Runs the walkthrough against a floatip on `ports`; `env` for the shell (e.g. PATH to a kubectl). */
export async function runWalkthrough(
  ports: WalkthroughPorts,
  env: NodeJS.ProcessEnv = process.env,
): Promise<WalkthroughRun> {
  const from = README.indexOf('### Try it');
  if (from < 0) throw new Error('README.md has no "### Try it" section');
  const script = blocks('sh', from)[0]!
    .replaceAll('127.0.0.1:6080', `127.0.0.1:${ports.embedded}`)
    .replaceAll('127.0.0.1:9040', `127.0.0.1:${ports.extender}`)
    .replaceAll('127.0.0.1:9041', `127.0.0.1:${ports.api}`);
  const pattern = (line: string) =>
    new RegExp(
      `^${line
        .split('…')
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
  const expected = blocks('text', from)[0]!.split('\n').map(pattern);
  const { stdout } = await promisify(execFile)('bash', ['-e', '-c', `(${script}) 2>&1`], { env });
  return { got: stdout.trimEnd().split('\n'), expected };
}

/** Every line as the README says, numbered so that a failure names the line. */
export function expectAsReadmeSays({ got, expected }: WalkthroughRun): void {
  expect(got.length).toBe(expected.length);
  got.forEach((line, i) =>
    expect({ line: i + 1, text: line }).toEqual({ line: i + 1, text: expect.stringMatching(expected[i]!) }),
  );
}
