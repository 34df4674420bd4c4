// The command line, as an operator meets it: --help documents every flag with its environment
// variable, and a bad value stops start-up with one clear line and exit code 2.
import { execFile, spawn } from 'node:child_process';
import { type AddressInfo, connect, createServer as createNetServer } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../harness/free-port.js';
import { webhookCertificate } from './webhook-tls.js';

const run = async (...args: string[]) => {
  try {
    const { stdout, stderr } = await promisify(execFile)('node', ['dist/src/main.js', ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
};

beforeAll(async () => {
  await promisify(execFile)('npm', ['run', 'build', '--silent']);
}, 120_000);

test('the build leaves the three executables runnable by path, as kubectl runs its plugins and a runtime its CNI plugin', async () => {
  for (const [file, out] of [
    ['dist/src/main.js', /Usage: floatip/],
    ['dist/src/fip/main.js', /Usage: kubectl fip/],
  ] as const) {
    const { stdout } = await promisify(execFile)(file, ['--help']);
    expect(stdout).toMatch(out);
  }
  // VERSION needs nothing but the plugin itself
  const cni = await new Promise<string>((done, fail) => {
    const child = execFile(
      'dist/src/cni-plugin/main.js',
      [],
      { env: { PATH: process.env.PATH, CNI_COMMAND: 'VERSION' } },
      (err, out) => (err ? fail(err) : done(out)),
    );
    child.stdin?.end();
  });
  expect(JSON.parse(cni)).toHaveProperty('supportedVersions');
});

test('floatip-cni run by hand (no CNI_COMMAND) says what it is on stderr and exits 0, not waiting for stdin, as the reference plugins do', async () => {
  // stdin left open, as a terminal's is: reading it first made `floatip-cni --help` hang
  const child = spawn('dist/src/cni-plugin/main.js', ['--help'], {
    env: { PATH: process.env.PATH },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => child.kill(), 10_000);
    child.on('exit', (c) => (clearTimeout(timer), resolve(c)));
  });
  expect([code, stdout]).toEqual([0, '']);
  expect(stderr).toBe(
    'CNI floatip-cni plugin: puts the floating IPs floatip gave a pod on its interfaces; a container runtime runs it with CNI_COMMAND (ADD, DEL, CHECK, VERSION, STATUS, GC) and the network configuration on stdin\n' +
      'CNI protocol versions supported: 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0\n',
  );
}, 20_000);

test('floatip serve --help documents every flag and its environment variable', async () => {
  const { code, stdout } = await run('serve', '--help');
  expect(code).toBe(0);
  for (const flag of [
    'port',
    'api-port',
    'bind',
    'config',
    'kubeconfig',
    'master',
    'resource-name',
    'pool-namespace',
    'log-level',
    'leader-elect',
    'leader-elect-lease-duration',
    'leader-elect-renew-deadline',
    'leader-elect-retry-period',
    'resync-interval',
    'parked-ip-ttl',
    'api-auth',
    'tls-cert-file',
    'tls-private-key-file',
    'webhook-port',
    'webhook-cert-file',
    'webhook-key-file',
    'extender-client-ca-file',
    'health-port',
    'advertise-address',
    'shutdown-delay',
  ]) {
    expect(stdout).toContain(`--${flag}`);
    expect(stdout.replace(/\s+/g, ' ')).toContain(`FLOATIP_${flag.toUpperCase().replace(/-/g, '_')}`);
  }
});

test.each([
  [
    ['serve', '--port', 'x'],
    "error: option '--port <port>' argument 'x' is invalid. must be a port number (0-65535)",
  ],
  [
    ['serve', '--leader-elect=maybe'],
    "error: option '--leader-elect [bool]' argument 'maybe' is invalid. must be true or false",
  ],
  [['serve', '--resync-interval', '5'], 'must be a duration such as 15s, 1m30s or 500ms'],
  [['serve', '--resync-interval', '0'], 'must be more than 0 (the resync collects leaked addresses)'],
  [['serve', '--api-auth', 'ldap'], "error: option '--api-auth <mode>' argument 'ldap' is invalid"],
  [['serve', '--nope'], "error: unknown option '--nope'"],
  [
    // with no cluster: started, it would answer every REST caller 401 (the embedded server has no tokens)
    ['serve', '--api-auth', 'kubernetes', '--port', '0', '--api-port', '0', '--embedded-port', '0'],
    'floatip: --api-auth=kubernetes needs a cluster (--kubeconfig, --master or in-cluster) to check callers: the embedded API server knows no tokens, so every REST caller would be refused',
  ],
  [['serve', '--config', '/nonexistent.json'], 'floatip: read json config: ENOENT'],
  [['serve', '--kubeconfig', '/nonexistent'], 'floatip: --kubeconfig /nonexistent: no such file'],
  [
    ['serve', '--webhook-port', '9443'],
    'floatip: --webhook-port needs --webhook-cert-file and --webhook-key-file (the API server calls webhooks over HTTPS only)',
  ],
  [
    ['serve', '--webhook-cert-file', '/x.crt'],
    'floatip: --webhook-cert-file and --webhook-key-file need --webhook-port',
  ],
  [
    [
      'serve',
      '--webhook-port',
      '9443',
      '--webhook-cert-file',
      '/nonexistent.crt',
      '--webhook-key-file',
      '/x.key',
    ],
    'floatip: --webhook-cert-file /nonexistent.crt: no such file',
  ],
])('%j stops with one clear line', async (args, message) => {
  const { code, stderr } = await run(...args);
  expect(code).not.toBe(0);
  expect(stderr.trim().split('\n')).toHaveLength(1);
  expect(stderr).toContain(message);
});

/** Starts a command in the background; `stop()` ends it and resolves with its output. */
function background(...args: string[]) {
  const child = spawn('node', ['dist/src/main.js', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    output: () => stdout,
    exited,
    /** Resolves with what the log says once `pattern` appears in stdout. */
    async waitFor(pattern: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = stdout.match(pattern);
        if (m) return m;
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`no ${pattern} in the output of ${args.join(' ')}:\n${stdout}\n${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop(): Promise<number | null> {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

async function occupy(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  const port = (server.address() as AddressInfo).port;
  return { port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

test.each(['--port', '--api-port', '--embedded-port'])(
  '14: a busy %s stops start-up with one clear line, exit code 1, and nothing left listening',
  async (flag) => {
    const busy = await occupy();
    const ports: Record<string, number> = {
      '--port': await freePort(),
      '--api-port': await freePort(),
      '--embedded-port': await freePort(),
    };
    ports[flag] = busy.port;
    try {
      const args = ['serve', '--leader-elect=false', '--log-level', 'silent'];
      for (const [f, p] of Object.entries(ports)) args.push(f, String(p));
      const { code, stderr } = await run(...args);
      expect(code).toBe(1);
      expect(stderr.trim().split('\n')).toHaveLength(1);
      expect(stderr).toMatch(
        new RegExp(`^floatip: the .* port \\(${flag}\\) [\\d.]+:${busy.port} is already in use`),
      );
      for (const [f, p] of Object.entries(ports)) if (f !== flag) expect(await listening(p)).toBe(false);
    } finally {
      await busy.close();
    }
  },
  30_000,
);

test('14b: two servers given one port stop start-up naming both flags, before anything listens', async () => {
  const shared = await freePort();
  const embedded = await freePort();
  const { code, stderr } = await run(
    'serve',
    '--leader-elect=false',
    '--log-level',
    'silent',
    '--port',
    String(shared),
    '--api-port',
    String(shared),
    '--embedded-port',
    String(embedded),
  );
  expect({ code, stderr: stderr.trim() }).toEqual({
    code: 1,
    stderr: `floatip: --port and --api-port are both ${shared}: each server needs a port of its own`,
  });
  expect(await listening(embedded)).toBe(false);
}, 30_000);

test('15: floatip serve --master with a plain-HTTP API server serves it', async () => {
  const apiPort = await freePort();
  const apiserver = background('dev-apiserver', '--port', String(apiPort));
  try {
    await apiserver.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/);
    const floatip = background(
      'serve',
      '--master',
      `http://127.0.0.1:${apiPort}`,
      '--leader-elect=false',
      '--port',
      '0',
      '--api-port',
      '0',
      '--health-port',
      '0',
      '--bind',
      '127.0.0.1',
    );
    try {
      const [, url] = await floatip.waitFor(
        /"url":"(http:\/\/127\.0\.0\.1:\d+)","leaderElection":false,"msg":"scheduler extender listening"/,
      );
      // ready means a configuration is in force: it was read from that API server's ConfigMap
      const ready = await fetch(`${url}/readyz`);
      expect([ready.status, await ready.text()]).toEqual([200, 'ok']);
      // the health port the kernel picked is in the log, and answers the probes
      const [, health] = await floatip.waitFor(
        /"url":"(http:\/\/127\.0\.0\.1:\d+)","msg":"health probes listening"/,
      );
      expect(health).not.toBe(url);
      const probe = await fetch(`${health}/readyz`);
      expect([probe.status, await probe.text()]).toEqual([200, 'ok']);
      const [, api] = await floatip.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)","msg":"REST API listening"/);
      const subnets = (await (await fetch(`${api}/v1/subnets`)).json()) as {
        content: { entries: unknown[] };
      };
      expect(subnets.content.entries.length).toBeGreaterThan(0);
    } finally {
      expect(await floatip.stop()).toBe(0);
    }
  } finally {
    await apiserver.stop();
  }
}, 60_000);

test('16: SIGTERM does not wait for a caller still sending its body: floatip exits, and that connection is closed', async () => {
  const floatip = background(
    'serve',
    '--leader-elect=false',
    '--port',
    '0',
    '--api-port',
    '0',
    '--embedded-port',
    String(await freePort()),
    '--bind',
    '127.0.0.1',
  );
  const [, port] = await floatip.waitFor(
    /"url":"http:\/\/127\.0\.0\.1:(\d+)","leaderElection":false,"msg":"scheduler extender listening"/,
  );
  // the banner is the last of start-up: SIGTERM's handler is set in the same turn (a machine loaded
  // enough delayed it past the 1.5 s below, and SIGTERM's default action ended floatip)
  await floatip.waitFor(/^REST API: http/m);
  // log lines are written in batches; the banner waits for those of start-up
  const banner = floatip.output().indexOf('floatip is running on its embedded');
  expect(floatip.output().indexOf('"msg":"REST API listening"')).toBeGreaterThan(-1);
  expect(floatip.output().indexOf('"msg":"REST API listening"')).toBeLessThan(banner);
  // a body promised at 100,000 bytes, of which a few arrive, then one byte a second
  const socket = connect(Number(port), '127.0.0.1');
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => undefined);
  socket.write(
    'POST /v1/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"Pod":',
  );
  const trickle = setInterval(() => socket.write(' '), 1000);
  try {
    await new Promise((r) => setTimeout(r, 1500));
    const stopping = Date.now();
    expect(await floatip.stop()).toBe(0);
    // the shutdown's own steps take well under this; the body would have kept it for minutes
    expect(Date.now() - stopping).toBeLessThan(10_000);
    // the lines of the shutdown are written at exit, not lost in the buffer
    expect(floatip.output()).toMatch(/"msg":"stopping"/);
    await closed;
  } finally {
    clearInterval(trickle);
    socket.destroy();
  }
}, 60_000);

/** The local IPv4 addresses (as /proc/net/tcp writes them: hex, little-endian) listening on `port`. */
function listeners(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f[3] === '0A' && f[1]?.endsWith(`:${hexPort}`))
    .map((f) => f[1]!.split(':')[0]!);
}

test('17: with no cluster (the embedded API server, an open REST API) both ports listen on 127.0.0.1 only, unless --bind says otherwise', async () => {
  const [port, apiPort] = [await freePort(), await freePort()];
  const args = ['serve', '--leader-elect=false', '--port', String(port), '--api-port', String(apiPort)];
  const floatip = background(...args, '--embedded-port', String(await freePort()));
  try {
    await floatip.waitFor(/^REST API: http/m);
    expect([listeners(port), listeners(apiPort)]).toEqual([['0100007F'], ['0100007F']]);
  } finally {
    await floatip.stop();
  }
  const everywhere = background(...args, '--embedded-port', String(await freePort()), '--bind', '0.0.0.0');
  try {
    await everywhere.waitFor(/^REST API: http/m);
    expect([listeners(port), listeners(apiPort)]).toEqual([['00000000'], ['00000000']]);
  } finally {
    await everywhere.stop();
  }
});

test('18: with --webhook-port the banner says where the admission webhook answers, as it says where every other server is', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'floatip-cli-webhook-'));
  const { cert, key } = webhookCertificate(['IP:127.0.0.1']);
  writeFileSync(join(dir, 'tls.crt'), cert);
  writeFileSync(join(dir, 'tls.key'), key);
  const webhookPort = await freePort();
  const floatip = background(
    'serve',
    '--leader-elect=false',
    '--port',
    '0',
    '--api-port',
    '0',
    '--embedded-port',
    String(await freePort()),
    '--webhook-port',
    String(webhookPort),
    '--webhook-cert-file',
    join(dir, 'tls.crt'),
    '--webhook-key-file',
    join(dir, 'tls.key'),
  );
  try {
    await floatip.waitFor(/^REST API: http/m);
    // the path the README's ValidatingWebhookConfiguration names ("Admission webhook")
    expect(floatip.output()).toMatch(
      new RegExp(`^admission webhook: https://127\\.0\\.0\\.1:${webhookPort}/validate$`, 'm'),
    );
  } finally {
    expect(await floatip.stop()).toBe(0);
    rmSync(dir, { recursive: true });
  }
}, 60_000);
