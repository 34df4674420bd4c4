// Which node subnet a node is in (docs/galaxy.md#node-subnet-of-a-node): the first configured node subnet, in gateway order and
// then as written, that contains one of the node's InternalIP addresses, tried in the node's order.
// galaxy looks at the first InternalIP only; trying the others too lets IPv6-only node subnets work.
import { type Address, type Cidr, cidrContains, formatCidr, parseAddress } from './address.js';
import { type PoolConfig, entriesInGatewayOrder } from './config.js';
import { InvalidAddressError, NodeSubnetError } from './errors.js';

export class NodeSubnetIndex {
  private readonly cidrs: readonly { cidr: Cidr; text: string }[];

  constructor(config: PoolConfig) {
    const seen = new Set<string>();
    const cidrs: { cidr: Cidr; text: string }[] = [];
    for (const entry of entriesInGatewayOrder(config)) {
      for (const cidr of entry.nodeSubnetCidrs) {
        const text = formatCidr(cidr);
        if (!seen.has(text)) {
          seen.add(text);
          cidrs.push({ cidr, text });
        }
      }
    }
    this.cidrs = cidrs;
  }

  /**
   * The node subnet of a node with these InternalIP addresses, in the order the node lists them.
   * Throws NodeSubnetError with galaxy's reason string when there is none.
   */
  of(internalIPs: readonly string[]): string {
    const addresses: Address[] = [];
    for (const text of internalIPs) {
      try {
        addresses.push(parseAddress(text));
      } catch (err) {
        if (!(err instanceof InvalidAddressError)) throw err;
      }
    }
    if (addresses.length === 0) throw new NodeSubnetError('FloatingIPPlugin:UnknowNode', internalIPs);
    for (const address of addresses) {
      const match = this.cidrs.find(({ cidr }) => cidrContains(cidr, address));
      if (match) return match.text;
    }
    throw new NodeSubnetError('FloatingIPPlugin:NoFIPConfigNode', internalIPs);
  }
}
