// The command line, as an operator meets it: --help documents every flag with its environment
// variable, and a bad value stops start-up with one clear line and exit code 2.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

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
  await promisify(execFile)('npx', ['tsc', '-p', 'tsconfig.build.json']);
}, 120_000);

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
  [['serve', '--api-auth', 'ldap'], "error: option '--api-auth <mode>' argument 'ldap' is invalid"],
  [['serve', '--nope'], "error: unknown option '--nope'"],
  [['serve', '--config', '/nonexistent.json'], 'floatip: read json config: ENOENT'],
  [['serve', '--kubeconfig', '/nonexistent'], 'floatip: --kubeconfig /nonexistent: no such file'],
])('%j stops with one clear line', async (args, message) => {
  const { code, stderr } = await run(...args);
  expect(code).not.toBe(0);
  expect(stderr.trim().split('\n')).toHaveLength(1);
  expect(stderr).toContain(message);
});
