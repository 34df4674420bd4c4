// floatip's extender decoder against the decoder galaxy ran: Go's encoding/json into kube-scheduler's
// ExtenderArgs with k8s.io/api v1.20.2 (go-decode/main.go), built with Debian's Go 1.19 inside the
// Kubernetes source tree the v1.20.2 control plane is built from. kube-scheduler's own captured
// requests, each with one to three values replaced by a value of another type or form (a string for
// an int, `1.0`, a quantity or time in another syntax, a null, a key in upper case, an unknown key),
// are read by both: every request Go refuses floatip must refuse (galaxy answered it 500), and every
// one Go reads floatip must read. floatip's own refusal of a Pod or Node without a name is left out
// by never replacing a Pod, a Node, their metadata or names.
import { execFile, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { FullNodeReader } from '../../src/extender/full-nodes.js';
import { WireError, decodeExtenderArgs, decodeRequestNode } from '../../src/extender/wire.js';
import { KUBE_SCRIPTS, kubeHome } from './cluster.js';

const run = promisify(execFile);
const FIXTURES = new URL('../fixtures/kube-scheduler-1.20/', import.meta.url);
const GO = '/usr/lib/go-1.19/bin/go';
const SEED = Number(process.env.FLOATIP_PROPERTY_SEED ?? 20261205);
const CASES = 4000 * Number(process.env.FLOATIP_PROPERTY_SCALE ?? 1);

let work: string;
let decoder: string;

/** Builds go-decode in the v1.20.2 tree (ensure.sh builds the tree where this machine has none yet). */
beforeAll(async () => {
  const gopath = join(kubeHome(), 'build/gopath');
  const tree = join(gopath, 'src/k8s.io/kubernetes');
  if (!existsSync(join(tree, 'vendor/k8s.io/api/core/v1')) || !existsSync(GO)) {
    await run(join(KUBE_SCRIPTS, 'ensure.sh'), [], {
      env: { ...process.env, FLOATIP_KUBE_VERSION: 'v1.20' },
      maxBuffer: 1 << 26,
    });
  }
  work = mkdtempSync(join(tmpdir(), 'floatip-go-decode-'));
  decoder = join(work, 'go-decode');
  // inside the tree, so that GOPATH mode finds k8s.io/api in its vendor directory; removed after
  const pkg = join(tree, 'cmd', `floatip-go-decode-${process.pid}`);
  cpSync(new URL('./go-decode/', import.meta.url), pkg, { recursive: true });
  try {
    await run(GO, ['build', '-o', decoder, '.'], {
      cwd: pkg,
      // GOPATH mode, nothing from the network, as ensure.sh builds the control plane
      env: {
        PATH: `/usr/lib/go-1.19/bin:${process.env.PATH ?? ''}`,
        HOME: process.env.HOME ?? '/root',
        PWD: pkg,
        GOENV: 'off',
        GOFLAGS: '',
        GOPROXY: 'off',
        GO111MODULE: 'off',
        CGO_ENABLED: '0',
        GOPATH: gopath,
        GOCACHE: join(kubeHome(), 'build/gocache'),
      },
    });
  } finally {
    rmSync(pkg, { recursive: true, force: true });
  }
}, 900_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

const BASES = [
  'filter.nodes.json',
  'filter.nodenames.json',
  'prioritize.nodes.json',
  'filter.after-preempt.json',
].map((name) => JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as Record<string, unknown>);

/** What a value is replaced by: JSON texts, spliced in as written (so `1.0` stays `1.0`). */
const VALUES = [
  'null',
  'null',
  'null',
  '"x"',
  '""',
  '5',
  '-3',
  '1.0',
  '1e3',
  '2E1',
  '0.5',
  '2147483648',
  '-2147483649',
  'true',
  'false',
  '{}',
  '[]',
  '[1]',
  '[null]',
  '{"a":1}',
  '{"a":null}',
  '"1"',
  '"1Gi"',
  '"1 core"',
  '"+.5"',
  '"1e3"',
  '"2E"',
  '"1e"',
  '"500m"',
  '"-1"',
  '"5."',
  '"1.5Ki"',
  '"1Ki5"',
  '"0x10"',
  '"1e-3"',
  '"2021-02-29T00:00:00Z"',
  '"2020-01-02T03:04:05.1+08:00"',
  '"2020-01-02T03:04:05Z"',
  '"2020-13-02T03:04:05Z"',
  '"2020-01-02T24:04:05Z"',
  '"2020-01-02T03:04:60Z"',
  '"2020-01-02T03:04:05"',
  '"2020-01-02t03:04:05z"',
];

type Path = (string | number)[];
function paths(value: unknown, path: Path = [], out: Path[] = []): Path[] {
  out.push(path);
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...path, i], out));
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) paths(v, [...path, k], out);
  return out;
}

/** Paths whose replacement floatip refuses for its own reasons: a Pod or Node without a name, no nodes. */
const own = (p: Path): boolean => {
  const tail = p[0] === 'Pod' ? p.slice(1) : p[0] === 'Nodes' && p[1] === 'items' ? p.slice(3) : undefined;
  if (p.length <= 1 || (p[0] === 'Nodes' && p.length <= 3)) return true;
  return (
    tail !== undefined &&
    (tail.length === 0 ||
      (tail[0] === 'metadata' && tail.length <= 2 && (tail.length === 1 || tail[1] === 'name')))
  );
};

const mutation = fc.record({
  at: fc.nat(),
  value: fc.constantFrom(...VALUES),
  key: fc.constantFrom('same', 'same', 'upper', 'unknown'),
});
const requests = fc
  .record({ base: fc.nat(BASES.length - 1), mutations: fc.array(mutation, { minLength: 1, maxLength: 3 }) })
  .map(({ base, mutations }) => {
    const request = structuredClone(BASES[base]!);
    const choices = paths(request).filter((p) => !own(p));
    const marks: [string, string][] = [];
    mutations.forEach(({ at, value, key }, i) => {
      const path = choices[at % choices.length]!;
      let parent: unknown = request;
      for (const part of path.slice(0, -1))
        parent = (parent as Record<string | number, unknown> | undefined)?.[part];
      if (typeof parent !== 'object' || parent === null) return;
      const last = path[path.length - 1]!;
      const mark = `floatip-mark-${i}`;
      marks.push([mark, value]);
      const name =
        Array.isArray(parent) || key === 'same'
          ? last
          : key === 'upper'
            ? String(last).toUpperCase()
            : 'unknownField';
      (parent as Record<string | number, unknown>)[name] = mark;
    });
    let text = JSON.stringify(request);
    for (const [mark, value] of marks) text = text.replace(JSON.stringify(mark), value);
    return text;
  });

function floatipReads(reader: FullNodeReader, text: string): string {
  try {
    const raw = Buffer.from(text);
    const read = reader.read(raw);
    decodeExtenderArgs(read.body, raw, read.known, read.podText);
    return 'ok';
  } catch (err) {
    if (err instanceof WireError || err instanceof SyntaxError) return err.message;
    throw err;
  }
}

test(`E2E-D1 floatip refuses exactly the requests Go's decoder refused (${CASES} mutated kube-scheduler requests, seed ${SEED})`, () => {
  const texts = fc.sample(requests, { seed: SEED, numRuns: CASES });
  const go = spawnSync(decoder, { input: `${texts.join('\n')}\n`, maxBuffer: 1 << 28 });
  expect(go.status).toBe(0);
  const goSays = go.stdout
    .toString()
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as string);
  expect(goSays).toHaveLength(texts.length);
  const reader = new FullNodeReader(decodeRequestNode);
  const differ = texts
    .map((text, i) => ({ text, go: goSays[i]!, floatip: floatipReads(reader, text) }))
    .filter((c) => (c.go === 'ok') !== (c.floatip === 'ok'));
  // Go refused some and read others: the comparison means something
  const refused = goSays.filter((s) => s !== 'ok').length;
  expect(refused).toBeGreaterThan(CASES / 20);
  expect(refused).toBeLessThan(CASES - CASES / 20);
  expect(
    differ.slice(0, 5).map((c) => `go: ${c.go}\nfloatip: ${c.floatip}\n${c.text.slice(0, 2000)}`),
  ).toEqual([]);
});
