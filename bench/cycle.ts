// floatip's own CPU per scheduled pod, without a control plane: a pod's whole cycle as kube-scheduler
// drives it (filter and prioritize with node names or full Nodes, then bind), its creation and the
// watch events its bind causes (the pod bound, its FloatingIP), against the embedded API server on
// its own thread, with the scheduler's calls sent from another. floatip's main thread is the only
// JavaScript on it, so that thread's CPU time (the kernel's count) is floatip's cost on the hot path,
// without TLS and without a saturated machine. On the two-core VM of 2026-12-03 the median of one
// run moved between 0.75 and 0.98 ms per pod from run to run of the same code: compare versions by
// several interleaved runs each, not one.
//
// After each measured round its pods are deleted, and what their releases cost floatip's thread is
// measured too: a pod's whole life is a bind and a release.
//
// Beside it, on the same threads with the same client and pods, a floor: a bare node:http server that
// answers the three calls a pod gets (parses each request, answers filter and prioritize with what
// floatip answers, bind with no error) and does nothing else; no writes, no watches. What a pod
// costs floatip above that floor is its decisions, its two writes and its watch events.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import type { KubeObject } from '../src/apiserver/index.js';
import { DEFAULT_RESOURCE } from '../src/pods/pod-facts.js';
import { floatipOnApiServerThread } from './apiserver-thread.js';
import { leanPost } from './lean-post.js';
import { deploymentPod, POD_NAMESPACE } from './pods.js';
import type { BenchResult } from './types.js';

const NODES = 50;
const WARM = 1000;
const MEASURED = 1000;
const ROUNDS = 5;

const CONFIG = [
  {
    nodeSubnets: ['10.99.0.0/22'],
    ips: ['10.100.0.10~10.100.63.250'],
    subnet: '10.100.0.0/18',
    gateway: '10.100.0.1',
  },
];

function node(i: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: `bench-${i + 1}`, labels: { 'kubernetes.io/hostname': `bench-${i + 1}` } },
    status: {
      addresses: [{ type: 'InternalIP', address: `10.99.0.${i + 10}` }],
      capacity: { cpu: '8', pods: '110', [DEFAULT_RESOURCE]: '64' },
      allocatable: { cpu: '8', pods: '110', [DEFAULT_RESOURCE]: '64' },
    },
  };
}

/** Pod `i` as kube-controller-manager creates it, named apart from every other run's. */
const pod = (i: number): KubeObject => deploymentPod(i, { bound: false }) as KubeObject;

// the scheduler's loop: filter and prioritize one pod after another, binds in flight beside them
// (kube-scheduler binds asynchronously); each pod's bytes as it was created
const SCHEDULER = `
const { parentPort, workerData } = require('node:worker_threads');
${leanPost('32')}
// a pod's deletion as kube-controller-manager sends it, 16 at a time
const remove = (url) => new Promise((resolve, reject) => {
  const req = http.request(url, { method: 'DELETE', agent }, (res) => { res.resume(); res.on('end', resolve); });
  req.on('error', reject);
  req.end();
});
parentPort.on('message', async ({ url, pods, names, nodes, deletions }) => {
  if (deletions) {
    for (let i = 0; i < deletions.length; i += 16) await Promise.all(deletions.slice(i, i + 16).map(remove));
    parentPort.postMessage('done');
    return;
  }
  const binds = [];
  // names only (nodeCacheCapable), or the full Nodes as the scheduler's informer has them
  const ask = (pod, passing) => nodes
    ? { Pod: pod, Nodes: { metadata: {}, items: passing ?? nodes }, NodeNames: null }
    : { Pod: pod, Nodes: null, NodeNames: passing ?? names };
  for (const pod of pods) {
    const filtered = (await post(url + '/filter', Buffer.from(JSON.stringify(ask(pod))))).json;
    const passing = nodes ? filtered.Nodes?.items : filtered.NodeNames;
    if (filtered.Error || !passing?.length) throw new Error('filter ' + pod.metadata.name + ': ' + JSON.stringify(filtered));
    const scores = (await post(url + '/prioritize', Buffer.from(JSON.stringify(ask(pod, passing))))).json;
    const best = scores.reduce((a, b) => (b.Score > a.Score ? b : a));
    binds.push(post(url + '/bind', Buffer.from(JSON.stringify({ PodName: pod.metadata.name, PodNamespace: pod.metadata.namespace, PodUID: pod.metadata.uid, Node: best.Host }))).then(({ json: answer }) => {
      if (answer.Error) throw new Error('bind ' + pod.metadata.name + ': ' + answer.Error);
    }));
    if (binds.length >= 16) await binds.shift();
  }
  await Promise.all(binds);
  parentPort.postMessage('done');
});
`;

/**
 * The CPU time of this process's main thread (floatip's), in ms: the kernel's own count, with
 * nanoseconds in it (event-loop utilisation counts a wait for a core as work).
 */
function mainThreadCpuMs(): number {
  const [ns] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ');
  return Number(ns) / 1e6;
}

/**
 * The floor on floatip's thread: answers filter with every node it is sent, prioritize with a score
 * for each, bind with no error, after parsing each request as any extender must.
 */
async function floorExtender(): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const args = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        Nodes?: { items: { metadata: { name: string } }[] } | null;
        NodeNames?: string[] | null;
      };
      const names = args.NodeNames ?? args.Nodes?.items.map((n) => n.metadata.name) ?? [];
      const answer = req.url!.endsWith('/filter')
        ? { Nodes: args.Nodes, NodeNames: args.NodeNames, FailedNodes: {}, Error: '' }
        : req.url!.endsWith('/prioritize')
          ? names.map((Host) => ({ Host, Score: 0 }))
          : { Error: '' };
      const bytes = Buffer.from(JSON.stringify(answer));
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': bytes.length });
      res.end(bytes);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function benchCycle(): Promise<BenchResult[]> {
  const nodes = Array.from({ length: NODES }, (_, i) => node(i));
  const { server, floatip } = await floatipOnApiServerThread(POD_NAMESPACE, CONFIG, nodes);
  const scheduler = new Worker(SCHEDULER, { eval: true });
  const floor = await floorExtender();
  const names = nodes.map((n) => (n.metadata as { name: string }).name);
  let next = 0;
  // the Nodes as kube-scheduler's informer has them (with the API server's resourceVersions)
  const informed = nodes.map((n) => {
    const name = (n.metadata as { name: string }).name;
    return { ...n, metadata: { ...(n.metadata as object), ...floatip.cluster.nodes.get(name)?.metadata } };
  });
  /**
   * The scheduler's thread filters, prioritizes and binds `pods` at `url`; resolves with the CPU
   * milliseconds this thread spent handing them over (the harness's, not the extender's).
   */
  const schedule = (url: string, pods: KubeObject[], full: boolean) =>
    new Promise<number>((resolve, reject) => {
      scheduler.once('error', reject);
      const start = mainThreadCpuMs();
      scheduler.postMessage({ url, pods, names, nodes: full ? informed : null });
      const handover = mainThreadCpuMs() - start;
      scheduler.once('message', () => {
        scheduler.off('error', reject);
        resolve(handover);
      });
    });
  /** Schedules `count` new pods; resolves with the milliseconds of CPU floatip's thread spent. */
  const cycle = async (count: number, full: boolean) => {
    const pods = Array.from({ length: count }, () => pod(next++));
    const before = mainThreadCpuMs();
    // the pods are copied to the API server's thread on this one: the harness's cost, taken out
    const created = server.create(pods);
    const creating = mainThreadCpuMs() - before;
    await created;
    const cached = (p: KubeObject) => {
      const { name, namespace } = p.metadata as { name: string; namespace: string };
      return floatip.cluster.pods.get(namespace, name);
    };
    while (!pods.every(cached)) await new Promise((r) => setTimeout(r, 5));
    // as the scheduler has them: with the uid the API server gave
    const sent = pods.map((p) => ({
      ...p,
      metadata: { ...(p.metadata as object), uid: cached(p)!.metadata!.uid },
    }));
    const handover = await schedule(`${floatip.extenderUrl}/v1`, sent, full);
    // the binds' watch events (each pod bound, each FloatingIP) read; idle time is not busy time
    while (!pods.every((p) => cached(p)?.spec?.nodeName)) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 200));
    return { pods, ms: mainThreadCpuMs() - before - creating - handover };
  };
  const apiUrl = server.kubeConfig.getCurrentCluster()!.server;
  /**
   * Deletes `pods` (as kube-controller-manager would) and waits until floatip has released their
   * addresses; resolves with the milliseconds of CPU floatip's thread spent.
   */
  const release = async (pods: KubeObject[]) => {
    const before = mainThreadCpuMs();
    const deletions = pods.map((p) => {
      const { name, namespace } = p.metadata as { name: string; namespace: string };
      return `${apiUrl}/api/v1/namespaces/${namespace}/pods/${name}`;
    });
    const handover = await new Promise<number>((resolve, reject) => {
      scheduler.once('error', reject);
      const start = mainThreadCpuMs();
      scheduler.postMessage({ deletions });
      const spent = mainThreadCpuMs() - start;
      scheduler.once('message', () => {
        scheduler.off('error', reject);
        resolve(spent);
      });
    });
    while (floatip.allocator.size > 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 200));
    return mainThreadCpuMs() - before - handover;
  };
  /** The same calls for `count` pods answered by the floor; the CPU of the same thread, in ms. */
  const floorCycle = async (count: number, full: boolean) => {
    const pods = Array.from({ length: count }, () => {
      const p = pod(next++);
      return { ...p, metadata: { ...(p.metadata as object), uid: `floor-${next}` } };
    });
    const before = mainThreadCpuMs();
    const handover = await schedule(floor.url, pods, full);
    return mainThreadCpuMs() - before - handover;
  };
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const listed = (values: number[]) =>
    [...values]
      .sort((a, b) => a - b)
      .map((b) => b.toFixed(3))
      .join(', ');
  try {
    const results: BenchResult[] = [];
    const releases: number[] = [];
    for (const full of [false, true]) {
      await release((await cycle(WARM, full)).pods);
      await floorCycle(WARM, full);
      const busy: number[] = [];
      const floorBusy: number[] = [];
      // interleaved, so that a slow minute of the machine falls on both
      for (let r = 0; r < ROUNDS; r++) {
        const bound = await cycle(MEASURED, full);
        busy.push(bound.ms / MEASURED);
        releases.push((await release(bound.pods)) / MEASURED);
        floorBusy.push((await floorCycle(MEASURED, full)) / MEASURED);
      }
      const mode = `${NODES} ${full ? 'full Nodes' : 'names'}`;
      results.push(
        {
          name: `a pod's cycle (created, filter + prioritize with ${mode}, bind, its watch events): floatip main-thread CPU, median of ${ROUNDS} x ${MEASURED} pods [${listed(busy)}]`,
          value: Math.round(median(busy) * 1000) / 1000,
          unit: 'ms/pod',
        },
        {
          name: `the same three calls with ${mode} answered by the floor (a bare node:http server parsing each request; no writes, no watches) [${listed(floorBusy)}]`,
          value: Math.round(median(floorBusy) * 1000) / 1000,
          unit: 'ms/pod',
        },
        {
          name: `floatip / floor, ${mode}`,
          value: Math.round((median(busy) / median(floorBusy)) * 100) / 100,
          unit: 'x',
        },
      );
    }
    results.push({
      name: `a pod's release (deleted; floatip reads the pod back, deletes its FloatingIP, records an Event, reads their watch events): floatip main-thread CPU, median of ${releases.length} x ${MEASURED} pods [${listed(releases)}]`,
      value: Math.round(median(releases) * 1000) / 1000,
      unit: 'ms/pod',
    });
    return results;
  } finally {
    await floor.close();
    await scheduler.terminate();
    await floatip.close();
    await server.close();
  }
}
