// Runs inside the bench's node namespace (bench/cni.ts): the embedded API server on this node's
// loopback, pods annotated as floatip's bind leaves them, and floatip-cni exec'd as kubelet would,
// timed from spawn to exit. Prints the samples (ms) as one JSON object.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { DEMO_NAMESPACES, FLOATINGIP_CRD, startApiServer } from '../src/apiserver/index.js';
import { createPod, writeKubeconfig } from './cni-fixtures.js';

const [master, podNetns, runsText] = process.argv.slice(2) as [string, string, string];
const runs = Number(runsText);
const PLUGIN = new URL('../src/cni-plugin/main.js', import.meta.url).pathname;
const CNI_BIN = '/usr/lib/cni';

function timed(command: string, args: string[], env: Record<string, string>, stdin: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${command} ${env.CNI_COMMAND ?? ''} exited ${code}: ${out}`));
      else resolve(performance.now() - started);
    });
    child.stdin.on('error', () => undefined); // `node -e 0` exits without reading it
    child.stdin.end(stdin);
  });
}

// each pod its own addresses: floatip-cni takes an address only from the pod its object names
const ipinfos = (dual: boolean) => [
  { ip: `198.51.100.${dual ? 11 : 10}/24`, vlan: 0, gateway: '198.51.100.1' },
  ...(dual ? [{ ip: '2001:db8::11/64', vlan: 0, gateway: '2001:db8::1' }] : []),
];

const server = await startApiServer({
  port: 0,
  seed: [...DEMO_NAMESPACES, FLOATINGIP_CRD],
  log: () => undefined,
});
const uids: Record<string, string> = {};
for (const dual of [false, true]) {
  const name = dual ? 'dual' : 'v4';
  uids[name] = createPod(server, name, { common: { ipinfos: ipinfos(dual) } });
}
const kubeconfig = writeKubeconfig(server.url);
const dir = dirname(kubeconfig);
const delegate = { type: 'macvlan', master, mode: 'bridge' };
const network = JSON.stringify({
  cniVersion: '1.0.0',
  name: 'bench',
  type: 'floatip-cni',
  kubeconfig,
  stateDir: join(dir, 'state'),
  delegate,
});
const env = (command: string, pod: string) => ({
  CNI_COMMAND: command,
  CNI_CONTAINERID: `bench-${pod}`,
  CNI_NETNS: `/var/run/netns/${podNetns}`,
  CNI_IFNAME: 'eth0',
  CNI_PATH: CNI_BIN,
  CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=${pod};K8S_POD_UID=${uids[pod]}`,
});
/** The delegate alone with the same static IPAM: what any plugin that uses it pays. */
const direct = (dual: boolean) =>
  JSON.stringify({
    cniVersion: '1.0.0',
    name: 'bench',
    ...delegate,
    ipam: {
      type: 'static',
      addresses: ipinfos(dual).map((i) => ({ address: i.ip, gateway: i.gateway })),
      routes: ipinfos(dual).map((i) => ({ dst: i.ip.includes(':') ? '::/0' : '0.0.0.0/0', gw: i.gateway })),
    },
  });

const samples: Record<string, number[]> = {};
const add = (name: string, ms: number) => (samples[name] ??= []).push(ms);
for (let i = 0; i < runs; i++) {
  add('node start (node -e 0)', await timed(process.execPath, ['-e', '0'], {}, ''));
  for (const dual of [false, true]) {
    if (dual && i % 3 !== 0) continue; // IPv6 DAD makes these slow: a third as many
    const family = dual ? 'dual stack' : 'IPv4';
    const pod = dual ? 'dual' : 'v4';
    add(
      `macvlan + static alone, ADD ${family}`,
      await timed(`${CNI_BIN}/macvlan`, [], env('ADD', pod), direct(dual)),
    );
    await timed(`${CNI_BIN}/macvlan`, [], env('DEL', pod), direct(dual));
    add(`floatip-cni ADD ${family}`, await timed(process.execPath, [PLUGIN], env('ADD', pod), network));
    add(`floatip-cni DEL ${family}`, await timed(process.execPath, [PLUGIN], env('DEL', pod), network));
  }
}
await server.close();
process.stdout.write(JSON.stringify(samples));
