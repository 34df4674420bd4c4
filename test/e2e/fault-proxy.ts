// A TCP proxy between floatip and kube-apiserver that misbehaves on demand, as a network does:
// latency (each chunk held back, in order), resets (every open connection RST at once) and a
// blackhole (every open connection, and every one accepted during the window, goes silent for
// good: nothing forwarded either way, nothing closed; a watch on it gets no more events and no
// end). It forwards bytes, so TLS is end to end: floatip's kubeconfig only names the proxy's port.
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { parse, stringify } from 'yaml';

export interface FaultProxyStats {
  connections: number;
  /** Connections RST by resetAll(). */
  resets: number;
  /** Connections that went silent in a blackhole. */
  blackholed: number;
}

export interface FaultProxy {
  readonly port: number;
  readonly stats: FaultProxyStats;
  /** Delay added to every chunk, each direction (0: none). */
  setLatency(ms: number): void;
  /** RSTs every open connection; returns how many. */
  resetAll(): number;
  /**
   * Silences every open connection for good and every one accepted in the next `ms`; resolves when
   * the window ends (new connections pass again; the silenced ones stay silent until their client
   * gives up on them).
   */
  blackhole(ms: number): Promise<number>;
  close(): Promise<void>;
}

interface Pipe {
  readonly client: Socket;
  upstream: Socket | undefined;
  dead: boolean;
}

/** Forwards `from` to `to` with the proxy's latency at the time each chunk arrived, in order. */
function forward(from: Socket, to: Socket, pipe: Pipe, latency: () => number): void {
  const queue: { at: number; chunk: Buffer | null }[] = [];
  let timer: NodeJS.Timeout | undefined;
  const drain = () => {
    timer = undefined;
    const now = Date.now();
    while (queue.length > 0 && queue[0]!.at <= now) {
      const { chunk } = queue.shift()!;
      if (pipe.dead || to.destroyed) continue;
      if (chunk === null) to.end();
      else to.write(chunk);
    }
    if (queue.length > 0) timer = setTimeout(drain, queue[0]!.at - now);
  };
  const push = (chunk: Buffer | null) => {
    if (pipe.dead) return;
    const last = queue.length > 0 ? queue[queue.length - 1]!.at : 0;
    queue.push({ at: Math.max(Date.now() + latency(), last), chunk });
    if (!timer) timer = setTimeout(drain, Math.max(0, queue[0]!.at - Date.now()));
  };
  from.on('data', (chunk: Buffer) => push(chunk));
  from.on('end', () => push(null));
}

export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const pipes = new Set<Pipe>();
  const stats: FaultProxyStats = { connections: 0, resets: 0, blackholed: 0 };
  let latencyMs = 0;
  let blackholeUntil = 0;
  const latency = () => latencyMs;

  const silence = (pipe: Pipe) => {
    if (pipe.dead) return;
    pipe.dead = true;
    stats.blackholed++;
    // the far end's close must not reach the client either: only the client ends a silent pipe
    pipe.upstream?.removeAllListeners('close');
  };

  const server: Server = createServer((client) => {
    stats.connections++;
    const pipe: Pipe = { client, upstream: undefined, dead: false };
    pipes.add(pipe);
    client.on('error', () => undefined);
    client.on('close', () => {
      pipes.delete(pipe);
      pipe.upstream?.destroy();
    });
    if (Date.now() < blackholeUntil) {
      silence(pipe);
      return;
    }
    const upstream = connect(target.port, target.host);
    pipe.upstream = upstream;
    upstream.on('error', () => undefined);
    upstream.on('close', () => {
      if (!pipe.dead) client.destroy();
    });
    forward(client, upstream, pipe, latency);
    forward(upstream, client, pipe, latency);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  return {
    port,
    stats,
    setLatency(ms) {
      latencyMs = ms;
    },
    resetAll() {
      let n = 0;
      for (const pipe of pipes) {
        if (pipe.dead) continue;
        n++;
        pipe.client.resetAndDestroy();
        pipe.upstream?.destroy();
      }
      stats.resets += n;
      return n;
    },
    async blackhole(ms) {
      blackholeUntil = Date.now() + ms;
      const before = stats.blackholed;
      for (const pipe of pipes) silence(pipe);
      await new Promise((resolve) => setTimeout(resolve, ms));
      return stats.blackholed - before;
    },
    async close() {
      for (const pipe of pipes) {
        pipe.client.destroy();
        pipe.upstream?.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A copy of `kubeconfigFile` whose clusters point at 127.0.0.1:`port` (the certificate names 127.0.0.1). */
export function kubeconfigThrough(kubeconfigFile: string, port: number, out: string): string {
  const config = parse(readFileSync(kubeconfigFile, 'utf8')) as {
    clusters: { cluster: { server: string } }[];
  };
  for (const c of config.clusters) c.cluster.server = `https://127.0.0.1:${port}`;
  writeFileSync(out, stringify(config), { mode: 0o600 });
  return out;
}
