// floatip's extender decoders against the decoder galaxy ran: Go's encoding/json into kube-scheduler's
// ExtenderArgs, ExtenderPreemptionArgs and ExtenderBindingArgs with k8s.io/api v1.20.2
// (go-decode/main.go), built with Debian's Go 1.19 inside the Kubernetes source tree the v1.20.2
// control plane is built from. kube-scheduler's own captured
// requests, each with one to three values replaced by a value of another type or form (a string for
// an int, `1.0`, a quantity or time in another syntax, a null, a key in upper case, an unknown key),
// are read by both: every request Go refuses floatip must refuse (galaxy answered it 500), and every
// one Go reads floatip must read. floatip's own refusals (a Pod or Node without a name, a request
// with no nodes, a bind with no pod or node, a null victim, which galaxy read through a nil pointer)
// are left out by never replacing those values (each message's `own`).
import { execFile, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { FullNodeReader } from '../../src/extender/full-nodes.js';
import {
  decodeBindingArgs,
  decodeExtenderArgs,
  decodePreemptionArgs,
  decodeRequestNode,
} from '../../src/extender/wire.js';
import { WireError } from '../../src/extender/wire-fields.js';
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
  if (!existsSync(join(tree, 'vendor/k8s.io/api/core/v1')))
    throw new Error(
      `no Kubernetes v1.20.2 source tree at ${tree}: ensure.sh --prune removed it, and ensure.sh fetches it only to build; remove ${join(kubeHome(), 'bin')} and run test/e2e/kube/ensure.sh (about 6 minutes)`,
    );
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
  '-0',
  '1e400',
  '9223372036854775807',
  '9223372036854775808',
  '"\\u0031Gi"',
  '" 1Gi "',
  '"\u00a01"',
  '"m"',
  '"+"',
  '"."',
  '"Gi"',
  '"Pi"',
  '"e-10"',
  '"1.G"',
  '"1e99999999999999999999"',
  '"\\ud800"',
];

type Path = (string | number)[];
function paths(value: unknown, path: Path = [], out: Path[] = []): Path[] {
  out.push(path);
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...path, i], out));
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) paths(v, [...path, k], out);
  return out;
}

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as Record<string, unknown>;

/** Within a Pod or Node at `p`'s start: its own path, its metadata, or its name (a Pod or Node without a name). */
const nameless = (p: Path): boolean =>
  p.length === 0 || (p[0] === 'metadata' && (p.length === 1 || (p.length === 2 && p[1] === 'name')));

interface Message {
  /** go-decode's argument. */
  readonly go: string;
  readonly bases: Record<string, unknown>[];
  /** Paths whose replacement floatip refuses for its own reasons, which Go's decoding does not see. */
  readonly own: (p: Path) => boolean;
  /** floatip's decoder, as its server runs it on the text. */
  readonly read: (text: string) => void;
}

const reader = new FullNodeReader(decodeRequestNode);
const MESSAGES: Record<string, Message> = {
  'filter and prioritize': {
    go: 'args',
    bases: [
      'filter.nodes.json',
      'filter.nodenames.json',
      'prioritize.nodes.json',
      'filter.after-preempt.json',
    ].map(fixture),
    // a request with no nodes, a Pod or Node without a name
    own: (p) =>
      p.length <= 1 ||
      (p[0] === 'Pod' && nameless(p.slice(1))) ||
      (p[0] === 'Nodes' && (p.length <= 2 || (p[1] === 'items' && nameless(p.slice(3))))),
    read: (text) => {
      const raw = Buffer.from(text);
      const read = reader.read(raw);
      decodeExtenderArgs(read.body, raw, read.known, read.podText);
    },
  },
  preempt: {
    go: 'preemption',
    bases: ['preempt.victims.json', 'preempt.metavictims.json'].map(fixture),
    // a Pod without a name; a null victims entry or victim, which galaxy read through a nil pointer
    // (a panic, its 500) and floatip refuses
    own: (p) =>
      p.length <= 1 ||
      (p[0] === 'Pod' && nameless(p.slice(1))) ||
      p.length === 2 ||
      ((p.length === 3 || p.length === 4) && p[2] === 'Pods'),
    read: (text) => decodePreemptionArgs(JSON.parse(text), Buffer.from(text)),
  },
  bind: {
    go: 'binding',
    bases: [fixture('bind.json')],
    // a bind with no pod name or node
    own: (p) => p.length === 0 || p[0] === 'PodName' || p[0] === 'Node',
    read: (text) => decodeBindingArgs(JSON.parse(text)),
  },
};

const mutation = fc.record({
  at: fc.nat(),
  value: fc.constantFrom(...VALUES),
  // fold: Go's key matching folds the Kelvin sign to k and the long s to s; escaped: the key written
  // with a \\u escape, which a reader of the raw text must undo as JSON.parse does
  key: fc.constantFrom('same', 'same', 'upper', 'unknown', 'fold', 'escaped'),
});
const requests = (message: Message) =>
  fc
    .record({
      base: fc.nat(message.bases.length - 1),
      mutations: fc.array(mutation, { minLength: 1, maxLength: 3 }),
    })
    .map(({ base, mutations }) => {
      const request = structuredClone(message.bases[base]!);
      const choices = paths(request).filter((p) => !message.own(p));
      const marks: [string, string][] = [];
      const keys: [string, string][] = [];
      // a key written escaped stays the one key of its name: a later mutation of the same field
      // writes there, not beside it (a key written twice exactly is JSON.parse's known gap)
      const escapedKeys = new Map<unknown, Map<string | number, string>>();
      mutations.forEach(({ at, value, key }, i) => {
        const path = choices[at % choices.length]!;
        let parent: unknown = request;
        for (const part of path.slice(0, -1))
          parent = (parent as Record<string | number, unknown> | undefined)?.[part];
        if (typeof parent !== 'object' || parent === null) return;
        const last = path[path.length - 1]!;
        const mark = `floatip-mark-${i}`;
        marks.push([mark, value]);
        let name: string | number =
          Array.isArray(parent) || key === 'same'
            ? last
            : key === 'upper'
              ? String(last).toUpperCase()
              : key === 'fold'
                ? String(last).replace(/k/g, '\u212a').replace(/s/g, '\u017f')
                : key === 'escaped'
                  ? `floatip-key-${i}`
                  : 'unknownField';
        const escapedAs = escapedKeys.get(parent)?.get(last);
        if (escapedAs && (name === last || name === `floatip-key-${i}`)) name = escapedAs;
        else if (name === `floatip-key-${i}`) {
          const real = String(last);
          escapedKeys.set(parent, (escapedKeys.get(parent) ?? new Map()).set(last, name));
          const first = `\\u${real.charCodeAt(0).toString(16).padStart(4, '0')}`;
          keys.push([name, `"${first}${JSON.stringify(real.slice(1)).slice(1)}`]);
          // the original key goes, so that only the escaped one names the field
          delete (parent as Record<string | number, unknown>)[real];
        } else if (key === 'escaped') name = last;
        (parent as Record<string | number, unknown>)[name] = mark;
      });
      let text = JSON.stringify(request);
      for (const [mark, value] of marks) text = text.replace(JSON.stringify(mark), value);
      for (const [placeholder, written] of keys) text = text.replace(JSON.stringify(placeholder), written);
      return text;
    });

function floatipSays(message: Message, text: string): string {
  try {
    message.read(text);
    return 'ok';
  } catch (err) {
    if (err instanceof WireError || err instanceof SyntaxError) return err.message;
    throw err;
  }
}

test.each(Object.entries(MESSAGES))(
  `E2E-GD1 %s: floatip refuses exactly the requests Go's decoder refused (${CASES} mutated kube-scheduler requests, seed ${SEED})`,
  (_, message) => {
    const texts = fc.sample(requests(message), { seed: SEED, numRuns: CASES });
    const go = spawnSync(decoder, [message.go], { input: `${texts.join('\n')}\n`, maxBuffer: 1 << 28 });
    expect(go.status).toBe(0);
    const goSays = go.stdout
      .toString()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as string);
    expect(goSays).toHaveLength(texts.length);
    const differ = texts
      .map((text, i) => ({ text, go: goSays[i]!, floatip: floatipSays(message, text) }))
      .filter((c) => (c.go === 'ok') !== (c.floatip === 'ok'));
    // Go refused some and read others: the comparison means something
    const refused = goSays.filter((s) => s !== 'ok').length;
    expect(refused).toBeGreaterThan(CASES / 20);
    expect(refused).toBeLessThan(CASES - CASES / 20);
    expect(
      differ.slice(0, 5).map((c) => `go: ${c.go}\nfloatip: ${c.floatip}\n${c.text.slice(0, 2000)}`),
    ).toEqual([]);
  },
);
