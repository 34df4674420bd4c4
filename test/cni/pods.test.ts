// floatip-cni in real network namespaces: two nodes joined by a veth pair, one pod on each, their
// addresses from the pods' annotations (served by the embedded API server) through the macvlan
// delegate, dual stack; they ping each other over IPv4 and IPv6. Then CHECK, DEL and GC as kubelet
// and the runtime would call them.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import { annotate, cniEnv, createPod, kubeconfigFor, podArgs, startPodSource, stateDir } from './helpers.js';
import { recordHolders } from '../../bench/cni-fixtures.js';
import { ip, Lab, NODE_API_PORT, pings, runPlugin } from './netns.js';
import { buildPlugin, CNI_BIN, ensureDebianPackages } from './setup.js';

const lab = new Lab();
let build: string | undefined;
let server: EmbeddedApiServer;
let masters: [string, string];
let kubeconfig: string;
let state: string;
const node = (i: 0 | 1) => lab.ns(i === 0 ? 'node1' : 'node2');

const config = (i: 0 | 1, extra: Record<string, unknown> = {}) => ({
  cniVersion: '1.0.0',
  name: 'underlay',
  type: 'floatip-cni',
  kubeconfig,
  stateDir: state,
  annotationTimeoutSeconds: 3,
  delegate: { type: 'macvlan', master: masters[i], mode: 'bridge' },
  ...extra,
});

const dualStack = (n: number) => ({
  common: {
    ipinfos: [
      { ip: `198.51.100.${n}/24`, vlan: 0, gateway: '198.51.100.1' },
      { ip: `2001:db8::${n}/64`, vlan: 0, gateway: '2001:db8::1' },
    ],
  },
});

beforeAll(async () => {
  [, build] = await Promise.all([ensureDebianPackages(), buildPlugin()]);
  server = await startPodSource();
  masters = await lab.twoNodes('node1', 'node2');
  await lab.exposeApiServer(server.url, [node(0), node(1)]);
  kubeconfig = kubeconfigFor(`http://127.0.0.1:${NODE_API_PORT}`);
  state = stateDir();
}, 300_000);

afterAll(async () => {
  await lab.destroy();
  if (build) rmSync(build, { recursive: true, force: true });
  await server?.close();
});

test('two pods on two nodes get their dual-stack addresses from ADD and ping each other over IPv4 and IPv6', async () => {
  const results = [];
  for (const [i, n] of [
    [0, 10],
    [1, 11],
  ] as const) {
    const pod = await lab.addNamespace(`pod${i}`);
    const uid = createPod(server, `web-${i}`, dualStack(n));
    const run = await runPlugin(
      cniEnv('ADD', `c${i}`, pod, podArgs(`web-${i}`, uid)),
      config(i, { cniVersion: i === 0 ? '1.0.0' : '1.1.0' }),
      node(i),
    );
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    results.push(run.out);
  }
  expect(results[0]).toEqual({
    cniVersion: '1.0.0',
    interfaces: [
      {
        name: 'eth0',
        mac: expect.stringMatching(/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/),
        sandbox: `/var/run/netns/${lab.ns('pod0')}`,
      },
    ],
    ips: [
      { interface: 0, address: '198.51.100.10/24', gateway: '198.51.100.1' },
      { interface: 0, address: '2001:db8::10/64', gateway: '2001:db8::1' },
    ],
    routes: [
      { dst: '0.0.0.0/0', gw: '198.51.100.1' },
      { dst: '::/0', gw: '2001:db8::1' },
    ],
    dns: {},
  });
  expect(results[1]).toMatchObject({
    cniVersion: '1.1.0',
    ips: [{ address: '198.51.100.11/24' }, { address: '2001:db8::11/64' }],
  });

  const [pod0, pod1] = [lab.ns('pod0'), lab.ns('pod1')];
  expect(await pings(pod0, '198.51.100.11')).toBe(true);
  expect(await pings(pod1, '198.51.100.10')).toBe(true);
  expect(await pings(pod0, '2001:db8::11')).toBe(true);
  expect(await pings(pod1, '2001:db8::10')).toBe(true);
  // both default routes are the pod's
  expect(await ip('-n', pod0, 'route', 'show', 'default')).toContain('default via 198.51.100.1 dev eth0');
  expect(await ip('-n', pod0, '-6', 'route', 'show', 'default')).toContain(
    'default via 2001:db8::1 dev eth0',
  );

  // CHECK holds, then reports the address removed by hand, and a removed default route
  const prevResult = results[0]!;
  const checkEnv = cniEnv('CHECK', 'c0', pod0, podArgs('web-0', ''));
  expect((await runPlugin(checkEnv, { ...config(0), prevResult }, node(0))).code).toBe(0);
  // a prevResult that does not list the IPv4 address ADD added: the runtime's view is not the node's
  const lost = { ...prevResult, ips: (prevResult.ips as unknown[]).slice(1) };
  const notListed = await runPlugin(checkEnv, { ...config(0), prevResult: lost }, node(0));
  console.log('CHECK with a prevResult that lost an address:', notListed.stdout.trim());
  expect({ code: notListed.code, out: notListed.out }).toEqual({
    code: 1,
    out: {
      cniVersion: '1.0.0',
      code: 7,
      msg: 'prevResult of container c0 interface eth0 does not list what ADD added on network underlay: address 198.51.100.10/24 on eth0',
    },
  });
  await ip('-n', pod0, 'addr', 'del', '198.51.100.10/24', 'dev', 'eth0');
  const noAddress = await runPlugin(checkEnv, { ...config(0), prevResult }, node(0));
  console.log('CHECK after the address was removed:', noAddress.stdout.trim());
  expect({ code: noAddress.code, out: noAddress.out }).toEqual({
    code: 1,
    out: {
      cniVersion: '1.0.0',
      code: 105,
      msg: 'delegate macvlan CHECK eth0: Failed to match addr 198.51.100.10/24 on interface eth0',
    },
  });
  await ip('-n', pod1, '-6', 'route', 'del', 'default');
  const noRoute = await runPlugin(
    cniEnv('CHECK', 'c1', pod1),
    { ...config(1), prevResult: results[1] },
    node(1),
  );
  console.log('CHECK after the IPv6 default route was removed:', noRoute.stdout.trim());
  expect(noRoute.code).toBe(1);
  expect(noRoute.out).toMatchObject({
    code: 105,
    msg: expect.stringMatching(
      /^delegate macvlan CHECK eth0: Expected Route .*GW:2001:db8::1.* not found in routing table$/,
    ),
  });

  // DEL removes the interface and the state; again, and with the pod gone, it still succeeds
  const delEnv = cniEnv('DEL', 'c0', pod0, podArgs('web-0', ''));
  expect((await runPlugin(delEnv, config(0), node(0))).code).toBe(0);
  expect(await ip('-n', pod0, '-o', 'link')).not.toContain('eth0');
  expect(readdirSync(`${state}/underlay`)).toEqual(['c1:eth0.json']);
  expect(await runPlugin(delEnv, config(0), node(0))).toMatchObject({ code: 0, stdout: '' });
  await ip('netns', 'del', pod0);
  expect((await runPlugin(cniEnv('DEL', 'c0', ''), config(0), node(0))).code).toBe(0);
  await lab.addNamespace('pod0');
}, 120_000);

test('GC removes the state of an attachment the runtime no longer lists, and keeps the listed ones', async () => {
  const gone = await lab.addNamespace('gcpod');
  const uid = createPod(server, 'gc-gone', dualStack(20));
  const add = await runPlugin(cniEnv('ADD', 'gone', gone, podArgs('gc-gone', uid)), config(0), node(0));
  expect(add.code).toBe(0);
  await ip('netns', 'del', gone);
  const before = readdirSync(`${state}/underlay`).sort();
  expect(before).toContain('gone:eth0.json');
  const gc = await runPlugin(
    cniEnv('GC', '', ''),
    {
      ...config(0, { cniVersion: '1.1.0' }),
      'cni.dev/valid-attachments': before
        .filter((f) => f !== 'gone:eth0.json')
        .map((f) => {
          const [containerID, ifname] = f.slice(0, -5).split(':');
          return { containerID, ifname };
        }),
    },
    node(0),
  );
  expect({ code: gc.code, stdout: gc.stdout }).toEqual({ code: 0, stdout: '' });
  expect(readdirSync(`${state}/underlay`).sort()).toEqual(before.filter((f) => f !== 'gone:eth0.json'));
});

test('GC leaves an attachment whose ADD is still running, and removes one whose ADD has gone', async () => {
  // macvlan, then a pause before it answers: an ADD whose interface is up and that has not answered
  const bin = mkdtempSync(join(tmpdir(), 'floatip-cni-slow-'));
  writeFileSync(
    join(bin, 'slow-macvlan'),
    `#!/bin/sh\nout=$(${CNI_BIN}/macvlan); rc=$?\n[ "$CNI_COMMAND" = ADD ] && sleep 2\nprintf '%s' "$out"; exit $rc\n`,
    { mode: 0o755 },
  );
  const pod = await lab.addNamespace('gcbusy');
  const uid = createPod(server, 'gc-busy', dualStack(21));
  const slow = { ...config(0), delegate: { type: 'slow-macvlan', master: masters[0], mode: 'bridge' } };
  const running = runPlugin(
    { ...cniEnv('ADD', 'busy', pod, podArgs('gc-busy', uid)), CNI_PATH: `${bin}:${CNI_BIN}` },
    slow,
    node(0),
  );
  for (let i = 0; i < 100 && !(await ip('-n', pod, '-o', 'link')).includes('eth0'); i++) await sleep(50);
  // an ADD that died with its state written: its PID now names another process (this one)
  writeFileSync(
    `${state}/underlay/dead:eth0.json`,
    JSON.stringify({
      containerId: 'dead',
      ifname: 'eth0',
      netns: '',
      interfaces: [],
      adder: { pid: process.pid, start: '1' },
    }),
  );
  const listed = readdirSync(`${state}/underlay`).filter(
    (f) => !['busy:eth0.json', 'dead:eth0.json'].includes(f),
  );
  const gc = await runPlugin(
    { ...cniEnv('GC', '', ''), CNI_PATH: `${bin}:${CNI_BIN}` },
    {
      ...config(0, { cniVersion: '1.1.0' }),
      'cni.dev/valid-attachments': listed.map((f) => {
        const [containerID, ifname] = f.slice(0, -5).split(':');
        return { containerID, ifname };
      }),
    },
    node(0),
  );
  expect({ code: gc.code, stdout: gc.stdout }).toEqual({ code: 0, stdout: '' });
  const add = await running;
  expect(add.code).toBe(0);
  // the interface ADD reported is there, and so is the state DEL will need
  expect(await ip('-n', pod, '-o', 'addr')).toContain('198.51.100.21/24');
  expect(readdirSync(`${state}/underlay`).sort()).toEqual([...listed, 'busy:eth0.json'].sort());
  const del = { ...cniEnv('DEL', 'busy', pod, podArgs('gc-busy', uid)), CNI_PATH: `${bin}:${CNI_BIN}` };
  expect((await runPlugin(del, config(0), node(0))).code).toBe(0);
  expect(await ip('-n', pod, '-o', 'link')).not.toContain('eth0');
  rmSync(bin, { recursive: true, force: true });
});

test('a pod whose creator wrote the annotation, set on its node past the scheduler, gets no interface for another pod’s address (106)', async () => {
  const owner = await lab.addNamespace('owner');
  const ownerUid = createPod(server, 'owner', dualStack(40));
  const owned = await runPlugin(cniEnv('ADD', 'co', owner, podArgs('owner', ownerUid)), config(0), node(0));
  expect({ code: owned.code, stderr: owned.stderr }).toEqual({ code: 0, stderr: '' });
  const thief = await lab.addNamespace('thief');
  const thiefUid = createPod(server, 'thief', dualStack(40), { holders: false });
  const stolen = await runPlugin(cniEnv('ADD', 'ct', thief, podArgs('thief', thiefUid)), config(1), node(1));
  expect({ code: stolen.code, out: stolen.out }).toEqual({
    code: 1,
    out: {
      cniVersion: '1.0.0',
      code: 106,
      msg: `pod default/thief annotation names 198.51.100.40, which floatip has not given it: it is held by key NULL_default_NULL_owner (pod UID ${ownerUid})`,
    },
  });
  expect(await ip('-n', thief, '-o', 'link')).not.toContain('eth0');
  expect(existsSync(`${state}/underlay/ct:eth0.json`)).toBe(false);
  const del = await runPlugin(cniEnv('DEL', 'co', owner), config(0), node(0));
  expect(del.code).toBe(0);
});

test('ADD waits for the annotation floatip writes at bind, and a pod with request_ip_range groups gets one interface per ipinfo', async () => {
  const pod = await lab.addNamespace('late');
  const uid = createPod(server, 'late', { request_ip_range: [['198.51.100.30'], ['203.0.113.30']] });
  const running = runPlugin(cniEnv('ADD', 'late', pod, podArgs('late', uid)), config(0), node(0));
  await new Promise((r) => setTimeout(r, 600));
  await annotate(server, 'late', {
    request_ip_range: [['198.51.100.30'], ['203.0.113.30']],
    common: {
      ipinfos: [
        { ip: '198.51.100.30/24', vlan: 0, gateway: '198.51.100.1' },
        { ip: '203.0.113.30/24', vlan: 0, gateway: '203.0.113.1' },
      ],
    },
  });
  const run = await running;
  expect(run.code).toBe(0);
  expect(run.out).toMatchObject({
    interfaces: [{ name: 'eth0' }, { name: 'eth1' }],
    ips: [
      { interface: 0, address: '198.51.100.30/24' },
      { interface: 1, address: '203.0.113.30/24' },
    ],
    // only the first interface carries the default route
    routes: [{ dst: '0.0.0.0/0', gw: '198.51.100.1' }],
  });
  expect(await ip('-n', pod, '-4', '-o', 'addr', 'show', 'dev', 'eth1')).toContain('203.0.113.30/24');
  // the state lost (a wiped /var/lib): DEL takes the interfaces from the prevResult the runtime kept
  rmSync(`${state}/underlay/late:eth0.json`);
  const del = await runPlugin(cniEnv('DEL', 'late', pod), { ...config(0), prevResult: run.out }, node(0));
  expect({ code: del.code, stdout: del.stdout }).toEqual({ code: 0, stdout: '' });
  expect(await ip('-n', pod, '-o', 'link')).not.toMatch(/eth[01]/);
  expect(existsSync(`${state}/underlay/late:eth0.json`)).toBe(false);
});

test('under galaxy’s daemon the ipinfos arrive in CNI_ARGS, and no API server is asked', async () => {
  const pod = await lab.addNamespace('galaxy');
  const ipinfos = JSON.stringify([{ ip: '198.51.100.40/24', vlan: 0, gateway: '198.51.100.1' }]);
  const { kubeconfig: _, ...withoutApi } = config(0);
  const run = await runPlugin(cniEnv('ADD', 'galaxy', pod, { ipinfos }), withoutApi, node(0));
  expect(run.code).toBe(0);
  expect(run.out).toMatchObject({ ips: [{ address: '198.51.100.40/24', gateway: '198.51.100.1' }] });
  expect(await pings(pod, '198.51.100.11')).toBe(true);
  // the same in the configuration's `args`, as a runtime may pass them; a pre-1.0 result says each IP's family
  const pod2 = await lab.addNamespace('galaxy2');
  const old = await runPlugin(
    cniEnv('ADD', 'galaxy2', pod2),
    {
      ...withoutApi,
      cniVersion: '0.4.0',
      args: { ipinfos: [{ ip: '2001:db8::41/64', vlan: 0, gateway: '2001:db8::1' }] },
    },
    node(0),
  );
  expect(old.code).toBe(0);
  expect(old.out).toMatchObject({
    cniVersion: '0.4.0',
    ips: [{ version: '6', address: '2001:db8::41/64', interface: 0 }],
  });
  // after another plugin in a chain: its result passed on, this one's after it
  const pod3 = await lab.addNamespace('galaxy3');
  const prevResult = {
    cniVersion: '1.0.0',
    interfaces: [{ name: 'lo0', sandbox: '/x' }],
    ips: [{ address: '10.1.1.1/32', interface: 0 }],
    dns: { nameservers: ['9.9.9.9'] },
  };
  const chained = await runPlugin(
    cniEnv('ADD', 'galaxy3', pod3, {
      ipinfos: JSON.stringify([{ ip: '198.51.100.42/24', vlan: 0, gateway: '198.51.100.1' }]),
    }),
    { ...withoutApi, prevResult },
    node(0),
  );
  expect(chained.code).toBe(0);
  expect(chained.out).toMatchObject({
    interfaces: [{ name: 'lo0' }, { name: 'eth0', sandbox: `/var/run/netns/${pod3}` }],
    ips: [
      { address: '10.1.1.1/32', interface: 0 },
      { address: '198.51.100.42/24', interface: 1 },
    ],
    dns: { nameservers: ['9.9.9.9'] },
  });
});

test('ipinfos handed over with a kubeconfig (Multus copies a pod’s own cni-args into args.cni) are checked as the annotation’s: another pod’s address gets no interface (106), the pod’s own is added', async () => {
  const ownerUid = createPod(server, 'handed-owner', {
    common: { ipinfos: [{ ip: '198.51.100.50/24', vlan: 0, gateway: '198.51.100.1' }] },
  });
  const thiefUid = createPod(server, 'handed-thief');
  const stolen = [{ ip: '198.51.100.50/24', vlan: 0, gateway: '198.51.100.1' }];
  const thief = await lab.addNamespace('handedthief');
  const refusal = {
    code: 1,
    out: {
      cniVersion: '1.0.0',
      code: 106,
      msg: `pod default/handed-thief ipinfos argument names 198.51.100.50, which floatip has not given it: it is held by key NULL_default_NULL_handed-owner (pod UID ${ownerUid})`,
    },
  };
  // each way ipinfos are handed over: stdin args.cni (Multus' cni-args), args, CNI_ARGS
  for (const [env, extra] of [
    [podArgs('handed-thief', thiefUid), { args: { cni: { ipinfos: stolen } } }],
    [podArgs('handed-thief', thiefUid), { args: { ipinfos: stolen } }],
    [{ ...podArgs('handed-thief', thiefUid), ipinfos: JSON.stringify(stolen) }, {}],
  ] as const) {
    const run = await runPlugin(cniEnv('ADD', 'ht', thief, env), config(0, extra), node(0));
    expect({ code: run.code, out: run.out }).toEqual(refusal);
    expect(await ip('-n', thief, '-o', 'link')).not.toContain('eth0');
    expect(existsSync(`${state}/underlay/ht:eth0.json`)).toBe(false);
  }
  // the pod's own address, handed over: added as ever
  const owner = await lab.addNamespace('handedowner');
  const own = await runPlugin(
    cniEnv('ADD', 'ho', owner, podArgs('handed-owner', ownerUid)),
    config(0, { args: { cni: { ipinfos: stolen } } }),
    node(0),
  );
  expect({ code: own.code, stderr: own.stderr }).toEqual({ code: 0, stderr: '' });
  expect(await ip('-n', owner, '-o', 'addr', 'show', 'dev', 'eth0')).toContain('198.51.100.50/24');
  expect((await runPlugin(cniEnv('DEL', 'ho', owner), config(0), node(0))).code).toBe(0);
});

test('ipinfos handed over with a kubeconfig must say what floatip’s annotation says of the pod’s own address: another VLAN, gateway or prefix gets no interface (106)', async () => {
  const given = { ip: '198.51.100.51/24', vlan: 0, gateway: '198.51.100.1' };
  const uid = createPod(server, 'handed-steer', { common: { ipinfos: [given] } });
  const steer = await lab.addNamespace('handedsteer');
  const says =
    'floatip gave it as 198.51.100.51/24 vlan 0 gateway 198.51.100.1 (annotation k8s.v1.cni.galaxy.io/args)';
  for (const [forged, as] of [
    [{ ...given, vlan: 3 }, '198.51.100.51/24 vlan 3 gateway 198.51.100.1'],
    [{ ...given, gateway: '198.51.100.2' }, '198.51.100.51/24 vlan 0 gateway 198.51.100.2'],
    [{ ...given, ip: '198.51.100.51/16' }, '198.51.100.51/16 vlan 0 gateway 198.51.100.1'],
  ] as const) {
    const run = await runPlugin(
      cniEnv('ADD', 'hs', steer, podArgs('handed-steer', uid)),
      config(0, { args: { cni: { ipinfos: [forged] } } }),
      node(0),
    );
    expect({ code: run.code, out: run.out }).toEqual({
      code: 1,
      out: {
        cniVersion: '1.0.0',
        code: 106,
        msg: `pod default/handed-steer ipinfos argument gives 198.51.100.51 as ${as}, not as floatip gave it: ${says}`,
      },
    });
    expect(await ip('-n', steer, '-o', 'link')).not.toContain('eth0');
  }
  // held by its FloatingIP, but named in no annotation of the pod's (floatip's bind writes both)
  const bare = createPod(server, 'handed-unwritten', undefined, { holders: false });
  recordHolders(server, 'handed-unwritten', bare, {
    common: { ipinfos: [{ ...given, ip: '198.51.100.52/24' }] },
  });
  const unwritten = await lab.addNamespace('handedunwritten');
  const run = await runPlugin(
    cniEnv('ADD', 'hu', unwritten, podArgs('handed-unwritten', bare)),
    config(0, { args: { cni: { ipinfos: [{ ...given, ip: '198.51.100.52/24' }] } } }),
    node(0),
  );
  expect(run.out).toMatchObject({
    code: 106,
    msg: 'pod default/handed-unwritten ipinfos argument gives 198.51.100.52 as 198.51.100.52/24 vlan 0 gateway 198.51.100.1, not as floatip gave it: its annotation k8s.v1.cni.galaxy.io/args names no such address',
  });
  expect(await ip('-n', unwritten, '-o', 'link')).not.toContain('eth0');
});
