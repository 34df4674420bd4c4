// Per-node facts the extender asks for on every call, computed once per node version: its node
// subnet (or galaxy's reason why it has none), and, for the full-Node mode, its JSON text to echo
// back. Both are keyed by node name and replaced when the node's resourceVersion changes; the
// subnets are also dropped when the configuration changes (galaxy never invalidates, §12.25).
import type { V1Node } from '@kubernetes/client-node';
import { type Allocator, NodeSubnetError } from '../ipam/index.js';

export type NodeSubnet = { readonly subnet: string } | { readonly reason: string };

export const internalIPsOf = (node: V1Node): string[] =>
  (node.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address);

export class NodeFacts {
  private readonly subnets = new Map<string, { version: string; value: NodeSubnet }>();
  private readonly texts = new Map<string, { version: string; bytes: Buffer }>();

  constructor(private readonly allocator: Allocator) {}

  /** Forget every node's subnet: the configuration changed. */
  clearSubnets(): void {
    this.subnets.clear();
  }

  forget(name: string): void {
    this.subnets.delete(name);
    this.texts.delete(name);
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
    this.subnets.set(name, { version, value });
    return value;
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
