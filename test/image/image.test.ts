// The OCI image that `npm run image` builds (scripts/build-image.sh), as an operator's runtime
// would see it: its configuration (entrypoint, non-root user), its files (the built service and
// production dependencies only), and, started with Debian's runc on a read-only root filesystem,
// `floatip serve --help`, /healthz, and a SIGTERM that ends it cleanly (node is PID 1).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../harness/free-port.js';

const exec = promisify(execFile);
const ARCHIVE = 'dist/image/floatip-oci.tar';
const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
let dir: string;

interface Descriptor {
  readonly digest: string;
  readonly annotations?: Record<string, string>;
}
const blob = (digest: string) => join(dir, 'oci', 'blobs', ...digest.split(':'));
const json = <T>(digest: string) => JSON.parse(readFileSync(blob(digest), 'utf8')) as T;

beforeAll(async () => {
  for (const tool of ['umoci', 'runc']) {
    await exec('sh', ['-c', `command -v ${tool}`]).catch(() => {
      throw new Error(`the image test needs Debian's ${tool}: apt-get install ${tool} (.ci/run does)`);
    });
  }
  await exec('scripts/build-image.sh', [], { maxBuffer: 2 ** 24 });
  dir = mkdtempSync(join(tmpdir(), 'floatip-image-'));
  await exec('mkdir', [join(dir, 'oci')]);
  await exec('tar', ['-xf', ARCHIVE, '-C', join(dir, 'oci')]);
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function image() {
  const index = JSON.parse(readFileSync(join(dir, 'oci', 'index.json'), 'utf8')) as {
    manifests: Descriptor[];
  };
  const entry = index.manifests.find(
    (m) => m.annotations?.['org.opencontainers.image.ref.name'] === VERSION,
  )!;
  const manifest = json<{ config: Descriptor; layers: Descriptor[] }>(entry.digest);
  return { manifest, config: json<{ config: Record<string, unknown> }>(manifest.config.digest).config };
}

test('the image runs floatip serve as the non-root user, node itself as PID 1', () => {
  const { config } = image();
  expect(config).toMatchObject({
    User: '10001:10001',
    Entrypoint: ['/usr/local/bin/node', '/app/dist/src/main.js'],
    Cmd: ['serve'],
    WorkingDir: '/app',
    ExposedPorts: { '9040/tcp': {}, '9041/tcp': {}, '9042/tcp': {} },
  });
});

test('the image holds the built service and production dependencies only', async () => {
  const { manifest } = image();
  const files = new Set<string>();
  for (const layer of manifest.layers) {
    const { stdout } = await exec('tar', ['-tzf', blob(layer.digest)], { maxBuffer: 2 ** 26 });
    for (const line of stdout.split('\n')) files.add(line.replace(/^\.\//, '').replace(/\/$/, ''));
  }
  for (const file of [
    'usr/local/bin/node',
    'app/dist/src/main.js',
    'app/dist/dashboard/index.html',
    'app/dist/dashboard/dashboard.js',
    'app/package.json',
    'app/crds/floatingips.yaml',
    'app/openapi/openapi.yaml',
    'app/node_modules/express/package.json',
    'app/node_modules/@kubernetes/client-node/package.json',
    'etc/passwd',
  ]) {
    expect(files.has(file) ? file : `missing ${file}`).toBe(file);
  }
  const dev = [
    'jest',
    'typescript',
    'eslint',
    'ts-jest',
    'prettier',
    'playwright-core',
    'fast-check',
    'esbuild',
    'preact',
  ];
  expect(dev.filter((name) => files.has(`app/node_modules/${name}`))).toEqual([]);
  expect([...files].filter((f) => f.startsWith('app/src/') || f.startsWith('app/test/'))).toEqual([]);
});

/** A runc bundle of the image: read-only root, the host's network (to reach it on 127.0.0.1), these args. */
async function bundle(name: string, args: string[]): Promise<string> {
  const path = join(dir, name);
  await exec('umoci', ['unpack', '--image', `${join(dir, 'oci')}:${VERSION}`, path]);
  const file = join(path, 'config.json');
  const spec = JSON.parse(readFileSync(file, 'utf8')) as {
    process: { args: string[]; terminal: boolean };
    root: { readonly: boolean };
    linux: { namespaces: { type: string }[] };
  };
  spec.process.args = [...spec.process.args.slice(0, 2), ...args];
  spec.process.terminal = false;
  spec.root.readonly = true;
  spec.linux.namespaces = spec.linux.namespaces.filter((n) => n.type !== 'network');
  writeFileSync(file, JSON.stringify(spec));
  return path;
}

function runc(
  id: string,
  path: string,
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  let output = '';
  const child = spawn('runc', ['run', '--bundle', path, id], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

test('started with runc on a read-only root: floatip serve --help', async () => {
  const path = await bundle('help', ['serve', '--help']);
  const run = runc(`floatip-help-${process.pid}`, path);
  expect(await run.exited).toBe(0);
  expect(run.output()).toContain('--extender-client-ca-file');
}, 60_000);

test('started with runc on a read-only root: /healthz answers, and SIGTERM ends it cleanly', async () => {
  const [port, apiPort, embeddedPort] = [await freePort(), await freePort(), await freePort()];
  const path = await bundle('serve', [
    'serve',
    '--bind=127.0.0.1',
    `--port=${port}`,
    `--api-port=${apiPort}`,
    `--embedded-port=${embeddedPort}`,
  ]);
  const id = `floatip-serve-${process.pid}`;
  const run = runc(id, path);
  try {
    const deadline = Date.now() + 30_000;
    let health: string | undefined;
    while (health === undefined && Date.now() < deadline) {
      health = await fetch(`http://127.0.0.1:${port}/healthz`)
        .then((res) => res.text())
        .catch(() => undefined);
      if (health === undefined) await new Promise((r) => setTimeout(r, 200));
    }
    expect(health).toBe('ok');
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    // the dashboard's built page is in the image, not only in a developer's dist/
    const page = await fetch(`http://127.0.0.1:${apiPort}/`);
    expect([page.status, page.headers.get('content-type')]).toEqual([
      200,
      expect.stringContaining('text/html'),
    ]);
    const stopped = Date.now();
    await exec('runc', ['kill', id, 'TERM']);
    expect(await run.exited).toBe(0);
    expect(Date.now() - stopped).toBeLessThan(5_000);
    expect(run.output()).toContain('"msg":"stopping"');
  } finally {
    if (run.child.exitCode === null) await exec('runc', ['kill', id, 'KILL']).catch(() => undefined);
    await exec('runc', ['delete', '--force', id]).catch(() => undefined);
  }
}, 60_000);
