// E2E-K1..K3: the README's walkthrough with each control plane's own kubectl, against floatip's
// embedded API server (no cluster): v1.20.2's kubectl (the one Debian ships) reads /openapi/v2, as
// protobuf, before every create, and validates custom resources with its definitions; the current
// kubectl reads /openapi/v3 and leaves validation to the server. Only the kubectl binary of the
// control plane is used here, not the control plane itself.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  expectAsReadmeSays,
  freePorts,
  runWalkthrough,
  startFloatip,
  type StartedFloatip,
  type WalkthroughPorts,
} from '../readme-walkthrough.js';
import { kubeLine, loadCluster } from './cluster.js';
import { FLOATIP_MAIN, REPO_ROOT } from './floatip.js';
import { note } from './suite.js';

let floatip: StartedFloatip | undefined;
let ports: WalkthroughPorts;
const kubectl = () => loadCluster().KUBECTL;

interface Run {
  readonly code: number;
  readonly out: string;
}

function run(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      kubectl(),
      ['--server', `http://127.0.0.1:${ports.embedded}`, ...args],
      { env: { ...process.env, KUBECONFIG: '/dev/null' }, timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, out: `${stdout}${stderr}` });
      },
    );
  });
}

beforeAll(async () => {
  ports = await freePorts();
  // the suite's build (global-setup.ts), as `npm start` runs it
  floatip = await startFloatip(`"${process.execPath}" "${FLOATIP_MAIN}" serve`, REPO_ROOT, ports, 60_000);
});

afterAll(() => floatip?.stop());

test(`E2E-K1 (${kubeLine()}) the README's walkthrough with this kubectl prints what the README says`, async () => {
  // `kubectl` in the walkthrough is this control plane's
  const env = { ...process.env, PATH: `${dirname(kubectl())}:${process.env.PATH}`, KUBECONFIG: '/dev/null' };
  const version = await run('version', '--client', '-o', 'json');
  note(`E2E-K1: ${JSON.parse(version.out.slice(version.out.indexOf('{'))).clientVersion.gitVersion}`);
  expectAsReadmeSays(await runWalkthrough(ports, env));
});

test(`E2E-K2 (${kubeLine()}) a FloatingIP with a misspelt field is refused; a good one passes a server dry run; explain reads its schema`, async () => {
  const fip = (extra: string) => {
    const file = join(tmpdir(), `floatip-k2-${extra ? 'bad' : 'good'}.yaml`);
    writeFileSync(
      file,
      [
        'apiVersion: galaxy.k8s.io/v1alpha1',
        'kind: FloatingIP',
        'metadata: { name: 10.0.100.99 }',
        `spec: { key: "pool__k2_", attribute: "", policy: 0, updateTime: "2026-12-03T00:00:00Z"${extra} }`,
      ].join('\n'),
    );
    return file;
  };
  const bad = await run('create', '-f', fip(', subnt: x'));
  expect(bad.code).toBe(1);
  // v1.20: kubectl's own validation, from /openapi/v2; current: the server's strict field validation
  expect(bad.out).toMatch(/unknown field "(spec\.)?subnt"/);
  note(`E2E-K2: ${bad.out.trim()}`);
  const good = await run('create', '-f', fip(''), '--dry-run=server');
  expect(good).toEqual({ code: 0, out: 'floatingip.galaxy.k8s.io/10.0.100.99 created (server dry run)\n' });
  expect((await run('get', 'fip', '10.0.100.99')).code).toBe(1); // a dry run writes nothing
  const explain = await run('explain', 'floatingips.spec.key');
  expect(explain.code).toBe(0);
  expect(explain.out).toMatch(/FIELD:\s+key\s+<string>/);
});

test(`E2E-K3 (${kubeLine()}) a CRD whose schema kube-apiserver would refuse stops neither this kubectl nor its validation`, async () => {
  // an array without items and a type "null": kube-openapi, inside kubectl v1.20, fails the whole
  // /openapi/v2 document on either; and no apiVersion or kind declared, as most CRDs
  const crd = join(tmpdir(), 'floatip-k3-crd.yaml');
  writeFileSync(
    crd,
    [
      'apiVersion: apiextensions.k8s.io/v1',
      'kind: CustomResourceDefinition',
      'metadata: { name: odds.example.com }',
      'spec:',
      '  group: example.com',
      '  scope: Namespaced',
      '  names: { plural: odds, singular: odd, kind: Odd, listKind: OddList }',
      '  versions:',
      '    - name: v1',
      '      served: true',
      '      storage: true',
      '      schema:',
      '        openAPIV3Schema:',
      '          type: object',
      '          properties:',
      '            spec: { type: object, properties: { list: { type: array }, weird: { type: "null" } } }',
    ].join('\n'),
  );
  expect(await run('apply', '-f', crd)).toEqual({
    code: 0,
    out: 'customresourcedefinition.apiextensions.k8s.io/odds.example.com created\n',
  });
  const odd = (spec: string) => {
    const file = join(tmpdir(), 'floatip-k3-odd.yaml');
    writeFileSync(
      file,
      `apiVersion: example.com/v1\nkind: Odd\nmetadata: { name: o1, namespace: default }\nspec: ${spec}\n`,
    );
    return file;
  };
  // `weird` null: the server checks the object against the schema, whose type "null" takes nothing else
  expect(await run('create', '-f', odd('{ list: [1, "a"], weird: null }'), '--dry-run=server')).toEqual({
    code: 0,
    out: 'odd.example.com/o1 created (server dry run)\n',
  });
  const misspelt = await run('create', '-f', odd('{ lst: [1] }'), '--dry-run=server');
  expect(misspelt.code).toBe(1);
  expect(misspelt.out).toMatch(/unknown field "(spec\.)?lst"/);
});
