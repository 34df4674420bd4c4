// The README's first two commands and its "Try it" walkthrough, run as a newcomer would: `npm start`
// in a copy of the checkout (its own build, its own dist/; node_modules shared, as `npm ci` made
// them), then the walkthrough's shell block, whose output must be the README's "prints" block.
// Ports are moved off the defaults (FLOATIP_* variables, and the same numbers in the commands) so
// that a floatip running on this machine does not interfere.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(new URL('../../', import.meta.url).pathname);
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The fenced blocks of a kind, in order, after `from`. */
function blocks(kind: string, from = 0): string[] {
  const out: string[] = [];
  const fence = new RegExp('```' + kind + '\\n([\\s\\S]*?)\\n```', 'g');
  fence.lastIndex = from;
  for (let m = fence.exec(README); m; m = fence.exec(README)) out.push(m[1]!);
  return out;
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });

test('the README starts with the two commands a newcomer runs', () => {
  const [start, tests] = blocks('sh');
  expect([start, tests]).toEqual(['npm ci && npm start', 'npm ci && npm test']);
  // CI runs exactly that test command
  expect(readFileSync(path.join(ROOT, '.ci/run'), 'utf8')).toMatch(/^npm ci\b.*\nnpm test$/ms);
});

describe('npm start, then the walkthrough', () => {
  let dir: string;
  let floatip: ChildProcess;
  let output = '';
  const ports = { embedded: 0, extender: 0, api: 0 };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'floatip-readme-'));
    for (const entry of [
      'package.json',
      'tsconfig.json',
      'tsconfig.build.json',
      'src',
      'bench',
      'crds',
      'openapi',
      'manifests',
      'web',
    ])
      cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    ports.embedded = await freePort();
    ports.extender = await freePort();
    ports.api = await freePort();
    // what follows `npm ci &&` in the first command (the dependencies are installed already)
    const command = blocks('sh')[0]!.replace(/^npm ci && /, '');
    floatip = spawn('sh', ['-c', command], {
      cwd: dir,
      env: {
        ...process.env,
        FLOATIP_EMBEDDED_PORT: String(ports.embedded),
        FLOATIP_PORT: String(ports.extender),
        FLOATIP_API_PORT: String(ports.api),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    floatip.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    floatip.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 90_000;
    while (!output.includes('REST API: ')) {
      if (Date.now() > deadline || floatip.exitCode !== null)
        throw new Error(`npm start did not come up:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 120_000);

  afterAll(async () => {
    if (floatip?.pid) process.kill(-floatip.pid, 'SIGTERM');
    await new Promise((r) => floatip?.once('exit', r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('npm start says where everything is', () => {
    expect(output).toContain(
      `floatip is running on its embedded Kubernetes API server: http://127.0.0.1:${ports.embedded}`,
    );
    expect(output).toContain(
      `scheduler extender: http://127.0.0.1:${ports.extender}/v1/{filter,prioritize,bind,preempt}`,
    );
    expect(output).toContain(`REST API: http://127.0.0.1:${ports.api}/v1/ip`);
  });

  test('Try it: the walkthrough prints what the README says', async () => {
    const from = README.indexOf('### Try it');
    expect(from).toBeGreaterThan(0);
    const script = blocks('sh', from)[0]!
      .replaceAll('127.0.0.1:6080', `127.0.0.1:${ports.embedded}`)
      .replaceAll('127.0.0.1:9040', `127.0.0.1:${ports.extender}`)
      .replaceAll('127.0.0.1:9041', `127.0.0.1:${ports.api}`);
    const expected = blocks('text', from)[0]!.split('\n');
    const { stdout } = await promisify(execFile)('bash', ['-e', '-c', `(${script}) 2>&1`]);
    const got = stdout.trimEnd().split('\n');
    // "…" in the README stands for what differs run to run (times)
    const pattern = (line: string) =>
      new RegExp(
        `^${line
          .split('…')
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
      );
    expect(got.length).toBe(expected.length);
    got.forEach((line, i) =>
      expect({ line: i + 1, text: line }).toEqual({
        line: i + 1,
        text: expect.stringMatching(pattern(expected[i]!)),
      }),
    );
  }, 60_000);
});
