// galaxy's own end-to-end CNI scenarios (tkestack/galaxy e2e/: k8s-vlan, underlay/veth, veth,
// cni-request), played against floatip-cni where they test something floatip-cni claims, in real
// network namespaces: a node namespace whose macvlan master is one end of a veth pair, the pod's
// gateway at the other end, and the pod an empty namespace. What a user sees is asserted: the CNI
// result, the exit code, `ip addr` and `ip route` in the pod, and pings to and from its gateway.
//
// This kernel has no 802.1Q, bridge, ipvlan or dummy devices. galaxy's VLAN scenarios are played
// through the macvlan delegate, whose VLAN form is "the master becomes the node's `<master>.<vlan>`"
// (README): the node's `<master>.2` here is a veth of that name standing in for the 802.1Q
// interface, so what is checked is that an ipinfo's VLAN puts the pod on that interface, not the
// tagging itself (the vlan delegate's real 802.1Q path is errors.test.ts's, where the kernel allows).
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { CNI_BIN, buildPlugin, ensureDebianPackages } from './setup.js';
import { createPod, kubeconfigFor, startPodSource } from './helpers.js';
import { ip, Lab, NODE_API_PORT, pings, type PluginRun, runPlugin } from './netns.js';

const lab = new Lab();
let build: string | undefined;
let server: EmbeddedApiServer;
let kubeconfig: string;
let state: string;
let node: string;
let master: string;
/** The namespace at the far end of the master: the pods' VLAN-0 gateway lives there. */
let gateway: string;

/** galaxy's network configuration for galaxy-k8s-vlan, with floatip-cni named in its place. */
const galaxyConfig = (extra: Record<string, unknown> = {}) => ({
  cniVersion: '0.4.0',
  name: 'myvlan',
  type: 'floatip-cni',
  stateDir: state,
  delegate: { type: 'macvlan', master, mode: 'bridge' },
  ...extra,
});

/**
 * An ipinfo as galaxy's e2e helper writes it: the subnet's first address as the gateway, and the
 * routable_subnet field that galaxy's annotation carries.
 */
function ipinfo(cidr: string, vlan: number): Record<string, unknown> {
  const [address, bits] = cidr.split('/') as [string, string];
  const host = 2 ** (32 - Number(bits));
  const n = address.split('.').reduce((v, o) => v * 256 + Number(o), 0);
  const net = Math.floor(n / host) * host;
  const dotted = (v: number) => [24, 16, 8, 0].map((s) => (v >>> s) & 255).join('.');
  return { ip: cidr, vlan, gateway: dotted(net + 1), routable_subnet: `${dotted(net)}/${bits}` };
}

/**
 * The CNI_* variables as galaxy's e2e helper sets them: `CNI_ARGS` is only galaxy's argument string
 * (`ipinfos=[...]`, no IgnoreUnknown), the namespace under /var/run/netns, eth0.
 */
function galaxyEnv(
  command: string,
  containerId: string,
  pod: string,
  cniArgs = '',
  ifname = 'eth0',
): Record<string, string> {
  return {
    CNI_COMMAND: command,
    CNI_CONTAINERID: containerId,
    CNI_NETNS: pod === '' ? '' : `/var/run/netns/${pod}`,
    CNI_IFNAME: ifname,
    CNI_PATH: CNI_BIN,
    CNI_ARGS: cniArgs,
  };
}

const ipinfosArg = (...infos: Record<string, unknown>[]) => `ipinfos=${JSON.stringify(infos)}`;

/** The plugin run inside the node namespace, as galaxy's daemon (or kubelet) would run it there. */
const onNode = (env: Record<string, string>, config: unknown): Promise<PluginRun> =>
  runPlugin(env, config, node);

/** An ADD that must succeed: exit 0, nothing on stderr; its result. */
function added(run: PluginRun): Record<string, unknown> {
  expect({ code: run.code, stderr: run.stderr, out: run.code === 0 ? 'a result' : run.out }).toEqual({
    code: 0,
    stderr: '',
    out: 'a result',
  });
  return run.out;
}

/** `inet` addresses of `dev` in the pod, as `ip -4 addr` prints them. */
async function inet(pod: string, dev: string): Promise<string[]> {
  const out = await ip('-n', pod, '-4', '-o', 'addr', 'show', 'dev', dev);
  return [...out.matchAll(/inet (\S+)/g)].map((m) => m[1]!);
}

/** The pod's IPv4 routes, one line each, as `ip route` prints them (trailing spaces trimmed). */
async function routes(pod: string): Promise<string[]> {
  return (await ip('-n', pod, '-4', 'route', 'show'))
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** The pod's links, by name. */
async function links(pod: string): Promise<string[]> {
  const out = await ip('-n', pod, '-o', 'link', 'show');
  return [...out.matchAll(/^\d+: ([^:@]+)/gm)].map((m) => m[1]!);
}

/** The ifindex, in the node, of the link a pod interface (a macvlan) sits on. */
async function parentIndex(pod: string, dev: string): Promise<number> {
  const out = await ip('-n', pod, '-o', 'link', 'show', 'dev', dev);
  return Number(/@if(\d+)/.exec(out)![1]);
}

async function nodeIndex(dev: string): Promise<number> {
  return Number(/^(\d+):/.exec(await ip('-n', node, '-o', 'link', 'show', 'dev', dev))![1]);
}

/**
 * The node's VLAN interface `<master>.<vlan>` as the macvlan delegate needs it, stood in for by a
 * veth of that name (no 802.1Q here), its peer in a gateway namespace of its own; made once, and
 * given the gateway address `gw`.
 */
const standIns = new Map<number, { dev: string; gatewayNs: string }>();
async function vlanStandIn(vlan: number, gw: string): Promise<{ dev: string; gatewayNs: string }> {
  const peer = `${lab.prefix}g${vlan}`;
  let made = standIns.get(vlan);
  if (!made) {
    made = { dev: `${master}.${vlan}`, gatewayNs: await lab.addNamespace(`gw${vlan}`) };
    await ip(
      'link',
      'add',
      made.dev,
      'netns',
      node,
      'type',
      'veth',
      'peer',
      'name',
      peer,
      'netns',
      made.gatewayNs,
    );
    await ip('-n', node, 'link', 'set', made.dev, 'up');
    await ip('-n', made.gatewayNs, 'link', 'set', peer, 'up');
    standIns.set(vlan, made);
  }
  await ip('-n', made.gatewayNs, 'addr', 'add', gw, 'dev', peer);
  return made;
}

const stateFiles = (): string[] =>
  existsSync(join(state, 'myvlan')) ? readdirSync(join(state, 'myvlan')) : [];

beforeAll(async () => {
  [, build] = await Promise.all([ensureDebianPackages(), buildPlugin()]);
  server = await startPodSource();
  state = mkdtempSync(join(tmpdir(), 'floatip-cni-galaxy-'));
  ({ node, master } = await lab.nodeWithMaster());
  gateway = lab.ns('other');
  // the far end of the master is the VLAN-0 pods' gateway, 192.168.0.65/26 (galaxy's bridge test)
  await ip('-n', gateway, 'addr', 'add', '192.168.0.65/26', 'dev', `${lab.prefix}o`);
  await lab.exposeApiServer(server.url, [node]);
  kubeconfig = kubeconfigFor(`http://127.0.0.1:${NODE_API_PORT}`);
}, 300_000);

afterAll(async () => {
  await lab.destroy();
  if (build) rmSync(build, { recursive: true, force: true });
  if (state) rmSync(state, { recursive: true, force: true });
  await server?.close();
});

// galaxy e2e/k8s-vlan/bridge_test.go "bridge" and "pure switch": one ipinfo of VLAN 0 in CNI_ARGS;
// the pod's eth0 holds 192.168.0.68/26 with its default route via the subnet's gateway, the pod is
// reachable, and DEL removes what ADD made. (galaxy's bridge and host veth are its own topology.)
test('galaxy bridge/pure-switch: a VLAN-0 ipinfo in CNI_ARGS gives eth0 its address and default route via the gateway, reachable both ways; DEL removes it, twice', async () => {
  const pod = await lab.addNamespace('bridge');
  const args = ipinfosArg(ipinfo('192.168.0.68/26', 0));
  const result = added(await onNode(galaxyEnv('ADD', 'test_bridge', pod, args), galaxyConfig()));
  expect(result).toEqual({
    cniVersion: '0.4.0',
    interfaces: [
      {
        name: 'eth0',
        mac: expect.stringMatching(/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/),
        sandbox: `/var/run/netns/${pod}`,
      },
    ],
    ips: [{ version: '4', interface: 0, address: '192.168.0.68/26', gateway: '192.168.0.65' }],
    routes: [{ dst: '0.0.0.0/0', gw: '192.168.0.65' }],
    dns: {},
  });
  expect(await inet(pod, 'eth0')).toEqual(['192.168.0.68/26']);
  expect(await routes(pod)).toEqual([
    'default via 192.168.0.65 dev eth0',
    '192.168.0.64/26 dev eth0 proto kernel scope link src 192.168.0.68',
  ]);
  expect(await parentIndex(pod, 'eth0')).toBe(await nodeIndex(master));
  expect(await pings(pod, '192.168.0.65')).toBe(true);
  expect(await pings(gateway, '192.168.0.68')).toBe(true);

  // a second ADD of the same attachment is refused and leaves the first as it was
  const again = await onNode(galaxyEnv('ADD', 'test_bridge', pod, args), galaxyConfig());
  expect({ code: again.code, errorCode: again.out.code }).toEqual({ code: 1, errorCode: 4 });
  expect(await inet(pod, 'eth0')).toEqual(['192.168.0.68/26']);

  // galaxy's CmdDel: the same network configuration, the namespace, no CNI_ARGS; DEL answers nothing
  const del = await onNode(galaxyEnv('DEL', 'test_bridge', pod), galaxyConfig());
  expect({ code: del.code, stdout: del.stdout, stderr: del.stderr }).toEqual({
    code: 0,
    stdout: '',
    stderr: '',
  });
  expect(await links(pod)).toEqual(['lo']);
  expect(await pings(gateway, '192.168.0.68')).toBe(false);
  expect(stateFiles()).toEqual([]);
  const delAgain = await onNode(galaxyEnv('DEL', 'test_bridge', pod), galaxyConfig());
  expect({ code: delAgain.code, stdout: delAgain.stdout }).toEqual({ code: 0, stdout: '' });
}, 60_000);

// galaxy e2e/k8s-vlan/vlan_test.go "vlan" and e2e/underlay/veth/veth_test.go "vlan": one ipinfo of
// VLAN 2; the pod lands on the node's VLAN-2 interface with its address and default route.
test('galaxy vlan: an ipinfo of VLAN 2 puts eth0 on the node’s <master>.2 with its address and default route via the gateway; DEL removes it', async () => {
  const { dev, gatewayNs } = await vlanStandIn(2, '192.168.2.65/26');
  const pod = await lab.addNamespace('vlan');
  const args = ipinfosArg(ipinfo('192.168.2.69/26', 2));
  const result = added(await onNode(galaxyEnv('ADD', 'test_vlan', pod, args), galaxyConfig()));
  expect(result).toMatchObject({
    ips: [{ version: '4', interface: 0, address: '192.168.2.69/26', gateway: '192.168.2.65' }],
    routes: [{ dst: '0.0.0.0/0', gw: '192.168.2.65' }],
  });
  expect(await parentIndex(pod, 'eth0')).toBe(await nodeIndex(dev));
  expect(await inet(pod, 'eth0')).toEqual(['192.168.2.69/26']);
  expect(await routes(pod)).toContain('default via 192.168.2.65 dev eth0');
  expect(await pings(pod, '192.168.2.65')).toBe(true);
  expect(await pings(gatewayNs, '192.168.2.69')).toBe(true);

  const del = await onNode(galaxyEnv('DEL', 'test_vlan', pod), galaxyConfig());
  expect({ code: del.code, stdout: del.stdout }).toEqual({ code: 0, stdout: '' });
  expect(await links(pod)).toEqual(['lo']);
  expect(stateFiles()).toEqual([]);
}, 60_000);

// galaxy e2e/k8s-vlan/vlan_test.go "vlan second ips": ipinfos of VLAN 2 and VLAN 3. Both get an
// interface on their VLAN, eth0 and eth1. Where the default route goes is floatip-cni's own rule
// (README: only the first interface carries default routes); galaxy-k8s-vlan's differs (a default
// via the second's gateway, 10/8, 172.16/12 and 192.168/16 via the first's), which floatip-cni
// does not claim.
test('galaxy vlan second ips: ipinfos of VLANs 2 and 3 give eth0 on <master>.2 and eth1 on <master>.3, the default route via the first’s gateway only; DEL removes both', async () => {
  const vlan2 = await vlanStandIn(2, '192.168.0.65/26');
  const vlan3 = await vlanStandIn(3, '192.168.1.1/24');
  const pod = await lab.addNamespace('second');
  const args = ipinfosArg(ipinfo('192.168.0.68/26', 2), ipinfo('192.168.1.3/24', 3));
  const result = added(await onNode(galaxyEnv('ADD', 'test_second', pod, args), galaxyConfig()));
  expect(result).toMatchObject({
    interfaces: [{ name: 'eth0' }, { name: 'eth1' }],
    ips: [
      { interface: 0, address: '192.168.0.68/26', gateway: '192.168.0.65' },
      { interface: 1, address: '192.168.1.3/24', gateway: '192.168.1.1' },
    ],
    routes: [{ dst: '0.0.0.0/0', gw: '192.168.0.65' }],
  });
  expect(await parentIndex(pod, 'eth0')).toBe(await nodeIndex(vlan2.dev));
  expect(await parentIndex(pod, 'eth1')).toBe(await nodeIndex(vlan3.dev));
  expect(await inet(pod, 'eth0')).toEqual(['192.168.0.68/26']);
  expect(await inet(pod, 'eth1')).toEqual(['192.168.1.3/24']);
  expect((await routes(pod)).filter((r) => r.startsWith('default'))).toEqual([
    'default via 192.168.0.65 dev eth0',
  ]);
  expect(await pings(pod, '192.168.0.65')).toBe(true);
  expect(await pings(pod, '192.168.1.1')).toBe(true);
  expect(await pings(vlan3.gatewayNs, '192.168.1.3')).toBe(true);

  const del = await onNode(galaxyEnv('DEL', 'test_second', pod), galaxyConfig());
  expect({ code: del.code, stdout: del.stdout }).toEqual({ code: 0, stdout: '' });
  expect(await links(pod)).toEqual(['lo']);
  expect(stateFiles()).toEqual([]);
}, 60_000);

// galaxy e2e/veth/veth_test.go "veth": DEL with an empty CNI_NETNS still removes what ADD made
// (galaxy-veth's host-local IPAM, /32 address and 169.254.1.1 gateway are its own design).
test('galaxy veth: DEL with an empty CNI_NETNS removes the pod’s interface; an ipinfo in galaxy-veth’s shape (/32, gateway 169.254.1.1) is refused (102) and leaves nothing', async () => {
  const pod = await lab.addNamespace('veth');
  const args = ipinfosArg(ipinfo('192.168.0.70/26', 0));
  added(await onNode(galaxyEnv('ADD', 'test_veth', pod, args), galaxyConfig()));
  expect(await inet(pod, 'eth0')).toEqual(['192.168.0.70/26']);
  const del = await onNode(galaxyEnv('DEL', 'test_veth', ''), galaxyConfig());
  expect({ code: del.code, stdout: del.stdout, stderr: del.stderr }).toEqual({
    code: 0,
    stdout: '',
    stderr: '',
  });
  expect(await links(pod)).toEqual(['lo']);
  expect(await pings(gateway, '192.168.0.70')).toBe(false);
  expect(stateFiles()).toEqual([]);

  const veth = ipinfosArg({ ip: '172.16.92.2/32', vlan: 0, gateway: '169.254.1.1' });
  const refused = await onNode(galaxyEnv('ADD', 'test_veth', pod, veth), galaxyConfig());
  expect({ code: refused.code, errorCode: refused.out.code, msg: refused.out.msg }).toEqual({
    code: 1,
    errorCode: 102,
    msg: 'ipinfo {"ip":"172.16.92.2/32","vlan":0,"gateway":"169.254.1.1"}: gateway 169.254.1.1 is outside 172.16.92.2/32',
  });
  expect(await links(pod)).toEqual(['lo']);
  expect(stateFiles()).toEqual([]);
}, 60_000);

// galaxy e2e/cni-request/request_test.go: the request galaxy's daemon serves carries kubelet's
// CNI_ARGS (IgnoreUnknown=true, K8S_POD_NAMESPACE, K8S_POD_NAME, K8S_POD_INFRA_CONTAINER_ID, no
// K8S_POD_UID); ADD answers the pod's address, DEL answers nothing. floatip-cni alone reads the pod
// named there; under galaxy's daemon the same arguments arrive with `ipinfos=` appended.
test('galaxy cni request: kubelet’s CNI_ARGS without K8S_POD_UID read the pod’s annotation; with galaxy’s ipinfos appended and no kubeconfig they are taken as handed over; DEL answers nothing', async () => {
  createPod(server, 'mypod-0', { common: { ipinfos: [ipinfo('192.168.0.71/26', 0)] } });
  const kubelet = (id: string) =>
    `IgnoreUnknown=true;K8S_POD_NAMESPACE=default;K8S_POD_NAME=mypod-0;K8S_POD_INFRA_CONTAINER_ID=${id}`;
  const pod = await lab.addNamespace('request');
  const withApi = galaxyConfig({ kubeconfig, annotationTimeoutSeconds: 1 });
  const result = added(await onNode(galaxyEnv('ADD', 'test_req', pod, kubelet('test_req')), withApi));
  expect(result).toMatchObject({
    ips: [{ address: '192.168.0.71/26', gateway: '192.168.0.65' }],
    routes: [{ dst: '0.0.0.0/0', gw: '192.168.0.65' }],
  });
  expect(await pings(pod, '192.168.0.65')).toBe(true);
  const del = await onNode(galaxyEnv('DEL', 'test_req', pod, kubelet('test_req')), withApi);
  expect({ code: del.code, stdout: del.stdout }).toEqual({ code: 0, stdout: '' });
  expect(await links(pod)).toEqual(['lo']);

  // galaxy's daemon appends the annotation's ipinfos to kubelet's arguments (its cniutil.CmdAdd)
  const daemon = `${kubelet('test_req2')};${ipinfosArg(ipinfo('192.168.0.72/26', 0))}`;
  const handed = added(await onNode(galaxyEnv('ADD', 'test_req2', pod, daemon), galaxyConfig()));
  expect(handed).toMatchObject({ ips: [{ address: '192.168.0.72/26', gateway: '192.168.0.65' }] });
  expect(await inet(pod, 'eth0')).toEqual(['192.168.0.72/26']);
  const del2 = await onNode(galaxyEnv('DEL', 'test_req2', pod, daemon), galaxyConfig());
  expect({ code: del2.code, stdout: del2.stdout }).toEqual({ code: 0, stdout: '' });
  expect(await links(pod)).toEqual(['lo']);
  expect(stateFiles()).toEqual([]);
}, 60_000);

// galaxy e2e/cni-request/request_test.go's answer is galaxy-flannel's 0.2.0 result (`ip4`). galaxy's
// daemon configures a pod's networks in order and hands each the previous one's result as its
// prevResult, as it came: floatip-cni as a pod's second network (eth1, after galaxy-flannel's eth0)
// gets that 0.2.0 result, and passes it on ahead of its own (README: ADD after another plugin in a
// chain passes that plugin's prevResult on).
test('galaxy daemon chain: after galaxy-flannel, its 0.2.0 result (ip4 with routes) is passed on ahead of floatip-cni’s eth1', async () => {
  const pod = await lab.addNamespace('chain');
  const flannel = {
    cniVersion: '0.2.0',
    ip4: {
      ip: '172.16.59.5/24',
      gateway: '172.16.59.1',
      routes: [
        { dst: '172.16.0.0/13', gw: '172.16.59.1' },
        { dst: '0.0.0.0/0', gw: '172.16.59.1' },
      ],
    },
    dns: {},
  };
  const args = ipinfosArg(ipinfo('192.168.0.73/26', 0));
  const config = galaxyConfig({ prevResult: flannel });
  const result = added(await onNode(galaxyEnv('ADD', 'test_chain', pod, args, 'eth1'), config));
  expect(result).toEqual({
    cniVersion: '0.4.0',
    interfaces: [
      {
        name: 'eth1',
        mac: expect.stringMatching(/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/),
        sandbox: `/var/run/netns/${pod}`,
      },
    ],
    ips: [
      { version: '4', address: '172.16.59.5/24', gateway: '172.16.59.1' },
      { version: '4', interface: 0, address: '192.168.0.73/26', gateway: '192.168.0.65' },
    ],
    routes: [
      { dst: '172.16.0.0/13', gw: '172.16.59.1' },
      { dst: '0.0.0.0/0', gw: '172.16.59.1' },
      { dst: '0.0.0.0/0', gw: '192.168.0.65' },
    ],
    dns: {},
  });
  expect(await inet(pod, 'eth1')).toEqual(['192.168.0.73/26']);
  const del = await onNode(galaxyEnv('DEL', 'test_chain', pod, args, 'eth1'), config);
  expect({ code: del.code, stdout: del.stdout }).toEqual({ code: 0, stdout: '' });
  expect(await links(pod)).toEqual(['lo']);
  expect(stateFiles()).toEqual([]);

  // a 0.2.0 result whose ip4 is no address is no result: refused before any interface is made
  const broken = galaxyConfig({ prevResult: { cniVersion: '0.2.0', ip4: { ip: 5 } } });
  const refused = await onNode(galaxyEnv('ADD', 'test_chain', pod, args, 'eth1'), broken);
  expect({ code: refused.code, errorCode: refused.out.code }).toEqual({ code: 1, errorCode: 7 });
  expect(await links(pod)).toEqual(['lo']);
  expect(stateFiles()).toEqual([]);
}, 60_000);
