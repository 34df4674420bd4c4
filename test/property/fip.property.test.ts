// Property tests of kubectl fip's command line (fip-argv.ts) against the embedded API server, seeded
// with a configuration, FloatingIPs, a Pool and a pod: whatever is typed, the exit code is one the
// README documents (0, 1, 2), nothing is a stack trace, a usage error says what is wrong, and the
// cluster is unchanged (the one write, release, goes through a service proxy this server lacks).
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { type FipServer, type FipRun, runFipWith, startFipServer } from '../integration/fip-server.js';
import { argv } from './fip-argv.js';
import { Req } from './http.js';
import { type Violation, failedProperties, holds, timeLimit } from './property.js';

let fipServer: FipServer;
let server: EmbeddedApiServer;
let kubeconfig: string;
const realExit = process.exit;
const savedKubeconfig = process.env.KUBECONFIG;
let runs = 0;
/** How many lines ended with each exit code: some of each, or the lines test little. */
const codes: Record<number, number> = {};

async function post(path: string, body: unknown): Promise<void> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  // the server's demo seed may hold it already
  if (res.status !== 201 && res.status !== 409)
    throw new Error(`seeding ${path}: ${res.status} ${await res.text()}`);
}

beforeAll(async () => {
  fipServer = await startFipServer();
  ({ server, kubeconfig } = fipServer);
  // a later `--kubeconfig ''` falls back to $KUBECONFIG: this server's, never the machine's
  process.env.KUBECONFIG = kubeconfig;
  // a program that ended the process would end the test run: it is a violation, not an exit
  process.exit = ((code?: number) => {
    throw new Error(`process.exit(${code}) called`);
  }) as typeof process.exit;
  const entry = {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.10~10.0.100.20'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
  };
  await post('/api/v1/namespaces/kube-system/configmaps', {
    metadata: { name: 'floatingip-config' },
    data: { floatingips: JSON.stringify([entry]) },
  });
  await post('/api/v1/namespaces/default/pods', {
    metadata: { name: 'web-0', labels: { app: 'web' } },
    spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'x' }] },
  });
  await post('/apis/galaxy.k8s.io/v1alpha1/namespaces/kube-system/pools', {
    apiVersion: 'galaxy.k8s.io/v1alpha1',
    kind: 'Pool',
    metadata: { name: 'p1' },
    size: 2,
    preAllocateIP: false,
  });
  const fip = (ip: string, key: string, policy: number) =>
    post('/apis/galaxy.k8s.io/v1alpha1/floatingips', {
      apiVersion: 'galaxy.k8s.io/v1alpha1',
      kind: 'FloatingIP',
      metadata: { name: ip },
      spec: {
        key,
        attribute: JSON.stringify({ NodeName: 'node-1', Uid: '' }),
        policy,
        updateTime: '2026-01-01T00:00:00Z',
      },
    });
  await fip('10.0.100.10', 'dp_default_web_web-0', 0);
  await fip('10.0.100.11', 'pool__p1_', 2);
  await fip('10.0.100.12', 'dp_default_db_', 2);
}, 60_000);

afterAll(async () => {
  process.exit = realExit;
  if (savedKubeconfig === undefined) delete process.env.KUBECONFIG;
  else process.env.KUBECONFIG = savedKubeconfig;
  await fipServer?.close();
});

/** Everything kubectl fip reads or could write, as the API server holds it (resourceVersions included). */
async function state(): Promise<string> {
  const paths = [
    '/apis/galaxy.k8s.io/v1alpha1/floatingips',
    '/apis/galaxy.k8s.io/v1alpha1/pools',
    '/api/v1/pods',
    '/api/v1/configmaps',
  ];
  const lists = await Promise.all(
    paths.map(async (p) => ((await (await fetch(`${server.url}${p}`)).json()) as { items: unknown[] }).items),
  );
  return JSON.stringify(lists);
}

const STACK = /\n\s+at \S+ \(|^\s+at .+:\d+:\d+\)?$/m;

/** The line as a shell command, for the failure report. */
const shown = (args: readonly string[]) =>
  Object.assign(new Req('api', 'EXEC', '/'), {
    curl: () =>
      `kubectl fip ${args.map((a) => JSON.stringify(a.length > 200 ? `${a.slice(0, 200)}...(${a.length})` : a)).join(' ')}`,
  });

export async function fipProblems(args: readonly string[]): Promise<[string[], FipRun]> {
  let run: FipRun;
  const problems: string[] = [];
  try {
    run = await runFipWith(kubeconfig, args);
    codes[run.code] = (codes[run.code] ?? 0) + 1;
  } catch (e) {
    return [[`runFip threw: ${(e as Error).stack ?? String(e)}`], { code: -1, out: '', err: '' }];
  }
  const { code, out, err } = run;
  if (![0, 1, 2].includes(code)) problems.push(`exit code ${code}, not one the README lists`);
  if (STACK.test(out) || STACK.test(err)) problems.push('a stack trace');
  if (code === 2) {
    if (err.trim() === '') problems.push('a usage error that says nothing');
    else if (!/^(error: |kubectl fip: |Usage: )/m.test(err))
      problems.push('a usage error that names nothing');
  }
  return [problems, run];
}

test(
  'any command line: exit 0, 1 or 2, no stack trace, a usage error says what, the cluster unchanged',
  async () => {
    let before = await state();
    await holds('kubectl fip argv', argv, 1500, async (args) => {
      runs++;
      const [problems, run] = await fipProblems(args);
      const after = await state();
      if (after !== before) problems.push(`the cluster changed (exit ${run.code})`);
      before = after;
      const answer = {
        status: run.code,
        headers: {},
        text: `${run.out.slice(0, 300)}\nstderr: ${run.err.slice(0, 600)}`,
        json: undefined,
      };
      return problems.map((problem): Violation => ({ requests: [shown(args)], answer, problem }));
    });
  },
  timeLimit(150_000),
);

test('every case ran', () => {
  if (failedProperties().length > 0)
    throw new Error(
      `not counted: ${failedProperties().join(', ')} failed (above) before running all its cases`,
    );
  expect(runs).toBeGreaterThanOrEqual(1500);
  // answers and findings as well as usage errors: the lines reach the commands, not only the parser
  expect({ answers: (codes[0] ?? 0) >= 100, findings: (codes[1] ?? 0) >= 30 }).toEqual({
    answers: true,
    findings: true,
  });
});

// The counterexamples the property found, kept as plain cases.
describe('regressions', () => {
  const fip = async (...args: string[]) => (await fipProblems(args))[1];

  test('`help` is help asked for, as --help is: on stdout, exit 0 (it exited 2, a usage error)', async () => {
    const asked = await fip('help');
    expect([asked.code, asked.err]).toEqual([0, '']);
    expect(asked.out).toBe((await fip('--help')).out);
    expect(asked.out).toMatch(/^Usage: kubectl fip \[options\] \[command\]\n/);
  });

  test('`help ls` is the help of ls, exit 0', async () => {
    const asked = await fip('help', 'ls');
    expect([asked.code, asked.err]).toEqual([0, '']);
    expect(asked.out).toBe((await fip('ls', '--help')).out);
  });

  // an argument of 100,000 characters came back whole in its error, after the help commander shows
  const big = 'x'.repeat(100_000);
  test.each([
    ['an unknown option', ['--' + big]],
    ['an unknown option of two lines', [`--a\n${big}`]],
    ['an unknown command', [big]],
    ["an unknown option of a command's", ['ls', '--' + big]],
    ['help of an unknown command', ['help', big]],
    ['-n', ['-n', `a/${big}`, 'ls']],
    ['--pool-namespace', ['--pool-namespace', `a/${big}`, 'ls']],
    ['--config-map', ['--config-map', big, 'check']],
    ['--service', ['--service', big, 'ls']],
    ['--context', ['--context', big, 'ls']],
    ['--kubeconfig', ['--kubeconfig', `/tmp/${big}`, 'ls']],
    ['--window', ['usage', '--window', big]],
    ['-o', ['ls', '-o', big]],
    ['an address to release', ['release', big]],
    ['--pod', ['release', '--pod', `a/${big}`]],
    ['a subject to show', ['show', big]],
  ])('%s of 100,000 characters: a usage error or a finding quoting it clipped', async (_what, args) => {
    const run = await fip(...args);
    expect([1, 2]).toContain(run.code);
    expect(run.err).toMatch(/\.\.\. \(\d+ characters\)/);
    // the longest help commander shows after a usage error, and a clipped argument or two
    expect(run.err.length).toBeLessThan(5000);
  });

  test('`help nosuch` is a usage error naming the command it does not know (it showed the usage alone)', async () => {
    const asked = await fip('help', 'nosuch');
    expect([asked.code, asked.out]).toEqual([2, '']);
    expect(asked.err).toMatch(/^error: unknown command 'nosuch'\n/);
  });
});
