// Every way floatip-cni refuses, as the runtime sees it: a CNI error object on stdout (code, msg,
// details), exit 1, no stack trace on stdout or stderr; and a failed ADD leaves nothing behind (no
// interface, no state). Each error is printed as the plugin printed it.
import { createServer } from 'node:net';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EmbeddedApiServer } from '../../src/apiserver/index.js';
import {
  cniEnv,
  createPod,
  handedOver,
  kubeconfigFor,
  podArgs,
  startPodSource,
  stateDir,
  underlay,
} from './helpers.js';
import { ip, Lab, type PluginRun, runPlugin } from './netns.js';
import { buildPlugin, CNI_BIN, ensureDebianPackages } from './setup.js';

const lab = new Lab();
let build: string | undefined;
let server: EmbeddedApiServer;
let kubeconfig: string;
let state: string;
let master: string;

const config = (extra: Record<string, unknown> = {}) => underlay(state, master, { kubeconfig, ...extra });

/**
 * STATUS as run here, outside the node namespace that has the lab's master: a delegate that names
 * none (macvlan's default-route interface), which STATUS does not look for.
 */
const statusConfig = (extra: Record<string, unknown> = {}) =>
  config({ cniVersion: '1.1.0', delegate: { type: 'macvlan', mode: 'bridge' }, ...extra });

/** The run's error object, after checking it is one: exit 1, JSON on stdout, nothing on stderr. */
function refusal(what: string, run: PluginRun): Record<string, unknown> {
  console.log(`${what}: ${run.stdout.trim()}`);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 1, stderr: '' });
  expect(run.stdout).not.toMatch(/\n\s+at /);
  return run.out;
}

beforeAll(async () => {
  [, build] = await Promise.all([ensureDebianPackages(), buildPlugin()]);
  server = await startPodSource();
  kubeconfig = kubeconfigFor(server.url);
  state = stateDir();
  ({ master } = await lab.nodeWithMaster());
}, 300_000);

afterAll(async () => {
  await lab.destroy();
  if (build) rmSync(build, { recursive: true, force: true });
  await server?.close();
});

const ipinfo = (n: number, vlan = 0) => ({ ip: `198.51.100.${n}/24`, vlan, gateway: '198.51.100.1' });

test('no annotation after the wait', async () => {
  const uid = createPod(server, 'unbound');
  const started = Date.now();
  const out = refusal(
    'no annotation',
    await runPlugin(cniEnv('ADD', 'c1', 'x', podArgs('unbound', uid)), config()),
  );
  expect(out).toEqual({
    cniVersion: '1.0.0',
    code: 101,
    msg: 'pod default/unbound has no ipinfos in k8s.v1.cni.galaxy.io/args after 0.3 s',
    details: 'the annotation is absent',
  });
  expect(Date.now() - started).toBeGreaterThanOrEqual(300);
});

test('a malformed annotation', async () => {
  const uid = createPod(server, 'malformed', '{"common":');
  const out = refusal(
    'malformed annotation',
    await runPlugin(cniEnv('ADD', 'c1', 'x', podArgs('malformed', uid)), config()),
  );
  expect(out).toEqual({
    cniVersion: '1.0.0',
    code: 102,
    msg: expect.stringMatching(
      /^pod default\/malformed annotation k8s.v1.cni.galaxy.io\/args: unmarshal pod cni args: /,
    ),
    details: '{"common":',
  });
  const badAddress = createPod(server, 'bad-address', {
    common: { ipinfos: [{ ip: '198.51.100.999/24', vlan: 0, gateway: '198.51.100.1' }] },
  });
  expect(
    refusal(
      'an ipinfo that is no address',
      await runPlugin(cniEnv('ADD', 'c1', 'x', podArgs('bad-address', badAddress)), config()),
    ),
  ).toEqual({
    cniVersion: '1.0.0',
    code: 102,
    msg: 'ipinfo {"ip":"198.51.100.999/24","vlan":0,"gateway":"198.51.100.1"} is not an address/prefix with a gateway of its family and a VLAN id 0-4094',
  });
});

test('a pod whose UID is not the sandbox’s', async () => {
  const uid = createPod(server, 'recreated', { common: { ipinfos: [ipinfo(50)] } });
  const out = refusal(
    'UID mismatch',
    await runPlugin(cniEnv('ADD', 'c1', 'x', podArgs('recreated', 'an-older-uid')), config()),
  );
  expect(out).toEqual({
    cniVersion: '1.0.0',
    code: 103,
    msg: `pod default/recreated has UID ${uid}, not an-older-uid: the pod this sandbox is for is gone`,
  });
});

test('an annotation its creator wrote: an address floatip has not given the pod is refused before anything is made (106)', async () => {
  // another pod's address: its FloatingIP object names that pod
  const holder = createPod(server, 'holder', { common: { ipinfos: [ipinfo(70)] } });
  const uid = createPod(server, 'thief', { common: { ipinfos: [ipinfo(70)] } }, { holders: false });
  expect(
    refusal(
      'another pod’s address',
      await runPlugin(cniEnv('ADD', 't1', 'x', podArgs('thief', uid)), config()),
    ),
  ).toEqual({
    cniVersion: '1.0.0',
    code: 106,
    msg: `pod default/thief annotation names 198.51.100.70, which floatip has not given it: it is held by key NULL_default_NULL_holder (pod UID ${holder})`,
  });
  // a free address: no object at all
  const squatter = createPod(server, 'squatter', { common: { ipinfos: [ipinfo(71)] } }, { holders: false });
  expect(
    refusal(
      'a free address',
      await runPlugin(cniEnv('ADD', 't2', 'x', podArgs('squatter', squatter)), config()),
    ),
  ).toEqual({
    cniVersion: '1.0.0',
    code: 106,
    msg: 'pod default/squatter annotation names 198.51.100.71, which floatip has not given it: no FloatingIP object holds it',
  });
  // the pod's own name, held for an earlier incarnation that floatip has not yet seen gone
  createPod(server, 'again', { common: { ipinfos: [ipinfo(72)] } });
  await fetch(`${server.url}/api/v1/namespaces/default/pods/again`, { method: 'DELETE' });
  const again = createPod(server, 'again', { common: { ipinfos: [ipinfo(72)] } }, { holders: false });
  expect(
    refusal(
      'an earlier incarnation’s',
      await runPlugin(cniEnv('ADD', 't3', 'x', podArgs('again', again)), config()),
    ),
  ).toMatchObject({
    code: 106,
    msg: expect.stringMatching(
      new RegExp(
        `^pod default/again annotation names 198.51.100.72, which floatip has not given it: it is held by key NULL_default_NULL_again for pod UID [-0-9a-f]+, not ${again}$`,
      ),
    ),
  });
  expect(existsSync(`${state}/underlay`) ? readdirSync(`${state}/underlay`) : []).toEqual([]);
});

test('a node whose user may not get FloatingIP objects: ADD says so (104), and STATUS says ADD cannot be served (50)', async () => {
  const { createServer: createHttpServer } = await import('node:http');
  const pod = {
    metadata: {
      name: 'web',
      namespace: 'default',
      uid: 'u',
      annotations: { 'k8s.v1.cni.galaxy.io/args': JSON.stringify({ common: { ipinfos: [ipinfo(73)] } }) },
    },
  };
  const forbidden = (path: string) => ({
    kind: 'Status',
    status: 'Failure',
    reason: 'Forbidden',
    code: 403,
    message: `floatingips.galaxy.k8s.io "${path.split('/').pop()}" is forbidden: User "system:serviceaccount:kube-system:floatip-cni" cannot get resource "floatingips" in API group "galaxy.k8s.io" at the cluster scope`,
  });
  // what a cluster with the ClusterRole of an earlier manifests/cni-rbac.yaml answers: pods only
  const podsOnly = createHttpServer((req, res) => {
    const path = req.url ?? '';
    if (path === '/api/v1/namespaces/default/pods/web') res.end(JSON.stringify(pod));
    else if (path.startsWith('/api/')) res.writeHead(404).end('{"kind":"Status","code":404}');
    else res.writeHead(403).end(JSON.stringify(forbidden(path)));
  });
  await new Promise<void>((resolve) => podsOnly.listen(0, '127.0.0.1', resolve));
  const kube = kubeconfigFor(`http://127.0.0.1:${(podsOnly.address() as { port: number }).port}`);
  try {
    expect(
      refusal(
        'FloatingIPs forbidden',
        await runPlugin(cniEnv('ADD', 'f1', 'x', podArgs('web', 'u')), config({ kubeconfig: kube })),
      ),
    ).toEqual({
      cniVersion: '1.0.0',
      code: 104,
      msg: `getting the FloatingIP of 198.51.100.73 for pod default/web: HTTP 403 (the ClusterRole of manifests/cni-rbac.yaml allows it): ${forbidden('198.51.100.73').message}`,
    });
    expect(
      refusal(
        'STATUS, FloatingIPs forbidden',
        await runPlugin(cniEnv('STATUS', '', ''), statusConfig({ kubeconfig: kube })),
      ),
    ).toEqual({
      cniVersion: '1.1.0',
      code: 50,
      msg: `floatip-cni cannot serve ADD: getting a FloatingIP: HTTP 403: ${forbidden('0.0.0.0').message}`,
    });
  } finally {
    podsOnly.close();
  }
});

test('a pod that does not exist', async () => {
  const out = refusal(
    'no such pod',
    await runPlugin(cniEnv('ADD', 'c1', 'x', podArgs('nobody', 'u')), config()),
  );
  expect(out).toMatchObject({ cniVersion: '1.0.0', code: 3, msg: 'pod default/nobody not found' });
});

test('the API server unreachable: ADD fails, and STATUS says the plugin is not available', async () => {
  const closed = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
  const away = kubeconfigFor(`http://127.0.0.1:${closed}`);
  const add = refusal(
    'API server unreachable',
    await runPlugin(cniEnv('ADD', 'c1', 'x', podArgs('web', 'u')), config({ kubeconfig: away })),
  );
  expect(add).toEqual({
    cniVersion: '1.0.0',
    code: 104,
    msg: `API server http://127.0.0.1:${closed} unreachable: connect ECONNREFUSED 127.0.0.1:${closed}`,
  });
  const down = refusal(
    'STATUS, API server unreachable',
    await runPlugin(cniEnv('STATUS', '', ''), statusConfig({ kubeconfig: away })),
  );
  expect(down).toEqual({
    cniVersion: '1.1.0',
    code: 50,
    msg: `floatip-cni cannot serve ADD: API server http://127.0.0.1:${closed} unreachable: connect ECONNREFUSED 127.0.0.1:${closed}`,
  });
  const up = await runPlugin(cniEnv('STATUS', '', ''), statusConfig());
  expect({ code: up.code, stdout: up.stdout }).toEqual({ code: 0, stdout: '' });
});

test('STATUS needs no CNI_PATH (the spec requires only CNI_COMMAND), and says ADD cannot be served (50) when the delegate, its static IPAM or its master is missing', async () => {
  const node = lab.ns('node');
  // in the node, where the master is; no kubeconfig (galaxy's daemon form): only the node is looked at
  const { kubeconfig: _, ...local } = config({ cniVersion: '1.1.0' });
  const { CNI_PATH: __, ...noPath } = cniEnv('STATUS', '', '');
  const ready = async (env: Record<string, string>, network: unknown) => {
    const run = await runPlugin(env, network, node);
    expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({
      code: 0,
      stdout: '',
      stderr: '',
    });
  };
  await ready(noPath, local);
  await ready(cniEnv('STATUS', '', ''), local);
  expect(
    refusal(
      'STATUS, no delegate in CNI_PATH',
      await runPlugin(
        cniEnv('STATUS', '', ''),
        { ...local, delegate: { type: 'nosuchplugin', master } },
        node,
      ),
    ),
  ).toEqual({
    cniVersion: '1.1.0',
    code: 50,
    msg: `floatip-cni cannot serve ADD: delegate plugin "nosuchplugin" not found in CNI_PATH ${CNI_BIN}`,
  });
  // the delegate found, the static IPAM it calls not: a directory with macvlan alone
  const dir = mkdtempSync(join(tmpdir(), 'floatip-cni-nostatic-'));
  try {
    symlinkSync(`${CNI_BIN}/macvlan`, join(dir, 'macvlan'));
    expect(
      refusal(
        'STATUS, no static IPAM',
        await runPlugin({ ...cniEnv('STATUS', '', ''), CNI_PATH: dir }, local, node),
      ),
    ).toEqual({
      cniVersion: '1.1.0',
      code: 50,
      msg: `floatip-cni cannot serve ADD: delegate plugin "static" not found in CNI_PATH ${dir}`,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  expect(
    refusal(
      'STATUS, no master',
      await runPlugin(noPath, { ...local, delegate: { type: 'macvlan', master: 'nosuchdev' } }, node),
    ),
  ).toEqual({
    cniVersion: '1.1.0',
    code: 50,
    msg: "floatip-cni cannot serve ADD: the delegate's master interface nosuchdev does not exist on this node",
  });
});

test('an API server that trickles its answer, or sends more than any pod, fails ADD within the limit (104)', async () => {
  const { createServer: createHttpServer } = await import('node:http');
  const slow = createHttpServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{');
    // a byte a quarter second: never idle, never done
    const drip = setInterval(() => res.write(' '), 250);
    res.on('close', () => clearInterval(drip));
  });
  const huge = createHttpServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const mib = Buffer.alloc(2 ** 20, ' ');
    for (let i = 0; i < 20; i++) res.write(mib);
    res.end('{}');
  });
  const url = async (server: typeof slow) => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  };
  try {
    const started = Date.now();
    const trickled = refusal(
      'answer trickled',
      await runPlugin(
        cniEnv('ADD', 'c1', 'x', podArgs('web', 'u')),
        config({ kubeconfig: kubeconfigFor(await url(slow)), requestTimeoutSeconds: 1 }),
      ),
    );
    expect(trickled).toMatchObject({
      code: 104,
      msg: expect.stringMatching(/no whole answer within 1000 ms$/),
    });
    expect(Date.now() - started).toBeLessThan(5000);
    const big = refusal(
      'answer too large',
      await runPlugin(
        cniEnv('ADD', 'c1', 'x', podArgs('web', 'u')),
        config({ kubeconfig: kubeconfigFor(await url(huge)) }),
      ),
    );
    expect(big).toMatchObject({ code: 104, msg: expect.stringMatching(/an answer over 16777216 bytes$/) });
  } finally {
    slow.closeAllConnections();
    huge.closeAllConnections();
    slow.close();
    huge.close();
  }
  // an answer of 200 that is not a pod (a proxy's page, `null`), and a prevResult that is no result
  const odd = createHttpServer((_req, res) => res.end('null'));
  try {
    expect(
      refusal(
        'a 200 that is no pod',
        await runPlugin(
          cniEnv('ADD', 'c1', 'x', podArgs('web', 'u')),
          config({ kubeconfig: kubeconfigFor(await url(odd)) }),
        ),
      ),
    ).toEqual({
      cniVersion: '1.0.0',
      code: 104,
      msg: 'getting pod default/web: the answer is not a pod object',
      details: 'null',
    });
  } finally {
    odd.close();
  }
  for (const prevResult of [
    { cniVersion: '1.0.0', interfaces: [null] },
    { cniVersion: '1.0.0', interfaces: 'x' },
  ])
    expect(
      refusal('prevResult no result', await runPlugin(cniEnv('DEL', 'c1', 'x'), config({ prevResult }))),
    ).toEqual({
      cniVersion: '1.0.0',
      code: 7,
      msg: 'prevResult must be a result: an object whose interfaces are {name, ...}',
    });
  expect(
    refusal(
      'no request limit',
      await runPlugin(cniEnv('ADD', 'c1', 'x'), config({ requestTimeoutSeconds: 0 })),
    ),
  ).toEqual({
    cniVersion: '1.0.0',
    code: 7,
    msg: 'requestTimeoutSeconds must be a number of seconds from above 0 to 3600, not 0',
  });
});

test('a delegate failure passes its message on, naming a master the node lacks, and the failed ADD undoes what it did', async () => {
  const node = lab.ns('node');
  const pod = await lab.addNamespace('pod');
  // the ipinfos handed over as galaxy's daemon does: the node namespace has no way to the API server
  const handed = handedOver;
  const missing = refusal(
    'delegate failure',
    await runPlugin(
      cniEnv('ADD', 'c1', pod, handed(ipinfo(60))),
      config({ delegate: { type: 'macvlan', master: 'nosuchdev' } }),
      node,
    ),
  );
  expect(missing).toEqual({
    cniVersion: '1.0.0',
    code: 105,
    // the delegate's own words name no link: which one is missing is what the operator must fix
    msg: "delegate macvlan ADD eth0: Link not found (the delegate's master interface nosuchdev does not exist on this node)",
  });
  // two VLANs, two interfaces: eth0 comes up, eth1 (VLAN 7: the master's VLAN interface, which this node lacks) fails
  const failed = refusal(
    'second interface fails',
    await runPlugin(cniEnv('ADD', 'c2', pod, handed(ipinfo(61), ipinfo(62, 7))), config(), node),
  );
  expect(failed).toEqual({
    cniVersion: '1.0.0',
    code: 105,
    msg: `delegate macvlan ADD eth1: Link not found (the delegate's master interface ${master}.7, the node's interface for VLAN 7, does not exist on this node)`,
  });
  expect(await ip('-n', pod, '-o', 'link')).not.toMatch(/eth[01]/);
  expect(existsSync(`${state}/underlay`) ? readdirSync(`${state}/underlay`) : []).toEqual([]);
});

test('a delegate that fails after making its interface: the failed ADD deletes that interface too (Debian’s macvlan leaves it when its route fails), with one interface or two', async () => {
  const node = lab.ns('node');
  const pod = await lab.addNamespace('latefail');
  // macvlan, then a failure on one interface name: what macvlan 1.1.1 does when its route fails
  const failingOn = (ifname: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'floatip-cni-latefail-'));
    writeFileSync(
      join(dir, 'macvlan'),
      `#!/bin/sh\nout=$(${CNI_BIN}/macvlan); rc=$?\nif [ "$CNI_COMMAND" = ADD ] && [ "$CNI_IFNAME" = ${ifname} ]; then echo '{"cniVersion":"1.0.0","code":11,"msg":"failed after making ${ifname}"}'; exit 1; fi\nprintf '%s' "$out"; exit $rc\n`,
      { mode: 0o755 },
    );
    return dir;
  };
  const dirs = [failingOn('eth0'), failingOn('eth1')];
  const add = (id: string, dir: string, ...infos: unknown[]) =>
    runPlugin(
      { ...cniEnv('ADD', id, pod, { ipinfos: JSON.stringify(infos) }), CNI_PATH: `${dir}:${CNI_BIN}` },
      config(),
      node,
    );
  // VLAN 7's master, the node's `<master>.7` (a veth here: the kernel has no 802.1Q), for a second interface
  const vlan7 = `${master}.7`;
  await ip('-n', node, 'link', 'add', vlan7, 'type', 'veth', 'peer', 'name', `${lab.prefix}p7`);
  await ip('-n', node, 'link', 'set', vlan7, 'up');
  try {
    expect(refusal('the delegate fails after making eth0', await add('l1', dirs[0]!, ipinfo(64)))).toEqual({
      cniVersion: '1.0.0',
      code: 105,
      msg: 'delegate macvlan ADD eth0: failed after making eth0',
    });
    expect(await ip('-n', pod, '-o', 'link')).not.toMatch(/eth0/);
    // two VLANs, two interfaces: eth0 is added, eth1's delegate fails after making it
    expect(
      refusal('the delegate fails after making eth1', await add('l2', dirs[1]!, ipinfo(65), ipinfo(66, 7))),
    ).toEqual({ cniVersion: '1.0.0', code: 105, msg: 'delegate macvlan ADD eth1: failed after making eth1' });
    expect(await ip('-n', pod, '-o', 'link')).not.toMatch(/eth[01]/);
    expect(existsSync(`${state}/underlay`) ? readdirSync(`${state}/underlay`) : []).toEqual([]);
  } finally {
    await ip('-n', node, 'link', 'del', vlan7);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
});

test('a delegate that never answers is killed after delegateTimeoutSeconds with what it started (105), nothing left; one that says megabytes is passed on clipped', async () => {
  const node = lab.ns('node');
  const pod = await lab.addNamespace('hang');
  // a delegate stuck for good, with a process of its own: both must go, not only the one floatip-cni started
  const dir = mkdtempSync(join(tmpdir(), 'floatip-cni-hang-'));
  writeFileSync(
    join(dir, 'hang'),
    `#!/bin/sh\nsleep 300 &\necho $! > ${dir}/child.pid\necho $$ > ${dir}/self.pid\nwait\n`,
    { mode: 0o755 },
  );
  const gone = (pid: number) => {
    try {
      // a zombie is gone too: only its parent's wait is left
      return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? true;
    } catch {
      return true;
    }
  };
  try {
    const handed = { ipinfos: JSON.stringify([ipinfo(63)]) };
    const env = { ...cniEnv('ADD', 'h1', pod, handed), CNI_PATH: `${dir}:${CNI_BIN}` };
    const started = Date.now();
    const network = config({ delegateTimeoutSeconds: 0.5, delegate: { type: 'hang', master } });
    const hung = refusal('a delegate that hangs', await runPlugin(env, network, node));
    expect(hung).toEqual({
      cniVersion: '1.0.0',
      code: 105,
      msg: 'delegate hang ADD eth0: no answer within 0.5 s (delegateTimeoutSeconds); killed',
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    const pids = ['self', 'child'].map((p) => Number(readFileSync(join(dir, `${p}.pid`), 'utf8')));
    for (let i = 0; i < 20 && !pids.every(gone); i++) await new Promise((r) => setTimeout(r, 100));
    expect(pids.filter((pid) => !gone(pid))).toEqual([]);
    expect(existsSync(`${state}/underlay`) ? readdirSync(`${state}/underlay`) : []).toEqual([]);
    // one that leaves a process of another session holding its output: the run still ends at the limit
    writeFileSync(join(dir, 'daemon'), `#!/bin/sh\nsetsid sleep 300 &\necho $! > ${dir}/daemon.pid\nwait\n`, {
      mode: 0o755,
    });
    const daemonStarted = Date.now();
    try {
      expect(
        refusal(
          'a delegate whose daemon keeps its output',
          await runPlugin(
            env,
            config({ delegateTimeoutSeconds: 0.5, delegate: { type: 'daemon', master } }),
            node,
          ),
        ),
      ).toMatchObject({
        code: 105,
        msg: 'delegate daemon ADD eth0: no answer within 0.5 s (delegateTimeoutSeconds); killed',
      });
      expect(Date.now() - daemonStarted).toBeLessThan(10_000);
    } finally {
      process.kill(Number(readFileSync(join(dir, 'daemon.pid'), 'utf8')), 'SIGKILL');
    }
    // one that fails saying megabytes: the error carries the first 4 KiB of it
    writeFileSync(join(dir, 'chatty'), `#!/bin/sh\nhead -c 5000000 /dev/zero | tr '\\0' y\nexit 1\n`, {
      mode: 0o755,
    });
    const chatty = refusal(
      'a delegate that says too much',
      await runPlugin(env, config({ delegate: { type: 'chatty', master } }), node),
    );
    expect(chatty).toEqual({
      cniVersion: '1.0.0',
      code: 105,
      msg: `delegate chatty ADD eth0: ${'y'.repeat(4096)}... (${2 ** 20} characters)`,
    });
    // a limit of 0 would kill every delegate: refused as the configuration's mistake
    expect(
      refusal('no time at all', await runPlugin(env, config({ delegateTimeoutSeconds: 0 }), node)),
    ).toEqual({
      cniVersion: '1.0.0',
      code: 7,
      msg: 'delegateTimeoutSeconds must be a number of seconds from above 0 to 3600, not 0',
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a failed ADD deletes only what it added: an eth0 that was there survives, and a second ADD leaves the first alone', async () => {
  const node = lab.ns('node');
  const pod = await lab.addNamespace('foreign');
  const handed = (n: number) => ({ ipinfos: JSON.stringify([ipinfo(n)]) });
  // an interface named eth0 that is not floatip-cni's: the delegate refuses, and it stays
  await ip('link', 'add', `${lab.prefix}f`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', pod);
  await ip('-n', pod, 'addr', 'add', '10.9.9.9/24', 'dev', 'eth0');
  const taken = refusal('eth0 taken', await runPlugin(cniEnv('ADD', 'f1', pod, handed(70)), config(), node));
  expect(taken).toMatchObject({ code: 105, msg: expect.stringMatching(/^delegate macvlan ADD eth0: /) });
  expect(await ip('-n', pod, '-o', 'addr', 'show', 'dev', 'eth0')).toContain('10.9.9.9/24');
  // the same attachment added twice: refused, and the first keeps its interface and its state
  const mine = await lab.addNamespace('twice');
  expect((await runPlugin(cniEnv('ADD', 't1', mine, handed(71)), config(), node)).code).toBe(0);
  expect(
    refusal('ADD twice', await runPlugin(cniEnv('ADD', 't1', mine, handed(72)), config(), node)),
  ).toEqual({
    cniVersion: '1.0.0',
    code: 4,
    msg: 'container t1 interface eth0 is already added on network underlay; DEL it first',
  });
  expect(await ip('-n', mine, '-o', 'addr', 'show', 'dev', 'eth0')).toContain('198.51.100.71/24');
  expect((await runPlugin(cniEnv('DEL', 't1', mine), config(), node)).code).toBe(0);
  expect(await ip('-n', mine, '-o', 'link')).not.toMatch(/eth0/);
});

test('a stateDir that cannot be made fails ADD with code 5 and adds nothing (under /proc node’s own mkdir -p spun for ever)', async () => {
  const node = lab.ns('node');
  const pod = await lab.addNamespace('procstate');
  const ipinfos = JSON.stringify([ipinfo(73)]);
  for (const dir of ['/proc/floatip-cni', '/sys/floatip-cni'])
    expect(
      refusal(
        `stateDir ${dir}`,
        await runPlugin(cniEnv('ADD', 's1', pod, { ipinfos }), config({ stateDir: dir }), node),
      ),
    ).toEqual({
      cniVersion: '1.0.0',
      code: 5,
      msg: expect.stringMatching(new RegExp(`^writing state ${dir}/underlay/s1:eth0\\.json: E[A-Z]+$`)),
    });
  expect(await ip('-n', pod, '-o', 'link')).not.toMatch(/eth0/);
});

test('what names no pod or puts nothing on it is refused: `..` as a pod name, no ipinfos, a GC list it cannot read', async () => {
  for (const [namespace, name] of [
    ['ns1', '..'],
    ['..', 'x'],
    ['ns1', 'a/b'],
  ] as const) {
    expect(
      refusal(
        `pod ${namespace}/${name}`,
        await runPlugin(
          cniEnv('ADD', 'p1', 'x', { K8S_POD_NAMESPACE: namespace, K8S_POD_NAME: name }),
          config(),
        ),
      ),
    ).toEqual({
      cniVersion: '1.0.0',
      code: 4,
      msg: `CNI_ARGS names no pod a Kubernetes name can name: ${JSON.stringify(`${namespace}/${name}`)}`,
    });
  }
  // what kubelet can never send: refused before the API server is asked (it answered a long one 431)
  for (const [namespace, name] of [
    ['ns1', 'x'.repeat(100_000)],
    ['Default', 'x'],
    ['ns1', 'a_b'],
  ] as const) {
    const refused = refusal(
      `pod ${namespace}/${name.slice(0, 20)}`,
      await runPlugin(
        cniEnv('ADD', 'p1', 'x', { K8S_POD_NAMESPACE: namespace, K8S_POD_NAME: name }),
        config(),
      ),
    );
    expect(refused).toMatchObject({
      code: 4,
      msg: expect.stringMatching(/^CNI_ARGS names no pod a Kubernetes name can name: "/),
    });
    expect((refused.msg as string).length).toBeLessThan(400);
  }
  for (const ipinfos of ['[]', 'null'])
    expect(
      refusal(`ipinfos=${ipinfos}`, await runPlugin(cniEnv('ADD', 'e1', 'x', { ipinfos }), config())),
    ).toMatchObject({ code: 101, msg: 'the ipinfos argument has no ipinfos' });
  expect(
    refusal(
      'GC list with bad entries',
      await runPlugin(
        cniEnv('GC', '', ''),
        config({ cniVersion: '1.1.0', 'cni.dev/valid-attachments': [null, 1] }),
      ),
    ),
  ).toEqual({
    cniVersion: '1.1.0',
    code: 7,
    msg: 'cni.dev/valid-attachments must be a list of {containerID, ifname}',
  });
});

test('a GC without cni.dev/valid-attachments, or with null, is refused (code 7) and deletes nothing: it deleted every attachment', async () => {
  // an attachment with state, as ADD leaves it (no interfaces to delete: what matters is the state)
  const file = `${state}/underlay/kept:eth0.json`;
  mkdirSync(`${state}/underlay`, { recursive: true });
  writeFileSync(file, JSON.stringify({ containerId: 'kept', ifname: 'eth0', netns: '', interfaces: [] }));
  try {
    expect(
      refusal('GC without a list', await runPlugin(cniEnv('GC', '', ''), config({ cniVersion: '1.1.0' }))),
    ).toEqual({
      cniVersion: '1.1.0',
      code: 7,
      msg: 'GC needs cni.dev/valid-attachments, the attachments still in use: without it every attachment would be deleted',
    });
    expect(
      refusal(
        'GC with a null list',
        await runPlugin(
          cniEnv('GC', '', ''),
          config({ cniVersion: '1.1.0', 'cni.dev/valid-attachments': null }),
        ),
      ),
    ).toEqual({
      cniVersion: '1.1.0',
      code: 7,
      msg: 'cni.dev/valid-attachments must be a list of {containerID, ifname}',
    });
    expect(existsSync(file)).toBe(true);
  } finally {
    rmSync(file, { force: true });
  }
});

test('the vlan delegate: a VLAN of the master per pod where the kernel has 802.1Q, its own error and nothing left where not', async () => {
  const node = lab.ns('node');
  const pod = await lab.addNamespace('vlanpod');
  const kernelHas8021q = await ip(
    '-n',
    node,
    'link',
    'add',
    'link',
    master,
    'name',
    'probe.9',
    'type',
    'vlan',
    'id',
    '9',
  ).then(
    () => ip('-n', node, 'link', 'del', 'probe.9').then(() => true),
    () => false,
  );
  const ipinfos = JSON.stringify([ipinfo(70, 12)]);
  const run = await runPlugin(
    cniEnv('ADD', 'v1', pod, { ipinfos }),
    config({ delegate: { type: 'vlan', master } }),
    node,
  );
  if (kernelHas8021q) {
    expect(run.code).toBe(0);
    expect(await ip('-n', pod, '-d', 'link', 'show', 'eth0')).toContain('vlan protocol 802.1Q id 12');
    expect(
      (await runPlugin(cniEnv('DEL', 'v1', pod), config({ delegate: { type: 'vlan', master } }), node)).code,
    ).toBe(0);
  } else {
    expect(refusal('vlan delegate on a kernel without 8021q', run)).toEqual({
      cniVersion: '1.0.0',
      code: 105,
      msg: 'delegate vlan ADD eth0: failed to create vlan: operation not supported',
    });
  }
  expect(await ip('-n', pod, '-o', 'link')).not.toContain('eth0');
  expect(existsSync(`${state}/underlay/v1:eth0.json`)).toBe(false);
});

test('what the runtime got wrong: version, environment, configuration', async () => {
  expect(
    refusal(
      'unsupported cniVersion',
      await runPlugin(cniEnv('ADD', 'c1', 'x'), config({ cniVersion: '0.2.0' })),
    ),
  ).toEqual({
    cniVersion: '0.2.0',
    code: 1,
    msg: 'cniVersion "0.2.0" is not supported',
    details: 'floatip-cni supports 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0',
  });
  // galaxy's daemon configurations name no cniVersion; libcni reads that as 0.1.0
  expect(
    refusal('no cniVersion', await runPlugin(cniEnv('ADD', 'c1', 'x'), config({ cniVersion: undefined }))),
  ).toMatchObject({
    code: 1,
    msg: 'the network configuration has no cniVersion (libcni reads none as 0.1.0): give one floatip-cni supports',
    details: 'floatip-cni supports 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0',
  });
  expect(
    refusal(
      'a container ID too long for its state file',
      await runPlugin(cniEnv('ADD', 'c'.repeat(5000), 'x'), config()),
    ),
  ).toEqual({
    cniVersion: '1.0.0',
    code: 4,
    msg: `CNI_CONTAINERID "${'c'.repeat(100)}..." is not a container ID (letters, digits, '_', '.', '-'; at most 234)`,
  });
  // a relative namespace path was stored by ADD, and a DEL from another directory found nothing there
  for (const command of ['ADD', 'DEL', 'CHECK'])
    expect(
      refusal(
        `${command} with a relative CNI_NETNS`,
        await runPlugin(
          { ...cniEnv(command, 'r1', 'x', { ipinfos: JSON.stringify([ipinfo(74)]) }), CNI_NETNS: 'hunt-a' },
          config(),
        ),
      ),
    ).toEqual({
      cniVersion: '1.0.0',
      code: 4,
      msg: 'CNI_NETNS "hunt-a" is not an absolute path: the network namespace is named by its full path',
    });
  expect(existsSync(`${state}/underlay/r1:eth0.json`)).toBe(false);
  const { CNI_CONTAINERID: _, ...noContainer } = cniEnv('ADD', 'c1', 'x');
  expect(refusal('no CNI_CONTAINERID', await runPlugin(noContainer, config()))).toEqual({
    cniVersion: '1.0.0',
    code: 4,
    msg: 'CNI_CONTAINERID is required for ADD',
  });
  expect(refusal('stdin not JSON', await runPlugin(cniEnv('ADD', 'c1', 'x'), 'not json'))).toMatchObject({
    code: 6,
    msg: expect.stringMatching(/^network configuration on stdin is not JSON: /),
  });
  expect(
    refusal('no delegate', await runPlugin(cniEnv('ADD', 'c1', 'x'), config({ delegate: undefined }))),
  ).toEqual({
    cniVersion: '1.0.0',
    code: 7,
    msg: 'delegate must be an object naming the data-plane plugin in "type" (vlan, macvlan, ipvlan or bridge)',
  });
  // `..` passed to fail at the spawn (EACCES, code 100): a directory of CNI_PATH is no plugin
  for (const type of ['..', '.', '../macvlan', '/usr/lib/cni/macvlan', ''])
    expect(
      refusal(
        `delegate.type ${type}`,
        await runPlugin(
          cniEnv('ADD', 'c1', 'x', { ipinfos: JSON.stringify([ipinfo(75)]) }),
          config({ delegate: { type } }),
        ),
      ),
    ).toEqual({
      cniVersion: '1.0.0',
      code: 7,
      msg: `delegate.type ${JSON.stringify(type)} is not a plugin's file name (letters, digits, '_', '.', '-'; not '.' or '..')`,
    });
  expect(refusal('GC on a 1.0.0 configuration', await runPlugin(cniEnv('GC', '', ''), config()))).toEqual({
    cniVersion: '1.0.0',
    code: 1,
    msg: 'GC needs cniVersion 1.1.0, the configuration says 1.0.0',
  });
  const version = await runPlugin({ CNI_COMMAND: 'VERSION' }, { cniVersion: '1.1.0' });
  expect({ code: version.code, out: version.out }).toEqual({
    code: 0,
    out: { cniVersion: '1.1.0', supportedVersions: ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] },
  });
  // a newer runtime asks in its own version, or with nothing: it learns what this plugin speaks
  for (const asked of [{ cniVersion: '1.2.0' }, ''])
    expect(await runPlugin({ CNI_COMMAND: 'VERSION' }, asked)).toMatchObject({
      code: 0,
      out: { cniVersion: '1.1.0', supportedVersions: ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] },
    });
});
