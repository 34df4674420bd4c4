// The README's first two commands and its "Try it" walkthrough, run as a newcomer would: `npm start`
// in a copy of the checkout (its own build, its own dist/; node_modules shared, as `npm ci` made
// them), then the walkthrough's shell block, whose output must be the README's "prints" block.
// Ports are moved off the defaults (FLOATIP_* variables, and the same numbers in the commands) so
// that a floatip running on this machine does not interfere.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { formatCidr, parsePoolConfig } from '../../src/ipam/index.js';
import { freePort } from '../harness/free-port.js';
import {
  blocks,
  expectAsReadmeSays,
  freePorts,
  README,
  ROOT,
  runWalkthrough,
  startFloatip,
  type StartedFloatip,
  type WalkthroughPorts,
} from '../readme-walkthrough.js';

test('the README starts with the two commands a newcomer runs', () => {
  const [start, tests] = blocks('sh');
  expect([start, tests]).toEqual(['npm ci && npm start', 'npm ci && npm test']);
  // CI runs exactly that test command
  expect(readFileSync(path.join(ROOT, '.ci/run'), 'utf8')).toMatch(/^npm ci\b.*\nnpm test$/ms);
});

test('the configuration example is one floatip takes: an IPv4 and an IPv6 entry for one node subnet', () => {
  const example = blocks('yaml').find((b) => b.includes('name: floatingip-config'))!;
  const config = parsePoolConfig((parse(example) as { data: { floatingips: string } }).data.floatingips);
  expect(config.entries.map((e) => [e.nodeSubnets, formatCidr(e.subnet)])).toEqual([
    [['10.0.1.0/24'], '10.0.100.0/24'],
    [['10.0.1.0/24'], 'fd00:100::/64'],
  ]);
});

describe('npm start, then the walkthrough', () => {
  let dir: string;
  let floatip: StartedFloatip | undefined;
  let ports: WalkthroughPorts;

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
    ports = await freePorts();
    // what follows `npm ci &&` in the first command (the dependencies are installed already)
    const command = blocks('sh')[0]!.replace(/^npm ci && /, '');
    floatip = await startFloatip(command, dir, ports, 90_000);
  }, 120_000);

  afterAll(async () => {
    await floatip?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('npm start says where everything is', () => {
    const output = floatip!.output();
    expect(output).toContain(
      `floatip is running on its embedded Kubernetes API server: http://127.0.0.1:${ports.embedded}`,
    );
    expect(output).toContain(
      `scheduler extender: http://127.0.0.1:${ports.extender}/v1/{filter,prioritize,bind,preempt}`,
    );
    expect(output).toContain(`dashboard: http://127.0.0.1:${ports.api}/\n`);
    expect(output).toContain(`REST API: http://127.0.0.1:${ports.api}/v1/ip`);
  });

  test('Try it: the walkthrough prints what the README says', async () => {
    expectAsReadmeSays(await runWalkthrough(ports));
  }, 60_000);

  // Not part of the walkthrough, which runs against a plain `npm start` (here and, in the e2e
  // suite, beside real control planes): this one needs floatip started again with the webhook's
  // flags and a certificate made on the spot. Run here as the README says: npm start stopped, the
  // first block in the checkout's directory, then the curl block beside it.
  test('Admission webhook, trying it without a cluster: the review POSTed by hand prints the refusal the README shows', async () => {
    const from = README.indexOf('**Trying it without a cluster.**');
    expect(from).toBeGreaterThan(README.indexOf('## Admission webhook'));
    const webhookPort = String(await freePort());
    const [start, post] = blocks('sh', from).map((b) => b.replaceAll('9443', webhookPort));
    const [expected] = blocks('text', from);
    const lines = start!.split('\n');
    expect(lines.at(-1)).toMatch(/^npm start -- --webhook-port /);
    await floatip!.stop();
    floatip = undefined;
    await promisify(execFile)('bash', ['-e', '-c', lines.slice(0, -1).join('\n')], { cwd: dir });
    floatip = await startFloatip(lines.at(-1)!, dir, ports, 90_000);
    expect(floatip.output()).toContain(`admission webhook: https://127.0.0.1:${webhookPort}/validate`);
    const { stdout } = await promisify(execFile)('bash', ['-e', '-c', post!], { cwd: dir });
    expect(stdout).toBe(`${expected}\n`);
  }, 150_000);
});
