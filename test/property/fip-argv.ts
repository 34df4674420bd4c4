// kubectl fip's command lines as a stranger types them: subcommands known, recased and unknown;
// every flag, spelled long, short, glued (`-nfoo`, `--output=json`), recased, with one dash too
// many or too few, repeated, without its value; values that are names, addresses, odd bytes,
// control sequences, megabytes, `..` and `a/b`; `--`, `-h`, `--version`.
import fc from 'fast-check';

/** What the seeded cluster holds (names of pods, apps, pools, nodes; addresses), so that some lines find something. */
export const NAMES = [
  'web',
  'web-0',
  'db',
  'p1',
  'node-1',
  'default',
  'kube-system',
  '10.0.100.10',
  '10.0.100.11',
];

const SUBCOMMANDS = ['ls', 'show', 'usage', 'check', 'release'];

const subcommand = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...SUBCOMMANDS) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('LS', 'Show', 'rm', 'get', 'help', '', ' ls', 'ls ', 'relase', 'list'),
  },
);

const FLAGS = [
  '-n',
  '--namespace',
  '--context',
  '--kubeconfig',
  '--service',
  '--config-map',
  '--config-key',
  '--pool-namespace',
  '--resource-name',
  '-o',
  '--output',
  '--pod',
  '--app',
  '--pool',
  '--node',
  '--window',
];
const SWITCHES = ['--parked', '--leaked', '--dry-run', '-h', '--help', '--version', '-V', '--', '-'];

const value = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...NAMES) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'json',
      'yaml',
      'wide',
      'table',
      'JSON',
      'xml',
      '1h',
      '0s',
      '30m',
      '-1h',
      '1e3h',
      '99999999999999999999d',
      'kube-system/floatip:api-port',
      'kube-system/floatingip-config',
      'kube-system/../kube-system/floatingip-config',
      'a/b/c',
      '..',
      '.',
      'a/b',
      '%2e%2e',
      '',
      ' ',
      '-',
      '--pod',
      '10.0.100.999',
      'fd00::1',
      '::ffff:10.0.100.10',
      '/nonexistent/kubeconfig',
      '/tmp',
      '/dev/null',
    ),
  },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom('\u001b[2J', 'a\u0007b', '\u202egnp.exe', 'x\ny', '\ud800') },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 1_000_000 }).map((n) => 'x'.repeat(n)) },
);

/** A flag as typed: its spelling, sometimes odd, and its value in the next word or glued on. */
const flag = fc
  .tuple(
    fc.constantFrom(...FLAGS),
    fc.constantFrom(
      'as-is',
      'as-is',
      'as-is',
      'equals',
      'glued',
      'upper',
      'extra-dash',
      'one-dash',
      'no-value',
    ),
    value,
  )
  .map(([name, how, v]): string[] => {
    switch (how) {
      case 'equals':
        return [`${name}=${v}`];
      case 'glued':
        return [`${name}${v}`];
      case 'upper':
        return [name.toUpperCase(), v];
      case 'extra-dash':
        return [`-${name}`, v];
      case 'one-dash':
        return [name.replace(/^--/, '-'), v];
      case 'no-value':
        return [name];
      default:
        return [name, v];
    }
  });

const word = fc.oneof(
  { weight: 4, arbitrary: flag },
  { weight: 1, arbitrary: fc.constantFrom(...SWITCHES).map((s) => [s]) },
  { weight: 2, arbitrary: value.map((v) => [v]) },
);

/** A line as an operator types it, mostly right: it gets past the parser to the command. */
const typical = fc
  .tuple(
    fc.constantFrom(...SUBCOMMANDS),
    fc.array(
      fc.tuple(
        fc.constantFrom(
          '--pod',
          '--app',
          '--pool',
          '--node',
          '-n',
          '-o',
          '--window',
          '--dry-run',
          '--parked',
        ),
        fc.constantFrom(...NAMES, 'json', 'yaml', 'wide', '1h'),
      ),
      { maxLength: 2 },
    ),
    fc.array(fc.constantFrom(...NAMES), { maxLength: 2 }),
  )
  .map(([sub, flags, words]) => [
    sub,
    ...flags.flatMap(([f, v]) => (f === '--dry-run' || f === '--parked' ? [f] : [f, v])),
    ...words,
  ]);

/** A command line: a subcommand (nearly always) among flags and words before and after it. */
const hostile: fc.Arbitrary<string[]> = fc
  .tuple(
    fc.array(word, { maxLength: 3 }),
    fc.option(subcommand, { freq: 10, nil: undefined }),
    fc.array(word, { maxLength: 5 }),
  )
  .map(([before, sub, after]) => [...before.flat(), ...(sub === undefined ? [] : [sub]), ...after.flat()]);

export const argv: fc.Arbitrary<string[]> = fc.oneof(
  { weight: 2, arbitrary: hostile },
  { weight: 1, arbitrary: typical },
);
