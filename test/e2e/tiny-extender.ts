// The smallest scheduler extender that exercises the harness without floatip: it keeps every node,
// scores them alike, and binds with a fixed galaxy annotation. It records what the scheduler sent,
// so a scenario can tell the extender was really on the path.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { ClusterCache } from '../../src/kube/cluster.js';
import { CustomResourceClient } from '../../src/kube/custom-resources.js';
import { LeanClient } from '../../src/kube/lean-client.js';
import { silentLogger } from '../../src/log.js';
import { FLOATING_IP_PLURAL, GROUP, VERSION } from '../../src/store/floating-ip-object.js';
import { floatingIPReflector } from '../../src/store/floating-ip-follower.js';
import { shareConnections } from '../../src/kube/shared-agent.js';
import { clusterKubeConfig, extenderPort } from './cluster.js';
import { CNI_ARGS_ANNOTATION } from './fake-kubelet.js';
import { describeError } from './kube-errors.js';

export const TINY_CNI_ARGS = '{"common":{"ipinfos":[{"ip":"10.0.0.5/24","vlan":0,"gateway":"10.0.0.1"}]}}';

export interface TinyExtender {
  /** Calls per verb. */
  readonly calls: Record<'filter' | 'prioritize' | 'bind' | 'preempt' | 'other', number>;
  /** Which node form filter requests carried: NodeNames (nodeCacheCapable) or Nodes. */
  readonly filterForms: Set<'Nodes' | 'NodeNames'>;
  /** Bind failures, as returned to the scheduler. */
  readonly bindErrors: string[];
  close(): Promise<void>;
}

interface ExtenderArgs {
  Pod?: { metadata?: { name?: string; namespace?: string } };
  Nodes?: { items?: { metadata?: { name?: string } }[] } | null;
  NodeNames?: string[] | null;
}

interface BindingArgs {
  PodName: string;
  PodNamespace: string;
  PodUID: string;
  Node: string;
}

export async function startTinyExtender(
  options: {
    port?: number;
    kubeConfig?: KubeConfig;
    /**
     * Before each binding, create a FloatingIP object as floatip records an allocation (a made-up
     * address from 10.200.0.0/16): for bench:e2e, what that one write costs the control plane.
     */
    recordObjects?: boolean;
    /**
     * Also follow, with floatip's own reflector, every resource floatip follows that changes with
     * the pods it places (pods, nodes, FloatingIPs; Deployments and StatefulSets only once a pod's
     * release policy needs them, and this floor's pods have the default): for bench:e2e, the
     * least an IPAM that watches the pods it places pays besides answering and writing. `'pods'`:
     * the pods alone, the least any IPAM that releases a deleted pod's address must watch.
     */
    watch?: boolean | 'pods';
  } = {},
): Promise<TinyExtender> {
  // pooled keep-alive connections and one plain POST per write, as floatip writes: the floor is no
  // heavier than what it is compared with
  const kc = shareConnections(options.kubeConfig ?? clusterKubeConfig());
  const writer = new LeanClient(kc);
  const watching = options.watch ? await startWatching(kc, options.watch === 'pods') : undefined;
  let recorded = 0;
  const calls = { filter: 0, prioritize: 0, bind: 0, preempt: 0, other: 0 };
  const filterForms = new Set<'Nodes' | 'NodeNames'>();
  const bindErrors: string[] = [];

  const handle = async (verb: string, body: unknown): Promise<unknown> => {
    switch (verb) {
      case 'filter': {
        calls.filter++;
        const args = body as ExtenderArgs;
        // the scheduler expects the same form back that it sent
        if (args.NodeNames) {
          filterForms.add('NodeNames');
          return { NodeNames: args.NodeNames, FailedNodes: {}, Error: '' };
        }
        filterForms.add('Nodes');
        return { Nodes: args.Nodes, FailedNodes: {}, Error: '' };
      }
      case 'prioritize': {
        calls.prioritize++;
        const args = body as ExtenderArgs;
        const names = args.NodeNames ?? (args.Nodes?.items ?? []).map((n) => n.metadata?.name ?? '');
        return names.map((Host) => ({ Host, Score: 1 }));
      }
      case 'bind': {
        calls.bind++;
        const args = body as BindingArgs;
        try {
          if (options.recordObjects) {
            const n = recorded++;
            await writer.post(
              '/apis/galaxy.k8s.io/v1alpha1/floatingips',
              {
                apiVersion: 'galaxy.k8s.io/v1alpha1',
                kind: 'FloatingIP',
                metadata: { name: `10.200.${Math.floor(n / 250)}.${(n % 250) + 1}` },
                spec: {
                  key: `dp_${args.PodNamespace}_tiny_${args.PodName}`,
                  attribute: JSON.stringify({ NodeName: args.Node, Uid: args.PodUID }),
                  policy: 0,
                  updateTime: new Date().toISOString(),
                },
              },
              'create a FloatingIP',
            );
          }
          await writer.post(
            `/api/v1/namespaces/${args.PodNamespace}/pods/${args.PodName}/binding`,
            {
              apiVersion: 'v1',
              kind: 'Binding',
              metadata: {
                name: args.PodName,
                namespace: args.PodNamespace,
                uid: args.PodUID,
                annotations: { [CNI_ARGS_ANNOTATION]: TINY_CNI_ARGS },
              },
              target: { apiVersion: 'v1', kind: 'Node', name: args.Node },
            },
            'bind',
          );
          return { Error: '' };
        } catch (err) {
          const message = `bind ${args.PodNamespace}/${args.PodName} to ${args.Node}: ${describeError(err)}`;
          bindErrors.push(message);
          return { Error: message };
        }
      }
      case 'preempt':
        calls.preempt++;
        // keep every candidate the scheduler proposed, in the meta form it expects back
        return { NodeNameToMetaVictims: metaVictims(body) };
      default:
        calls.other++;
        throw new Error(`unknown verb ${verb}`);
    }
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const verb = (req.url ?? '').replace(/^\/v1\//, '');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      Promise.resolve()
        .then(() => handle(verb, JSON.parse(Buffer.concat(chunks).toString() || '{}')))
        .then((reply) => send(res, 200, reply))
        .catch((err: unknown) => send(res, 500, { Error: describeError(err) }));
    });
  });
  const port = options.port ?? extenderPort();
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(new Error(`tiny extender: cannot listen on 127.0.0.1:${port}: ${err.message}`)),
    );
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    calls,
    filterForms,
    bindErrors,
    close: async () => {
      await closeServer(server);
      await watching?.();
    },
  };
}

/** The caches floatip keeps of what changes with its pods, started; resolves to how to stop them. */
async function startWatching(kubeConfig: KubeConfig, podsOnly: boolean): Promise<() => Promise<void>> {
  const log = silentLogger();
  const cluster = new ClusterCache(kubeConfig, log);
  if (podsOnly) {
    await cluster.pods.start();
    return () => cluster.pods.stop();
  }
  const api = new CustomResourceClient(kubeConfig, {
    group: GROUP,
    version: VERSION,
    plural: FLOATING_IP_PLURAL,
  });
  const floatingIPs = floatingIPReflector(api, kubeConfig, log);
  await Promise.all([cluster.start(), floatingIPs.start()]);
  return async () => {
    await Promise.all([cluster.stop(), floatingIPs.stop()]);
  };
}

function metaVictims(body: unknown): Record<string, unknown> {
  const args = body as {
    NodeNameToVictims?: Record<
      string,
      { Pods?: { metadata?: { uid?: string } }[]; NumPDBViolations?: number }
    > | null;
    NodeNameToMetaVictims?: Record<string, unknown> | null;
  };
  if (args.NodeNameToMetaVictims) return args.NodeNameToMetaVictims;
  const out: Record<string, unknown> = {};
  for (const [node, victims] of Object.entries(args.NodeNameToVictims ?? {})) {
    out[node] = {
      Pods: (victims.Pods ?? []).map((p) => ({ UID: p.metadata?.uid ?? '' })),
      NumPDBViolations: victims.NumPDBViolations ?? 0,
    };
  }
  return out;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((err) => (err ? reject(err) : resolve()));
    // the scheduler keeps connections alive; close them so the port is free at once
    server.closeAllConnections();
  });
}
