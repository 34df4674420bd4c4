// Per-node facts the extender asks for on every call, computed once per node version: its node
// subnet (or galaxy's reason why it has none), and, for the full-Node mode, its JSON text to echo
// back. Both are keyed by node name and replaced when the node's resourceVersion changes; the
// subnets are also dropped when the configuration changes (galaxy never invalidates, §12.25).
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

export class NodeFacts {
  private readonly subnets = new Map<string, { version: string; value: NodeSubnet }>();
  private readonly texts = new Map<string, { version: string; bytes: Buffer }>();
  /** Changes whenever a node's subnet (or its existence) may have changed; see NodeList. */
  private generation = 0;
  private lists: NodeList[] = [];

  constructor(private readonly allocator: Allocator) {}

  /** Forget every node's subnet: the configuration changed. */
  clearSubnets(): void {
    this.subnets.clear();
    this.generation++;
  }

  forget(name: string): void {
    this.subnets.delete(name);
    this.texts.delete(name);
    this.generation++;
  }

  /** A node was added or changed in the node cache. */
  observe(node: V1Node): void {
    // a first sighting moves the generation too: lists may have had the name as unknown
    this.subnetOf(node);
  }

  subnetOf(node: V1Node): NodeSubnet {
    const name = node.metadata?.name ?? '';
    const version = node.metadata?.resourceVersion ?? '';
    const cached = this.subnets.get(name);
    if (cached && cached.version === version && version !== '') return cached.value;
    let value: NodeSubnet;
    try {
      value = { subnet: this.allocator.nodeSubnetOf(internalIPsOf(node)) };
    } catch (err) {
      if (!(err instanceof NodeSubnetError)) throw err;
      value = { reason: err.reason };
    }
    if (!sameValue(cached?.value, value)) this.generation++;
    this.subnets.set(name, { version, value });
    return value;
  }

  /**
   * These names resolved through `lookup` (the node cache): the same NodeList as last time when the
   * names are the same and no node's subnet changed since, else a new one. Keeps the last few lists
   * (the scheduler may alternate between some, as nodes come and go).
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
    this.lists = [list, ...this.lists.filter((l) => l.generation === this.generation)].slice(0, 4);
    return list;
  }

  /** The node as JSON bytes, serialised once per version. */
  bytesOf(node: V1Node): Buffer {
    const name = node.metadata?.name ?? '';
    const version = node.metadata?.resourceVersion ?? '';
    const cached = this.texts.get(name);
    if (cached && cached.version === version && version !== '') return cached.bytes;
    const bytes = Buffer.from(JSON.stringify(node));
    this.texts.set(name, { version, bytes });
    return bytes;
  }
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
