// Per-node facts the extender asks for on every call, computed once per node version: its node
// subnet, or galaxy's reason why it has none. What floatip believes about a node comes from the API
// server: the facts are kept for the node cache's (or a GET's) objects only, keyed by name and
// replaced when the node's resourceVersion changes, and dropped when the configuration changes
// (galaxy never invalidates, docs/galaxy.md#node-subnets-cached-forever). A node a request carries and the cache does not know yet is
// judged from the request, for that request only: nothing a caller sends is remembered.
//
// With nodeCacheCapable the scheduler sends, for pod after pod, the same list of node names (those
// its own filters kept). `listOf` resolves such a list once and hands the same answer back while no
// node's subnet has changed, so a filter over 5,000 names costs a comparison of the names, not 5,000
// lookups.
import type { V1Node } from '@kubernetes/client-node';
import { type Allocator, NodeSubnetError } from '../ipam/index.js';

export type NodeSubnet = { readonly subnet: string } | { readonly reason: string };

/** galaxy's reason for a name the node cache does not know. */
export const UNKNOWN_NODE = 'FloatingIPPlugin:UnknowNode';

export const internalIPsOf = (node: V1Node): string[] =>
  (node.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address);

/** A list of node names resolved to their node subnets, valid while `NodeFacts.generation` holds. */
export interface NodeList {
  readonly names: readonly string[];
  /** Per name: its node subnet, or undefined with the reason in `reasons`. */
  readonly subnets: readonly (string | undefined)[];
  readonly reasons: readonly (string | undefined)[];
  /** The distinct node subnets in the list. */
  readonly distinct: ReadonlySet<string>;
  /** Answers worked out for this list by whoever uses it (the filter, by its allowed subnets). */
  readonly memo: Map<string, unknown>;
  readonly generation: number;
}

const sameValue = (a: NodeSubnet | undefined, b: NodeSubnet): boolean =>
  a !== undefined &&
  ('subnet' in a ? 'subnet' in b && a.subnet === b.subnet : 'reason' in b && a.reason === b.reason);

/** How many resolved node lists are kept (the scheduler may alternate between a few as nodes come and go). */
const LISTS_KEPT = 4;

export class NodeFacts {
  /** By node name, for nodes of the node cache (or read from the API server): bounded by the cluster. */
  private readonly subnets = new Map<string, { version: string; value: NodeSubnet }>();
  /** Changes whenever a node's subnet (or its existence) may have changed; see NodeList. */
  private generation = 0;
  private lists: NodeList[] = [];

  constructor(private readonly allocator: Allocator) {}

  /** What is remembered: nodes, and resolved lists with their names (bounded; for tests and profiling). */
  remembered(): { nodes: number; lists: number; names: number } {
    return {
      nodes: this.subnets.size,
      lists: this.lists.length,
      names: this.lists.reduce((n, l) => n + l.names.length, 0),
    };
  }

  /** Forget every node's subnet: the configuration changed. */
  clearSubnets(): void {
    this.subnets.clear();
    this.generation++;
  }

  forget(name: string): void {
    this.subnets.delete(name);
    this.generation++;
  }

  /** A node was added or changed in the node cache. */
  observe(node: V1Node): void {
    // a first sighting moves the generation too: lists may have had the name as unknown
    this.subnetOf(node);
  }

  /**
   * The node subnet of a node a request names: the node cache's object when it has one (the
   * request's may be forged or stale), else the request's own, judged for this request only.
   */
  subnetOfRequested(node: V1Node, known: V1Node | undefined): NodeSubnet {
    return known ? this.subnetOf(known) : this.judge(node);
  }

  private judge(node: V1Node): NodeSubnet {
    try {
      return { subnet: this.allocator.nodeSubnetOf(internalIPsOf(node)) };
    } catch (err) {
      if (!(err instanceof NodeSubnetError)) throw err;
      return { reason: err.reason };
    }
  }

  /** The node subnet of a node from the node cache or the API server (remembered per version). */
  subnetOf(node: V1Node): NodeSubnet {
    const name = node.metadata?.name ?? '';
    const version = node.metadata?.resourceVersion ?? '';
    const cached = this.subnets.get(name);
    if (cached && cached.version === version && version !== '') return cached.value;
    const value = this.judge(node);
    if (!sameValue(cached?.value, value)) this.generation++;
    this.subnets.set(name, { version, value });
    return value;
  }

  /**
   * These names resolved through `lookup` (the node cache): the same NodeList as last time when the
   * names are the same and no node's subnet changed since, else a new one. Keeps the last few lists,
   * and only lists no longer than the nodes it knows of, so requests cannot fill memory with names.
   */
  listOf(names: readonly string[], lookup: (name: string) => V1Node | undefined): NodeList {
    const found = this.lists.find((l) => l.generation === this.generation && sameNames(l.names, names));
    if (found) return found;
    const subnets: (string | undefined)[] = [];
    const reasons: (string | undefined)[] = [];
    for (const name of names) {
      const node = lookup(name);
      const facts: NodeSubnet = node ? this.subnetOf(node) : { reason: UNKNOWN_NODE };
      subnets.push('subnet' in facts ? facts.subnet : undefined);
      reasons.push('reason' in facts ? facts.reason : undefined);
    }
    const list: NodeList = {
      names: [...names],
      subnets,
      reasons,
      distinct: new Set(subnets.filter((s): s is string => s !== undefined)),
      memo: new Map(),
      // resolving may itself have moved the generation (a node version seen for the first time)
      generation: this.generation,
    };
    if (names.length <= this.subnets.size)
      this.lists = [list, ...this.lists.filter((l) => l.generation === this.generation)].slice(0, LISTS_KEPT);
    return list;
  }
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
