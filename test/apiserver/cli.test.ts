// floatip dev-apiserver: strict flags, help text, and a run that serves until stopped.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DEV_APISERVER_HELP,
  parseDevApiServerFlags,
  runDevApiServer,
  UsageError,
} from '../../src/apiserver/cli.js';

function capture(): {
  out: string[];
  err: string[];
  io: { stdout: (t: string) => void; stderr: (t: string) => void };
} {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { stdout: (t) => out.push(t), stderr: (t) => err.push(t) } };
}

test('flags parse strictly, in both --flag value and --flag=value forms', () => {
  expect(parseDevApiServerFlags([])).toEqual({ port: 6080, host: '127.0.0.1', seed: 'demo' });
  expect(
    parseDevApiServerFlags(['--port', '0', '--host=127.0.0.1', '--state-file', '/tmp/x.json', '--seed=none']),
  ).toEqual({
    port: 0,
    host: '127.0.0.1',
    stateFile: '/tmp/x.json',
    seed: 'none',
  });
  expect(parseDevApiServerFlags(['--help'])).toBe('help');
  for (const bad of [
    ['--prot', '1'],
    ['--port', 'x'],
    ['--port', '70000'],
    ['--port'],
    ['--seed', 'big'],
    ['serve'],
    ['--port', '1', '--port', '2'],
  ]) {
    expect(() => parseDevApiServerFlags(bad)).toThrow(UsageError);
  }
});

test('a bad flag is one clear error line and exit code 2', async () => {
  const c = capture();
  expect(await runDevApiServer(['--port', 'eighty'], c.io)).toBe(2);
  expect(c.err).toEqual([
    'floatip dev-apiserver: --port must be an integer from 0 to 65535, got "eighty" (see floatip dev-apiserver --help)\n',
  ]);
  expect(c.out).toEqual([]);
  const unknown = capture();
  expect(await runDevApiServer(['--verbose'], unknown.io)).toBe(2);
  expect(unknown.err.join('')).toBe(
    'floatip dev-apiserver: unknown flag --verbose (see floatip dev-apiserver --help)\n',
  );
});

test('--help says it is a development aid and never a production store', async () => {
  const c = capture();
  expect(await runDevApiServer(['--help'], c.io)).toBe(0);
  expect(c.out.join('')).toBe(DEV_APISERVER_HELP);
  expect(DEV_APISERVER_HELP).toMatch(/development aid and test backend, NEVER a production store/);
});

test('it prints the URL and how to reach it, serves, and stops cleanly writing its state', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'floatip-cli-'));
  const stateFile = join(dir, 'state.json');
  const c = capture();
  const stop = new AbortController();
  let url = '';
  const run = runDevApiServer(['--port', '0', '--state-file', stateFile], {
    ...c.io,
    signal: stop.signal,
    onListening: (u) => (url = u),
  });
  try {
    await new Promise<void>((resolve) => {
      const poll = (): void => (url ? resolve() : void setTimeout(poll, 5));
      poll();
    });
    const banner = c.out.join('');
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(banner).toContain(`listening on ${url}`);
    expect(banner).toContain(`kubectl --server ${url} get nodes`);
    expect(banner).toContain(`curl ${url}/api/v1/nodes`);
    const nodes = (await (await fetch(`${url}/api/v1/nodes`)).json()) as { items: unknown[] };
    expect(nodes.items).toHaveLength(4);
    stop.abort();
    expect(await run).toBe(0);
    const saved = JSON.parse(await readFile(stateFile, 'utf8')) as { objects: unknown[] };
    expect(saved.objects.length).toBeGreaterThan(4);
    await expect(fetch(`${url}/api/v1/nodes`)).rejects.toThrow();
  } finally {
    stop.abort();
    await run;
    await rm(dir, { recursive: true, force: true });
  }
});

test('a port in use is reported, exit code 1', async () => {
  const c = capture();
  const stop = new AbortController();
  let url = '';
  const first = runDevApiServer(['--port', '0', '--seed', 'none'], {
    ...c.io,
    signal: stop.signal,
    onListening: (u) => (url = u),
  });
  await new Promise<void>((resolve) => {
    const poll = (): void => (url ? resolve() : void setTimeout(poll, 5));
    poll();
  });
  const port = new URL(url).port;
  const second = capture();
  expect(await runDevApiServer(['--port', port], second.io)).toBe(1);
  expect(second.err.join('')).toMatch(/^floatip dev-apiserver: cannot start: .*EADDRINUSE/);
  stop.abort();
  expect(await first).toBe(0);
});
