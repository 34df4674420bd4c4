// floatip-cni against what a hostile or careless caller sends, in real network namespaces: stdin
// without end, ADDs of one attachment at once, ipinfos the delegate would fail on after making the
// interface, ipinfos of the wrong types. Each is refused as a CNI error object (exit 1, no stack
// trace) naming what was wrong, and leaves no interface and no state behind.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import { cniEnv, handedOver, kubeconfigFor, linksIn, stateDir, statesIn, underlay } from './helpers.js';
import { ip, Lab, type PluginRun, runPlugin } from './netns.js';
import { buildPlugin, ensureDebianPackages } from './setup.js';

const lab = new Lab();
let build: string | undefined;
let state: string;
let master: string;
let node: string;

const config = (extra: Record<string, unknown> = {}) => underlay(state, master, extra);

function refusal(what: string, run: PluginRun): Record<string, unknown> {
  console.log(`${what}: ${run.stdout.trim().slice(0, 600)}`);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 1, stderr: '' });
  expect(run.stdout).not.toMatch(/\n\s+at /);
  return run.out;
}

const states = () => statesIn(state);
const links = linksIn;
const handed = handedOver;

beforeAll(async () => {
  [, build] = await Promise.all([ensureDebianPackages(), buildPlugin()]);
  state = stateDir();
  ({ node, master } = await lab.nodeWithMaster());
}, 300_000);

afterAll(async () => {
  await lab.destroy();
  if (build) rmSync(build, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
});

test('stdin over 16 MiB is refused (code 6) without reading it all: it was read whole, 1.2 GB of memory for 600 MB', async () => {
  const padded = JSON.stringify(config({ padding: 'x'.repeat(17 * 2 ** 20) }));
  const started = Date.now();
  const out = refusal('stdin of 17 MiB', await runPlugin(cniEnv('ADD', 'h1', 'x', handed()), padded));
  expect(out).toEqual({
    cniVersion: '1.1.0',
    code: 6,
    msg: 'network configuration on stdin is over 16777216 bytes: no configuration is that large',
  });
  expect(Date.now() - started).toBeLessThan(10_000);
});

test('ADDs of one attachment at once: one adds, the others are refused (code 4) and leave its state (the losers’ undo removed it)', async () => {
  const pod = await lab.addNamespace('race');
  const runs = await Promise.all(
    [11, 12, 13, 14, 15, 16].map((n) =>
      runPlugin(
        cniEnv('ADD', 'race1', pod, handed({ ip: `198.51.100.${n}/24`, vlan: 0, gateway: '198.51.100.1' })),
        config(),
        node,
      ),
    ),
  );
  const added = runs.filter((r) => r.code === 0);
  expect(added).toHaveLength(1);
  for (const run of runs.filter((r) => r.code !== 0))
    expect(refusal('a concurrent ADD', run)).toEqual({
      cniVersion: '1.0.0',
      code: 4,
      msg: 'container race1 interface eth0 is already added on network underlay; DEL it first',
    });
  expect(states()).toEqual(['race1:eth0.json']);
  const address = (added[0]!.out.ips as { address: string }[])[0]!.address;
  expect(await ip('-n', pod, '-o', 'addr', 'show', 'dev', 'eth0')).toContain(address);
  expect((await runPlugin(cniEnv('DEL', 'race1', pod), config(), node)).code).toBe(0);
  expect(await links(pod)).toEqual([]);
  expect(states()).toEqual([]);
});

test('galaxy’s daemon hands over ipinfos of one subnet (a pod’s request_ip_range groups): one interface, one default route (the same route twice failed the delegate and left eth0)', async () => {
  const pod = await lab.addNamespace('groups');
  // groups of one subnet as in docs/galaxy.md#the-cni-args-annotation, handed over by galaxy’s daemon
  const run = await runPlugin(
    cniEnv(
      'ADD',
      'g1',
      pod,
      handed(
        { ip: '10.0.0.200/24', vlan: 0, gateway: '10.0.0.1' },
        { ip: '10.0.0.2/24', vlan: 0, gateway: '10.0.0.1' },
        { ip: '10.0.0.60/24', vlan: 0, gateway: '10.0.0.1' },
      ),
    ),
    config(),
    node,
  );
  expect({ code: run.code, stdout: run.stdout }).toMatchObject({ code: 0 });
  expect(run.out).toMatchObject({
    ips: [{ address: '10.0.0.200/24' }, { address: '10.0.0.2/24' }, { address: '10.0.0.60/24' }],
    routes: [{ dst: '0.0.0.0/0', gw: '10.0.0.1' }],
  });
  expect(await ip('-n', pod, 'route', 'show', 'default')).toContain('default via 10.0.0.1 dev eth0');
  expect((await runPlugin(cniEnv('DEL', 'g1', pod), config(), node)).code).toBe(0);
  expect(await links(pod)).toEqual([]);
});

test('galaxy’s daemon hands over ipinfos of two subnets on one VLAN: one interface, one IPv4 default route, the first’s', async () => {
  const pod = await lab.addNamespace('twonets');
  const run = await runPlugin(
    cniEnv(
      'ADD',
      't1',
      pod,
      handed(
        { ip: '10.0.0.200/24', vlan: 0, gateway: '10.0.0.1' },
        { ip: '10.0.1.3/24', vlan: 0, gateway: '10.0.1.1' },
      ),
    ),
    config(),
    node,
  );
  expect({ code: run.code, stdout: run.stdout }).toMatchObject({ code: 0 });
  expect(run.out).toMatchObject({
    ips: [{ address: '10.0.0.200/24' }, { address: '10.0.1.3/24' }],
    routes: [{ dst: '0.0.0.0/0', gw: '10.0.0.1' }],
  });
  expect((await ip('-n', pod, 'route', 'show', 'default')).trim().split('\n')).toEqual([
    expect.stringContaining('default via 10.0.0.1 dev eth0'),
  ]);
  expect((await runPlugin(cniEnv('DEL', 't1', pod), config(), node)).code).toBe(0);
  expect(await links(pod)).toEqual([]);
});

test('ipinfos the delegate fails on after making the interface are refused first (code 102), and nothing is left', async () => {
  const pod = await lab.addNamespace('badinfo');
  const v4 = (n: number, extra: Record<string, unknown> = {}) => ({
    ip: `198.51.100.${n}/24`,
    vlan: 0,
    gateway: '198.51.100.1',
    ...extra,
  });
  const cases: [string, unknown[], string][] = [
    [
      'gateway outside the subnet',
      [v4(20, { gateway: '203.0.113.1' })],
      'ipinfo {"ip":"198.51.100.20/24","vlan":0,"gateway":"203.0.113.1"}: gateway 203.0.113.1 is outside 198.51.100.20/24',
    ],
    [
      'IPv6 gateway outside the subnet',
      [{ ip: '2001:db8::20/64', vlan: 0, gateway: '2001:db9::1' }],
      'ipinfo {"ip":"2001:db8::20/64","vlan":0,"gateway":"2001:db9::1"}: gateway 2001:db9::1 is outside 2001:db8::20/64',
    ],
    [
      'prefix length 0',
      [v4(21, { ip: '198.51.100.21/0' })],
      'ipinfo {"ip":"198.51.100.21/0","vlan":0,"gateway":"198.51.100.1"}: prefix length 0 is no subnet',
    ],
    [
      'one address twice',
      [v4(22), { ip: '198.51.100.22/25', vlan: 0, gateway: '198.51.100.1' }],
      'ipinfo {"ip":"198.51.100.22/25","vlan":0,"gateway":"198.51.100.1"}: address 198.51.100.22 is given twice',
    ],
    // the tester's: macvlan made eth0, then failed on the route ("invalid argument") and left it
    [
      'gateway the broadcast address',
      [v4(24, { gateway: '198.51.100.255' })],
      'ipinfo {"ip":"198.51.100.24/24","vlan":0,"gateway":"198.51.100.255"}: gateway 198.51.100.255 is the broadcast address of 198.51.100.24/24',
    ],
    [
      'IPv6 gateway the address itself',
      [{ ip: '2001:db8::26/64', vlan: 0, gateway: '2001:db8::26' }],
      'ipinfo {"ip":"2001:db8::26/64","vlan":0,"gateway":"2001:db8::26"}: gateway 2001:db8::26 is the address itself',
    ],
    // failed after making eth0 ("network is unreachable", "cannot assign requested address"), or
    // configured as given (0.0.0.5, 127.0.0.5, 255.255.255.255: rc 0, an address nothing routes to)
    [
      'a multicast address',
      [{ ip: '224.1.1.5/24', vlan: 0, gateway: '224.1.1.1' }],
      'ipinfo {"ip":"224.1.1.5/24","vlan":0,"gateway":"224.1.1.1"}: address 224.1.1.5 is multicast (224.0.0.0/4), which no pod interface holds',
    ],
    [
      'an address of 0.0.0.0/8',
      [{ ip: '0.0.0.5/8', vlan: 0, gateway: '' }],
      'ipinfo {"ip":"0.0.0.5/8","vlan":0,"gateway":""}: address 0.0.0.5 is "this network" (0.0.0.0/8), which no pod interface holds',
    ],
    [
      'a loopback address',
      [{ ip: '127.0.0.5/8', vlan: 0, gateway: '' }],
      'ipinfo {"ip":"127.0.0.5/8","vlan":0,"gateway":""}: address 127.0.0.5 is loopback (127.0.0.0/8), which no pod interface holds',
    ],
    [
      'the limited broadcast address',
      [{ ip: '255.255.255.255/24', vlan: 0, gateway: '' }],
      'ipinfo {"ip":"255.255.255.255/24","vlan":0,"gateway":""}: address 255.255.255.255 is the limited broadcast address, which no pod interface holds',
    ],
    [
      'an IPv6 multicast address',
      [{ ip: 'ff05::5/64', vlan: 0, gateway: '' }],
      'ipinfo {"ip":"ff05::5/64","vlan":0,"gateway":""}: address ff05::5 is multicast (ff00::/8), which no pod interface holds',
    ],
    [
      'the IPv6 loopback address',
      [{ ip: '::1/64', vlan: 0, gateway: '::2' }],
      'ipinfo {"ip":"::1/64","vlan":0,"gateway":"::2"}: address ::1 is loopback (::1), which no pod interface holds',
    ],
    [
      'the IPv6 unspecified address',
      [{ ip: '::/64', vlan: 0, gateway: '' }],
      'ipinfo {"ip":"::/64","vlan":0,"gateway":""}: address :: is the unspecified address, which no pod interface holds',
    ],
    // configured as 198.51.100.23/0 (rc 0), and read as 198.51.100.23 by the ownership check
    [
      'an IPv4-mapped IPv6 address',
      [{ ip: '::ffff:198.51.100.23/24', vlan: 0, gateway: '' }],
      'ipinfo {"ip":"::ffff:198.51.100.23/24","vlan":0,"gateway":""}: address ::ffff:198.51.100.23 is an IPv4-mapped IPv6 address: write the IPv4 address',
    ],
    [
      'an IPv4-mapped IPv6 address in hex',
      [{ ip: '::ffff:c633:6417/120', vlan: 0, gateway: '::ffff:c633:6401' }],
      'ipinfo {"ip":"::ffff:c633:6417/120","vlan":0,"gateway":"::ffff:c633:6401"}: address ::ffff:c633:6417 is an IPv4-mapped IPv6 address: write the IPv4 address',
    ],
    [
      'thousands of ipinfos',
      Array.from({ length: 1000 }, (_, i) => ({ ip: `10.${i >> 8}.${i & 255}.1/8`, vlan: 0, gateway: '' })),
      '1000 ipinfos: a pod has at most 64, one per request_ip_range group',
    ],
  ];
  for (const [what, ipinfos, msg] of cases) {
    expect(
      refusal(what, await runPlugin(cniEnv('ADD', 'b1', pod, handed(...ipinfos)), config(), node)),
    ).toEqual({
      cniVersion: '1.0.0',
      code: 102,
      msg,
    });
    expect(await links(pod)).toEqual([]);
    expect(states()).toEqual([]);
  }
  // an IPv6 router's link-local address is a gateway outside every subnet that works
  const linkLocal = await runPlugin(
    cniEnv('ADD', 'b2', pod, handed({ ip: '2001:db8::25/64', vlan: 0, gateway: 'fe80::1' })),
    config(),
    node,
  );
  expect({ code: linkLocal.code, stdout: linkLocal.stdout }).toMatchObject({ code: 0 });
  expect(await ip('-n', pod, '-6', 'route', 'show', 'default')).toContain('default via fe80::1 dev eth0');
  expect((await runPlugin(cniEnv('DEL', 'b2', pod), config(), node)).code).toBe(0);
});

test('ipinfos of the wrong type, handed over or in the annotation: a VLAN id as a string, an entry with no string ip, common or ipinfos of the wrong shape, an annotation that is no string', async () => {
  // handed over by galaxy's daemon: `"vlan":"5"` was VLAN 0, the untagged network, and an entry
  // with no string ip was dropped, the pod one address short
  for (const [ipinfos, msg] of [
    [
      [{ ip: '198.51.100.23/24', vlan: '5', gateway: '198.51.100.1' }],
      'ipinfo 0 {"ip":"198.51.100.23/24","vlan":"5","gateway":"198.51.100.1"} is not {"ip": string, "vlan": number, "gateway": string}',
    ],
    [
      [{ ip: 5 }, { ip: '198.51.100.24/24', vlan: 0, gateway: '198.51.100.1' }],
      'ipinfo 0 {"ip":5} is not {"ip": string, "vlan": number, "gateway": string}',
    ],
  ] as const)
    expect(refusal(msg, await runPlugin(cniEnv('ADD', 'w1', 'x', handed(...ipinfos)), config()))).toEqual({
      cniVersion: '1.0.0',
      code: 102,
      msg: `ipinfos argument: unmarshal pod cni args: ${msg}`,
      details: JSON.stringify(ipinfos),
    });
  // pasted into the annotation's text this was JSON (`{"common":{"ipinfos":1},"x":{"y":2}}`)
  expect(
    refusal(
      'ipinfos that are no JSON',
      await runPlugin(cniEnv('ADD', 'w1', 'x', { ipinfos: '1},"x":{"y":2' }), config()),
    ),
  ).toMatchObject({ code: 102, msg: expect.stringMatching(/^ipinfos argument: not JSON: /) });
  expect(states()).toEqual([]);

  const annotations: Record<string, unknown> = {
    vlanstring: JSON.stringify({
      common: { ipinfos: [{ ip: '198.51.100.30/24', vlan: '5', gateway: '198.51.100.1' }] },
    }),
    commonnumber: JSON.stringify({ common: 5 }),
    ipinfosobject: JSON.stringify({ common: { ipinfos: { ip: '198.51.100.31/24' } } }),
    notastring: { common: { ipinfos: [] } },
  };
  const server: Server = createServer((req, res) => {
    const name = req.url!.split('/').pop()!;
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        metadata: { name, uid: 'u', annotations: { 'k8s.v1.cni.galaxy.io/args': annotations[name] } },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kubeconfig = kubeconfigFor(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
  const add = (name: string) =>
    runPlugin(
      cniEnv('ADD', 'a1', 'x', { K8S_POD_NAMESPACE: 'default', K8S_POD_NAME: name }),
      config({ kubeconfig }),
    );
  try {
    const annotationError = (name: string, what: string) => ({
      cniVersion: '1.0.0',
      code: 102,
      msg: `pod default/${name} annotation k8s.v1.cni.galaxy.io/args: unmarshal pod cni args: ${what}`,
      details: annotations[name],
    });
    expect(refusal('vlan as a string', await add('vlanstring'))).toEqual(
      annotationError(
        'vlanstring',
        'ipinfo 0 {"ip":"198.51.100.30/24","vlan":"5","gateway":"198.51.100.1"} is not {"ip": string, "vlan": number, "gateway": string}',
      ),
    );
    // were "no ipinfos after the wait" (101): no wait makes them any better
    expect(refusal('common a number', await add('commonnumber'))).toEqual(
      annotationError('commonnumber', 'common is not an object'),
    );
    expect(refusal('ipinfos an object', await add('ipinfosobject'))).toEqual(
      annotationError('ipinfosobject', 'ipinfos is not a list'),
    );
    // a CNI error's details is a string: it was the annotation's object
    expect(refusal('annotation no string', await add('notastring'))).toMatchObject({
      code: 104,
      msg: 'getting pod default/notastring: the answer is not a pod object: annotation k8s.v1.cni.galaxy.io/args is not a string',
      details: expect.any(String),
    });
  } finally {
    server.close();
  }
});

test('a kubeconfig written by hand: lists of the wrong shape, another scheme, a token with a line break are named as the kubeconfig’s fault (they were TypeErrors, code 100); a server under a path prefix is asked there', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'floatip-cni-kc-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const status = (text: string) => {
    writeFileSync(kubeconfig, text);
    // run here, not in the node that has the lab's master: a delegate that names none
    return runPlugin(
      cniEnv('STATUS', '', ''),
      config({ cniVersion: '1.1.0', kubeconfig, delegate: { type: 'macvlan', mode: 'bridge' } }),
    );
  };
  const server = 'clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]';
  const cases: [string, string][] = [
    ['clusters: 5', 'clusters is not a list of {name, ...}'],
    ['clusters: [null]', 'clusters is not a list of {name, ...}'],
    [`contexts: [5]\n${server}`, 'contexts is not a list of {name, ...}'],
    ['clusters: [{name: c, cluster: {server: "ftp://x"}}]', 'cluster server ftp://x/ is not http(s)'],
    [
      `users: [{name: u, user: {token: "abc\\ndef"}}]\n${server}`,
      'the token has a character an HTTP header cannot carry (a line break?)',
    ],
  ];
  for (const [text, what] of cases)
    expect(refusal(`kubeconfig ${text}`, await status(text))).toEqual({
      cniVersion: '1.1.0',
      code: 50,
      msg: `floatip-cni cannot serve ADD: kubeconfig ${kubeconfig}: ${what}`,
    });
  // Rancher's kind of server URL: the API server is under a path, which client-go keeps
  const asked: string[] = [];
  const proxy: Server = createServer((req, res) => {
    asked.push(req.url!);
    res.statusCode = /^\/k8s\/clusters\/c-1\/apis?\//.test(req.url!) ? 404 : 502;
    res.end('{"kind":"Status","message":"not found"}');
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(proxy.address() as { port: number }).port}/k8s/clusters/c-1`;
    const run = await status(`clusters: [{name: c, cluster: {server: "${url}"}}]`);
    expect({ code: run.code, stdout: run.stdout, asked }).toEqual({
      code: 0,
      stdout: '',
      asked: [
        '/k8s/clusters/c-1/api/v1/namespaces/default/pods/floatip-cni-status-probe',
        '/k8s/clusters/c-1/apis/galaxy.k8s.io/v1alpha1/floatingips/0.0.0.0',
      ],
    });
  } finally {
    proxy.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a CNI_IFNAME libcni refuses is the runtime’s error (code 4), not the delegate’s (105): 16 bytes in 8 characters, `.`, `..`', async () => {
  for (const ifname of ['éééééééé', '.', '..', 'eth0123456789012'])
    expect(
      refusal(
        `CNI_IFNAME ${ifname}`,
        await runPlugin(
          cniEnv('ADD', 'i1', 'x', handed({ ip: '198.51.100.40/24', vlan: 0, gateway: '' }), ifname),
          config(),
        ),
      ),
    ).toEqual({
      cniVersion: '1.0.0',
      code: 4,
      msg: `CNI_IFNAME ${JSON.stringify(ifname)} is not an interface name (at most 15 bytes, no '/', ':' or space, not '.' or '..')`,
    });
  expect(states()).toEqual([]);
});
