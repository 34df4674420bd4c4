// What reading one watch event costs floatip: the reflector's reader (src/kube/watch-lines.ts)
// against client-node's Watch, which it replaced, on the same stream of Deployment pods as a
// v1.20 API server writes them (managedFields and all, about 3 KiB each). The stream is written by
// a bare node:http server on a worker thread from one prepared buffer, so the reader's thread does
// nothing but read: the time until its last event is its cost. Interleaved rounds, medians.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { type KubeConfig, Watch } from '@kubernetes/client-node';
import { ApiConnection } from '../src/kube/api-connection.js';
import { shareConnections } from '../src/kube/shared-agent.js';
import { watchLines } from '../src/kube/watch-lines.js';
import { plainKubeConfig } from './kubeconfig.js';
import type { BenchResult } from './types.js';

const EVENTS = 20_000;
const ROUNDS = 5;

/** A pod of a Deployment as kube-apiserver sends it in a watch event after its binding. */
function pod(i: number): object {
  const name = `web-7778898c55-${i.toString(36).padStart(5, 'x')}`;
  const time = '2026-12-01T15:17:03Z';
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name,
      generateName: 'web-7778898c55-',
      namespace: 'e2e-bench',
      uid: `6f1c2a3e-0b1d-4c5e-9f00-${i.toString(16).padStart(12, '0')}`,
      resourceVersion: String(100_000 + i),
      creationTimestamp: time,
      labels: { app: 'web', 'pod-template-hash': '7778898c55', 'floatip-e2e/scale-run': 'b1-ncc' },
      annotations: {
        'k8s.v1.cni.galaxy.io/args':
          '{"common":{"ipinfos":[{"ip":"10.100.3.17/20","vlan":0,"gateway":"10.100.0.1"}]}}',
      },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web-7778898c55',
          uid: 'b8e1d9f2-4c3a-4e2b-8d1f-0a9b8c7d6e5f',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:generateName': {},
              'f:labels': { '.': {}, 'f:app': {}, 'f:pod-template-hash': {}, 'f:floatip-e2e/scale-run': {} },
              'f:ownerReferences': { '.': {}, 'k:{"uid":"b8e1d9f2-4c3a-4e2b-8d1f-0a9b8c7d6e5f"}': {} },
            },
            'f:spec': {
              'f:containers': {
                'k:{"name":"app"}': {
                  '.': {},
                  'f:image': {},
                  'f:imagePullPolicy': {},
                  'f:name': {},
                  'f:resources': {
                    '.': {},
                    'f:limits': { '.': {}, 'f:tke.cloud.tencent.com/eni-ip': {} },
                    'f:requests': { '.': {}, 'f:tke.cloud.tencent.com/eni-ip': {} },
                  },
                  'f:terminationMessagePath': {},
                  'f:terminationMessagePolicy': {},
                },
              },
              'f:dnsPolicy': {},
              'f:enableServiceLinks': {},
              'f:restartPolicy': {},
              'f:schedulerName': {},
              'f:securityContext': {},
              'f:terminationGracePeriodSeconds': {},
            },
          },
        },
        {
          manager: 'kube-scheduler',
          operation: 'Update',
          apiVersion: 'v1',
          time,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:status': {
              'f:conditions': {
                '.': {},
                'k:{"type":"PodScheduled"}': {
                  '.': {},
                  'f:lastProbeTime': {},
                  'f:lastTransitionTime': {},
                  'f:status': {},
                  'f:type': {},
                },
              },
            },
          },
        },
      ],
    },
    spec: {
      volumes: [
        { name: 'default-token-x7k2p', secret: { secretName: 'default-token-x7k2p', defaultMode: 420 } },
      ],
      containers: [
        {
          name: 'app',
          image: 'pause',
          resources: {
            limits: { 'tke.cloud.tencent.com/eni-ip': '1' },
            requests: { 'tke.cloud.tencent.com/eni-ip': '1' },
          },
          volumeMounts: [
            {
              name: 'default-token-x7k2p',
              readOnly: true,
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
            },
          ],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'Always',
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      serviceAccount: 'default',
      nodeName: `bench-${(i % 50) + 1}`,
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: time }],
      qosClass: 'BestEffort',
    },
  };
}

/** The worker: serves every watch with the whole prepared stream, then ends it. */
function serve(): void {
  const stream = Buffer.from(
    Array.from(
      { length: EVENTS },
      (_, i) => `${JSON.stringify({ type: 'MODIFIED', object: pod(i) })}\n`,
    ).join(''),
  );
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(stream);
  });
  server.listen(0, '127.0.0.1', () => {
    parentPort!.postMessage({ port: (server.address() as AddressInfo).port, bytes: stream.length });
  });
}

type Reader = 'watchLines' | 'client-node Watch';

async function readAll(kc: KubeConfig, reader: Reader): Promise<number> {
  let seen = 0;
  const began = process.hrtime.bigint();
  await new Promise<void>((resolve, reject) => {
    const onEvent = (type: string, object: unknown) => {
      // what the reflector reads of each event
      if (type && (object as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion) seen++;
    };
    if (reader === 'watchLines') {
      const request = watchLines(
        new ApiConnection(kc),
        '/api/v1/pods',
        {},
        'bench watch',
        (e) => onEvent(e.type, e.object),
        (err) => (err ? reject(err) : resolve()),
      );
      request.opened.catch(reject);
    } else {
      new Watch(kc)
        .watch('/api/v1/pods', {}, onEvent, (err) => (err ? reject(err) : resolve()))
        .catch(reject);
    }
  });
  const ms = Number(process.hrtime.bigint() - began) / 1e6;
  if (seen !== EVENTS) throw new Error(`${reader}: ${seen} of ${EVENTS} events`);
  return ms;
}

export async function benchWatch(): Promise<BenchResult[]> {
  const worker = new Worker(new URL(import.meta.url), { workerData: { serve: true } });
  const { port, bytes } = await new Promise<{ port: number; bytes: number }>((resolve) =>
    worker.once('message', resolve),
  );
  try {
    const kc = plainKubeConfig(`http://127.0.0.1:${port}`);
    shareConnections(kc);
    const readers: Reader[] = ['client-node Watch', 'watchLines'];
    const times: Record<Reader, number[]> = { watchLines: [], 'client-node Watch': [] };
    await readAll(kc, 'watchLines'); // warm both up first
    await readAll(kc, 'client-node Watch');
    for (let round = 0; round < ROUNDS; round++)
      for (const reader of round % 2 ? readers : [...readers].reverse())
        times[reader].push(await readAll(kc, reader));
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const perEvent = (reader: Reader) => Math.round((median(times[reader]) * 1000 * 10) / EVENTS) / 10;
    const size = `${EVENTS.toLocaleString('en')} pod events of ${Math.round(bytes / EVENTS).toLocaleString('en')} bytes`;
    return [
      {
        name: `watch: client-node's Watch, ${size}, per event`,
        value: perEvent('client-node Watch'),
        unit: 'µs',
      },
      {
        name: `watch: floatip's reader (watch-lines.ts), the same, per event`,
        value: perEvent('watchLines'),
        unit: 'µs',
      },
    ];
  } finally {
    await worker.terminate();
  }
}

if (!isMainThread && (workerData as { serve?: boolean } | undefined)?.serve) serve();
