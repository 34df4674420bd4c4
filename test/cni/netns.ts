// Real network namespaces for the floatip-cni tests: "nodes" joined by a veth pair (each end the
// macvlan master of its node's pods), pods as empty namespaces, and the plugin run inside a node as
// kubelet would run it there. The nodes reach the test's API server through a forwarder on their
// own loopback (a Unix socket is the one path that crosses network namespaces).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PLUGIN } from './setup.js';

const exec = promisify(execFile);

export async function ip(...args: string[]): Promise<string> {
  return (await exec('ip', args)).stdout;
}

/** The port the API server answers on inside every node (each node has its own loopback). */
export const NODE_API_PORT = 6443;

export interface PluginRun {
  readonly code: number | null;
  /** stdout parsed (a result or a CNI error object), or the raw text when it is not JSON. */
  readonly out: Record<string, unknown>;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs floatip-cni with CNI_* variables and the configuration on stdin, in `netns` (a node) or here. */
export function runPlugin(env: Record<string, string>, config: unknown, netns?: string): Promise<PluginRun> {
  const [command, args] = netns
    ? ['ip', ['netns', 'exec', netns, process.execPath, PLUGIN]]
    : [process.execPath, [PLUGIN]];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      let out: Record<string, unknown>;
      try {
        out = JSON.parse(stdout) as Record<string, unknown>;
      } catch {
        out = { raw: stdout };
      }
      resolve({ code, out, stdout, stderr });
    });
    child.stdin.on('error', () => undefined); // the run's output says what happened
    child.stdin.end(typeof config === 'string' ? config : JSON.stringify(config));
  });
}

/** Namespaces named `<prefix>-<name>`, all removed by `destroy()`. */
let labs = 0;

export class Lab {
  // interface names have 15 bytes: the prefix leaves room for a suffix letter
  readonly prefix = `fc${process.pid % 100000}${labs++}`;
  private readonly namespaces: string[] = [];
  private readonly forwarders: ChildProcess[] = [];
  private socketServer?: Server;
  private readonly socket = join(tmpdir(), `${this.prefix}-api.sock`);

  ns(name: string): string {
    return `${this.prefix}-${name}`;
  }

  async addNamespace(name: string): Promise<string> {
    const full = this.ns(name);
    await ip('netns', 'add', full);
    this.namespaces.push(full);
    await ip('-n', full, 'link', 'set', 'lo', 'up');
    return full;
  }

  /** Two nodes joined by a veth pair; returns each node's end (its pods' macvlan master). */
  async twoNodes(a: string, b: string): Promise<[string, string]> {
    const [na, nb] = [await this.addNamespace(a), await this.addNamespace(b)];
    const [ea, eb] = [`${this.prefix}a`, `${this.prefix}b`];
    await ip('link', 'add', ea, 'netns', na, 'type', 'veth', 'peer', 'name', eb, 'netns', nb);
    await ip('-n', na, 'link', 'set', ea, 'up');
    await ip('-n', nb, 'link', 'set', eb, 'up');
    return [ea, eb];
  }

  /**
   * A node whose pods' macvlan master is one end of a veth pair, the other end up in a namespace of
   * its own: a carrier, or an IPv6 ADD waits 10 s for duplicate address detection.
   */
  async nodeWithMaster(): Promise<{ node: string; master: string }> {
    const [node, other] = [await this.addNamespace('node'), await this.addNamespace('other')];
    const [master, peer] = [`${this.prefix}m`, `${this.prefix}o`];
    await ip('link', 'add', master, 'netns', node, 'type', 'veth', 'peer', 'name', peer, 'netns', other);
    await ip('-n', node, 'link', 'set', master, 'up');
    await ip('-n', other, 'link', 'set', peer, 'up');
    return { node, master };
  }

  /** Makes `apiUrl` (here) answer on 127.0.0.1:NODE_API_PORT inside each of `nodes`. */
  async exposeApiServer(apiUrl: string, nodes: string[]): Promise<void> {
    const { hostname, port } = new URL(apiUrl);
    rmSync(this.socket, { force: true });
    this.socketServer = createServer((conn) => {
      const upstream = createConnection(Number(port), hostname);
      conn.pipe(upstream).pipe(conn);
      conn.on('error', () => upstream.destroy());
      upstream.on('error', () => conn.destroy());
    });
    await new Promise<void>((r) => this.socketServer!.listen(this.socket, r));
    const script = `const net=require('node:net');net.createServer(c=>{const u=net.createConnection(${JSON.stringify(this.socket)});c.pipe(u).pipe(c);c.on('error',()=>u.destroy());u.on('error',()=>c.destroy())}).listen(${NODE_API_PORT},'127.0.0.1',()=>console.log('ready'))`;
    for (const node of nodes) {
      const child = spawn('ip', ['netns', 'exec', node, process.execPath, '-e', script], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      this.forwarders.push(child);
      await new Promise<void>((resolve, reject) => {
        child.stdout!.once('data', () => resolve());
        child.once('exit', (code) => reject(new Error(`the API forwarder in ${node} exited (${code})`)));
      });
    }
  }

  async destroy(): Promise<void> {
    for (const child of this.forwarders) child.kill();
    this.socketServer?.close();
    rmSync(this.socket, { force: true });
    for (const ns of this.namespaces.reverse()) await ip('netns', 'del', ns).catch(() => undefined);
  }
}

/** ping from a pod's namespace: true when one echo came back within 2 s. */
export async function pings(fromNetns: string, address: string): Promise<boolean> {
  try {
    await exec('ip', ['netns', 'exec', fromNetns, 'ping', '-c', '1', '-W', '2', address]);
    return true;
  } catch {
    return false;
  }
}
