// The churn's faults and the floatip replicas they hit. Two replicas with leader election, both
// reaching kube-apiserver through the fault proxy, behind the failover proxy on the extender URL;
// a replica that dies is started again (as its Deployment would). Each fault is one of the failures
// operators meet most, done for real: a component SIGKILLed and started again, the leader
// SIGKILLed, latency, resets and a blackhole between floatip and the API server.
import { controlComponent, extenderPort, loadCluster, runDir, type Component } from './cluster.js';
import { startFailoverProxy, type FailoverProxy } from './failover-proxy.js';
import { kubeconfigThrough, startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { FAST_LEADER_ELECTION, FloatipProcess, floatipKubeconfig } from './floatip.js';
import { sleep, waitFor } from './wait.js';
import { join } from 'node:path';

export const FAULT_KINDS = [
  'apiserver-restart',
  'apiserver-restart-mid-bind',
  'etcd-restart',
  'controller-manager-restart',
  'scheduler-restart',
  'leader-kill',
  'latency',
  'reset',
  'blackhole',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** How long a component stays down, the latency lasts, the blackhole lasts. */
const DOWN_MS = 2500;
const LATENCY_MS = 8000;
export const BLACKHOLE_MS = 5000;

export interface FaultRecord {
  readonly kind: FaultKind;
  readonly start: number;
  readonly end: number;
  readonly detail: string;
}

/** The two floatip replicas, kept at two, and the proxies in front of and behind them. */
export class Replicas {
  readonly all: FloatipProcess[] = [];
  restarts = 0;
  private readonly slots: (FloatipProcess | undefined)[] = [undefined, undefined];
  private supervising: NodeJS.Timeout | undefined;
  private closing = false;

  private constructor(
    readonly faults: FaultProxy,
    private readonly kubeconfig: string,
    private readonly resyncInterval: string,
    public failover: FailoverProxy | undefined = undefined,
  ) {}

  static async start(resyncInterval: string): Promise<Replicas> {
    const { APISERVER_URL } = loadCluster();
    const api = new URL(APISERVER_URL);
    const faults = await startFaultProxy({ host: api.hostname, port: Number(api.port) });
    // floatip's own ServiceAccount credentials, through the proxy
    const kubeconfig = kubeconfigThrough(
      floatipKubeconfig(),
      faults.port,
      join(runDir(), 'churn-floatip.kubeconfig'),
    );
    const replicas = new Replicas(faults, kubeconfig, resyncInterval);
    for (let i = 0; i < replicas.slots.length; i++) await replicas.spawn(i);
    await Promise.all(replicas.slots.map((p) => p!.ready({ listening: true })));
    replicas.failover = await startFailoverProxy({
      port: extenderPort(),
      backends: () => replicas.slots.filter((p) => p?.running && p.port !== undefined).map((p) => p!.url),
    });
    await replicas.leader(30_000);
    replicas.supervising = setInterval(() => replicas.supervise(), 500);
    return replicas;
  }

  private async spawn(slot: number): Promise<void> {
    this.slots[slot] = await FloatipProcess.start({
      name: `churn-${slot === 0 ? 'a' : 'b'}`,
      port: 0,
      leaderElect: FAST_LEADER_ELECTION,
      resyncInterval: this.resyncInterval,
      kubeconfig: this.kubeconfig,
    });
    this.all.push(this.slots[slot]!);
  }

  private supervise(): void {
    this.slots.forEach((p, slot) => {
      if (this.closing || !p || p.running) return;
      this.slots[slot] = undefined; // one restart at a time per slot
      this.restarts++;
      void sleep(1000).then(() => (this.closing ? undefined : this.spawn(slot)));
    });
  }

  /** The replica whose /readyz is 200 (it holds the Lease), waiting for one. */
  async leader(timeoutMs = 60_000): Promise<FloatipProcess> {
    return waitFor(
      'a floatip replica to lead',
      async () => {
        for (const p of this.slots) if (p && (await p.isReady())) return p;
        return undefined;
      },
      { timeoutMs, intervalMs: 100 },
    );
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.supervising);
    await this.failover?.close();
    await Promise.all(this.slots.map((p) => p?.stop()));
    await this.faults.close();
  }
}

async function restart(component: Component, downMs = DOWN_MS): Promise<void> {
  await controlComponent('stop', component);
  await sleep(downMs);
  await controlComponent('start', component);
}

/**
 * Injects one fault and returns when it is over (the component answers again, the window has
 * closed). `midBind` makes binds be under way: it returns once they are (see runChurn).
 */
export async function injectFault(
  kind: FaultKind,
  replicas: Replicas,
  midBind: () => Promise<string>,
): Promise<FaultRecord> {
  const start = Date.now();
  let detail = '';
  switch (kind) {
    case 'apiserver-restart':
      await restart('kube-apiserver');
      break;
    case 'apiserver-restart-mid-bind':
      detail = await midBind();
      await restart('kube-apiserver');
      break;
    case 'etcd-restart':
      await restart('etcd');
      break;
    case 'controller-manager-restart':
      await restart('kube-controller-manager', 500);
      break;
    case 'scheduler-restart':
      await restart('kube-scheduler', 500);
      break;
    case 'leader-kill': {
      const leader = await replicas.leader();
      detail = leader.name;
      await leader.kill();
      break;
    }
    case 'latency': {
      const ms = 100 + Math.floor(Math.random() * 400);
      detail = `${ms} ms`;
      replicas.faults.setLatency(ms);
      await sleep(LATENCY_MS);
      replicas.faults.setLatency(0);
      break;
    }
    case 'reset':
      detail = `${replicas.faults.resetAll()} connections`;
      break;
    case 'blackhole':
      detail = `${await replicas.faults.blackhole(BLACKHOLE_MS)} connections silenced`;
      break;
  }
  // kube-scheduler exits by itself when it finds a pod bound elsewhere than it assumed (a bind it
  // gave up on that went through later: floatip's bind budget is there to prevent it, and the
  // churn counts such exits); a static pod's kubelet starts it again, so does this
  await controlComponent('ensure', 'kube-scheduler');
  return { kind, start, end: Date.now(), detail };
}
