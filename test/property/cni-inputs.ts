// What a runtime (or a careless or hostile caller) hands floatip-cni: the CNI_* environment, each
// variable valid, odd, huge or missing, and the network configuration on stdin, valid and mutated
// at any node, or not JSON. Every input fails or answers before a network namespace or a device is
// touched: CNI_NETNS names no file, CNI_PATH holds no delegate, the kubeconfig names no file or a
// port where nothing listens. STATE and EMPTY_PATH stand for the run's own directories.
import fc from 'fast-check';
import { hostileValue, mutated } from './json-tree.js';
import { notJson } from './bodies.js';

/** Replaced by the run's state directory, its empty CNI_PATH directory, and its kubeconfigs. */
export const STATE = '@STATE@';
export const EMPTY_PATH = '@EMPTY_PATH@';
export const KUBECONFIG_UNREACHABLE = '@KUBECONFIG@';
/** No such directory exists: a namespace "named" under it cannot be entered. */
export const NO_NETNS = '/tmp/floatip-no-such-netns';

export const COMMANDS = ['ADD', 'DEL', 'CHECK', 'VERSION', 'STATUS', 'GC'] as const;

/** Mostly `usual`, now and then one of `others`: a configuration with one thing wrong at a time. */
const mostly = <T>(usual: T, ...others: T[]) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant(usual) },
    { weight: 1, arbitrary: fc.constantFrom(...others) },
  );

const odd = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom(
    ' ',
    '\t',
    '\n',
    '\u00ff',
    '\ud83d\ude00',
    '\u202e',
    '\x7f',
    '\x1b[31m',
    '$(id)',
    '`id`',
    '*',
  ),
);
const huge = fc.integer({ min: 1_000, max: 100_000 }).map((n) => 'x'.repeat(n));
/** An environment value: env strings cannot hold NUL, so a NUL is dropped (as execve would cut there). */
const envText = (valid: fc.Arbitrary<string>) =>
  fc
    .oneof({ weight: 30, arbitrary: valid }, { weight: 2, arbitrary: odd }, { weight: 1, arbitrary: huge })
    .map((s) => s.replace(/\0/g, ''));

const command = fc.oneof(
  { weight: 8, arbitrary: fc.constant('ADD') },
  { weight: 8, arbitrary: fc.constantFrom(...COMMANDS) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'add',
      'Add',
      'del',
      'version',
      'UNKNOWN',
      'ADD ',
      ' ADD',
      'ADD\n',
      'ADDX',
      '',
      'GET',
    ),
  },
  { weight: 1, arbitrary: envText(fc.constant('ADD')) },
);

const podArgs = fc
  .record({
    namespace: fc.oneof(
      { weight: 8, arbitrary: mostly('default', '', '..', 'A', 'a/b', '-a') },
      { weight: 1, arbitrary: odd },
    ),
    name: fc.oneof(
      { weight: 8, arbitrary: mostly('web', '', '..', 'a..b', 'x'.repeat(300)) },
      { weight: 1, arbitrary: odd },
    ),
    uid: fc.oneof(fc.uuid(), odd),
    ipinfos: fc.option(
      fc.constantFrom(
        '[{"ip":"10.0.100.10/24","vlan":0,"gateway":"10.0.100.1"}]',
        '[]',
        '[{"ip":"10.0.100.10/24","vlan":"5"}]',
        '[{',
        '1},"x":{"y":2',
      ),
      { nil: undefined },
    ),
  })
  .map(({ namespace, name, uid, ipinfos }) =>
    [
      'IgnoreUnknown=1',
      `K8S_POD_NAMESPACE=${namespace}`,
      `K8S_POD_NAME=${name}`,
      `K8S_POD_INFRA_CONTAINER_ID=sandbox`,
      `K8S_POD_UID=${uid}`,
      ...(ipinfos === undefined ? [] : [`ipinfos=${ipinfos}`]),
    ].join(';'),
  );

/** The CNI_* variables: each valid, odd or huge, or missing. */
/** A variable, now and then missing. */
const maybe = (value: fc.Arbitrary<string>) => fc.option(value, { freq: 20, nil: undefined });

export const environment: fc.Arbitrary<Record<string, string>> = fc
  .record({
    CNI_COMMAND: maybe(command),
    CNI_CONTAINERID: maybe(envText(mostly('c1', 'a'.repeat(64), '.', '..', '../x', 'a/b', '-x', 'a:b'))),
    CNI_NETNS: maybe(
      envText(
        fc.oneof(
          { weight: 6, arbitrary: fc.constant(`${NO_NETNS}/ns1`) },
          { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((s) => `${NO_NETNS}/${s}`) },
          {
            weight: 1,
            arbitrary: fc.constantFrom('', 'relative/ns', `${NO_NETNS}/../${NO_NETNS.slice(1)}/x`),
          },
        ),
      ),
    ),
    CNI_IFNAME: maybe(
      envText(mostly('eth0', 'eth1', '', '.', '..', 'a/b', 'a:b', 'a b', 'x'.repeat(16), 'é'.repeat(8))),
    ),
    CNI_PATH: maybe(
      envText(mostly(EMPTY_PATH, `${EMPTY_PATH}:/nonexistent`, '/nonexistent', 'relative', '::::', '')),
    ),
    CNI_ARGS: maybe(
      fc.oneof(
        { weight: 8, arbitrary: podArgs },
        {
          weight: 1,
          arbitrary: envText(fc.constantFrom(';;;', '=', 'a', 'IgnoreUnknown=1;;=x;K8S_POD_NAME')),
        },
      ),
    ),
  })
  .map(
    (env) =>
      Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>,
  );

const cniVersion = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('1.0.0', '1.1.0', '1.1.0') },
  { weight: 2, arbitrary: fc.constantFrom('0.3.0', '0.3.1', '0.4.0') },
  {
    weight: 1,
    arbitrary: fc.constantFrom('0.1.0', '0.2.0', '1.2.0', '2.0.0', '', 'v1.0.0', '1.0', '1.0.0 '),
  },
);

const ipinfo = { ip: '10.0.100.10/24', vlan: 0, gateway: '10.0.100.1' };

const prevResult = fc.constantFrom<unknown>(
  undefined,
  {
    cniVersion: '1.0.0',
    interfaces: [{ name: 'eth0', sandbox: `${NO_NETNS}/ns1` }],
    ips: [{ address: '10.0.0.2/24', interface: 0 }],
  },
  { cniVersion: '0.2.0', ip4: { ip: '10.0.0.2/24', gateway: '10.0.0.1', routes: [{ dst: '0.0.0.0/0' }] } },
  { cniVersion: '1.0.0', interfaces: [{}] },
  { interfaces: 'eth0' },
  { ips: [{ address: 1 }] },
  { routes: [{ gw: '10.0.0.1' }] },
  [],
  'prev',
);

/** A network configuration as a runtime would send it, with a field or two chosen among the odd ones. */
export const validConfig = fc
  .record(
    {
      cniVersion,
      name: mostly('underlay', '', 'a b', '../x', '-x'),
      type: fc.constant('floatip-cni'),
      stateDir: fc.constant(STATE),
      kubeconfig: fc.constantFrom('/nonexistent/kubeconfig', KUBECONFIG_UNREACHABLE),
      annotationTimeoutSeconds: mostly(0.1, 0, -1, 3601, 1e300, 0.0001),
      requestTimeoutSeconds: mostly(0.5, 0),
      delegateTimeoutSeconds: mostly(1, 0),
      delegate: mostly<unknown>(
        { type: 'macvlan', master: 'floatip-no-such-master', mode: 'bridge' },
        { type: 'vlan', master: 'floatip-no-such-master', ipam: { type: 'host-local' } },
        { type: '..' },
        { type: 'a/b' },
        {},
        'macvlan',
        null,
      ),
      ipam: fc.constantFrom<unknown>({ type: 'host-local', subnet: '10.0.0.0/24' }, {}),
      // galaxy's daemon's handed-over ipinfos mostly, so that ADD gets as far as the delegate
      args: fc.oneof(
        {
          weight: 6,
          arbitrary: fc.constantFrom<unknown>(
            { cni: { ipinfos: [ipinfo] } },
            { ipinfos: [ipinfo] },
            { ipinfos: JSON.stringify([ipinfo]) },
          ),
        },
        {
          weight: 2,
          arbitrary: fc.constantFrom<unknown>(
            { ipinfos: [] },
            { ipinfos: [{ ...ipinfo, vlan: 70000 }] },
            { cni: 'x' },
            {},
          ),
        },
      ),
      prevResult: fc.oneof(
        { weight: 3, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: prevResult },
      ),
      'cni.dev/valid-attachments': fc.constantFrom<unknown>(
        [{ containerID: 'c1', ifname: 'eth0' }],
        [],
        [{}],
        'all',
      ),
    },
    {
      requiredKeys: [
        'cniVersion',
        'name',
        'type',
        'stateDir',
        'delegate',
        'annotationTimeoutSeconds',
        'requestTimeoutSeconds',
        'delegateTimeoutSeconds',
        'cni.dev/valid-attachments',
        'args',
      ],
    },
  )
  .map((c) => JSON.parse(JSON.stringify(c)) as Record<string, unknown>);

const hostile = hostileValue(['ADD', 'underlay', 'macvlan', '1.0.0', 'eth0', STATE, EMPTY_PATH], {
  maxString: 1_000_000,
});

/** stdin: valid, mutated at any node, not JSON, or over the 16 MiB the plugin reads. */
export const stdin: fc.Arbitrary<string | Buffer> = fc.oneof(
  { weight: 8, arbitrary: validConfig.map((c) => JSON.stringify(c)) },
  { weight: 6, arbitrary: mutated(validConfig, hostile) },
  { weight: 2, arbitrary: notJson(validConfig) },
);

export interface Case {
  readonly env: Readonly<Record<string, string>>;
  readonly stdin: string | Buffer;
}

/**
 * A runtime's ordinary call, varied only in what reaches past the checks of the configuration and
 * the environment: handed-over ipinfos, the kubeconfig, prevResult, the pod named. The hostile
 * cases seldom get that far (one thing wrong of many stops them first).
 */
const ordinary: fc.Arbitrary<Case> = fc
  .record({
    command: fc.constantFrom('ADD', 'ADD', 'ADD', 'DEL', 'CHECK', 'GC', 'STATUS'),
    cniVersion: fc.constantFrom('1.0.0', '1.1.0'),
    // mostly none, as under galaxy's daemon: the handed-over ipinfos are then taken as they come
    kubeconfig: fc.constantFrom(
      undefined,
      undefined,
      undefined,
      '/nonexistent/kubeconfig',
      KUBECONFIG_UNREACHABLE,
    ),
    args: fc.constantFrom<unknown>(
      { cni: { ipinfos: [ipinfo] } },
      { ipinfos: [ipinfo, { ...ipinfo, ip: '10.0.101.10/24', gateway: '10.0.101.1', vlan: 7 }] },
      { ipinfos: [{ ...ipinfo, ip: 'fd00::10/64', gateway: 'fd00::1' }] },
      { ipinfos: [{ ...ipinfo, gateway: '10.0.200.1' }] },
      { ipinfos: [{ ip: '10.0.100.10/24' }] },
      undefined,
    ),
    prevResult,
    cniArgs: fc.oneof(podArgs, fc.constant('IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web')),
  })
  .map(({ command, cniVersion, kubeconfig, args, prevResult: prev, cniArgs }) => ({
    env: {
      CNI_COMMAND: command,
      CNI_CONTAINERID: 'c1',
      CNI_NETNS: `${NO_NETNS}/ns1`,
      CNI_IFNAME: 'eth0',
      CNI_PATH: EMPTY_PATH,
      CNI_ARGS: cniArgs,
    },
    stdin: JSON.stringify({
      cniVersion,
      name: 'underlay',
      type: 'floatip-cni',
      stateDir: STATE,
      kubeconfig,
      annotationTimeoutSeconds: 0.1,
      requestTimeoutSeconds: 0.5,
      delegate: { type: 'macvlan', master: 'floatip-no-such-master', mode: 'bridge' },
      args,
      prevResult: prev,
      'cni.dev/valid-attachments': [{ containerID: 'c1', ifname: 'eth0' }],
    }),
  }));

export const cases: fc.Arbitrary<Case> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ env: environment, stdin }) },
  { weight: 1, arbitrary: ordinary },
);
