// The pod's ipinfos checked before any delegate runs, and grouped into pod interfaces: what the
// delegate would fail on after making the interface (Debian's macvlan 1.1.1 then leaves it) is
// refused here first, code 102.
import { BlockList, isIP } from 'node:net';
import { clip } from '../clip.js';
import type { IPInfo } from '../cni/args.js';
import { CniError, Code } from './protocol.js';

// Node's isIP takes a zone (`fe80::1%eth0`); the delegates' Go net.ParseCIDR does not, and an address
// with one never came from floatip's own bind.
const familyOf = (text: string): number => (text.includes('%') ? 0 : isIP(text));

// Addresses no pod interface holds. The delegate failed on some after making the interface
// (multicast, `::`, `::1`: "cannot assign requested address"; a route via one: "network is
// unreachable"), and configured the others as given, an address no network routes to the pod.
const SPECIAL: readonly (readonly [string, number, 'ipv4' | 'ipv6', string])[] = [
  ['224.0.0.0', 4, 'ipv4', 'multicast (224.0.0.0/4)'],
  ['0.0.0.0', 8, 'ipv4', '"this network" (0.0.0.0/8)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback (127.0.0.0/8)'],
  ['255.255.255.255', 32, 'ipv4', 'the limited broadcast address'],
  ['ff00::', 8, 'ipv6', 'multicast (ff00::/8)'],
  ['::', 128, 'ipv6', 'the unspecified address'],
  ['::1', 128, 'ipv6', 'loopback (::1)'],
];

/** What kind of address no interface holds `address` is, or undefined when it is an ordinary one. */
function specialKind(address: string, type: 'ipv4' | 'ipv6'): string | undefined {
  for (const [network, bits, family, kind] of SPECIAL) {
    if (family !== type) continue;
    const range = new BlockList();
    range.addSubnet(network, bits, family);
    if (range.check(address, type)) return kind;
  }
  return undefined;
}

const ipv4Number = (address: string): number =>
  address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);

// An IPv4-mapped IPv6 address (`::ffff:198.51.100.23`, `::ffff:c633:6417`) is an IPv4 address to
// Go: the delegate configured `::ffff:198.51.100.23/24` as 198.51.100.23/0, and floatip's records
// (canonicalAddress) read it as 198.51.100.23 too. An ipinfo says its address one way only.
const MAPPED = new BlockList();
MAPPED.addSubnet('::ffff:0:0', 96, 'ipv6');
const isMapped = (text: string): boolean => familyOf(text) === 6 && MAPPED.check(text, 'ipv6');

/**
 * An ipinfo as a message names it: its strings clipped to 100 characters each, as a value quoted
 * in a message is (a 100,000-character `ip` came back whole, code 102).
 */
const shown = (info: IPInfo): string =>
  JSON.stringify({ ip: clip(info.ip, 100), vlan: info.vlan, gateway: clip(info.gateway, 100) });

function checkIPInfo(info: IPInfo): void {
  const [address, prefix, extra] = info.ip.split('/');
  const family = familyOf(address ?? '');
  const bits = Number(prefix);
  // (checked with BlockList only for an IPv6 text: it matches IPv4 addresses against this rule)
  for (const [what, text] of [
    ['address', address ?? ''],
    ['gateway', info.gateway],
  ] as const) {
    if (isMapped(text)) {
      throw new CniError(
        Code.badAnnotation,
        `ipinfo ${shown(info)}: ${what} ${text} is an IPv4-mapped IPv6 address: write the IPv4 address`,
      );
    }
  }
  if (
    family === 0 ||
    extra !== undefined ||
    !/^\d+$/.test(prefix ?? '') ||
    bits > (family === 4 ? 32 : 128) ||
    (info.gateway !== '' && familyOf(info.gateway) !== family) ||
    !Number.isInteger(info.vlan) ||
    info.vlan < 0 ||
    info.vlan > 4094
  ) {
    throw new CniError(
      Code.badAnnotation,
      `ipinfo ${shown(info)} is not an address/prefix with a gateway of its family and a VLAN id 0-4094`,
    );
  }
  // What the delegate cannot configure is refused here, before any interface exists: the static
  // IPAM adds the default route with no onlink flag, so a gateway outside the subnet (and any, with
  // prefix 0, for which the kernel adds no subnet route) failed it as "network is unreachable"
  // after the delegate had made the interface, which Debian's macvlan 1.1.1 then left behind.
  // (an IPv6 link-local gateway, a router's usual one, is on every link: its route is added)
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const subnet = new BlockList();
  subnet.addSubnet(address!, bits, type);
  if (type === 'ipv6') subnet.addSubnet('fe80::', 10, type);
  const refuse = (why: string) => new CniError(Code.badAnnotation, `ipinfo ${shown(info)}: ${why}`);
  const kind = specialKind(address!, type);
  if (kind !== undefined) throw refuse(`address ${address} is ${kind}, which no pod interface holds`);
  if (bits === 0) throw refuse('prefix length 0 is no subnet');
  if (info.gateway === '') return;
  if (!subnet.check(info.gateway, type)) throw refuse(`gateway ${info.gateway} is outside ${info.ip}`);
  const gatewayKind = specialKind(info.gateway, type);
  if (gatewayKind !== undefined) throw refuse(`gateway ${info.gateway} is ${gatewayKind}`);
  // the kernel refuses a route via the subnet's broadcast address ("invalid argument") or, for
  // IPv6, via the address itself; an IPv4 default route via itself was added and reaches nothing
  const self = new BlockList();
  self.addAddress(address!, type);
  if (self.check(info.gateway, type)) throw refuse(`gateway ${info.gateway} is the address itself`);
  if (type === 'ipv4' && bits <= 30) {
    const host = 2 ** (32 - bits);
    const broadcast = Math.floor(ipv4Number(address!) / host) * host + host - 1;
    if (ipv4Number(info.gateway) === broadcast)
      throw refuse(`gateway ${info.gateway} is the broadcast address of ${info.ip}`);
  }
}

/**
 * One interface per ipinfo with groups: no pod has more than floatip's limit of request_ip_range
 * groups (MAX_RANGE_GROUPS of src/cni/args.ts, not imported: it would load the codec on DEL). 200
 * ipinfos in one group's annotation took 10 s of delegate runs; thousands would outlast the runtime.
 */
export const MAX_IPINFOS = 64;

/**
 * Which ipinfos share an interface. With `request_ip_range` groups, one interface per ipinfo, as
 * galaxy does; without, one interface per VLAN, so the IPv4 and IPv6 addresses of a dual-stack
 * subnet are one interface with both default routes.
 */
export function groupIPInfos(ipinfos: readonly IPInfo[], perIPInfo: boolean): IPInfo[][] {
  if (ipinfos.length > MAX_IPINFOS) {
    throw new CniError(
      Code.badAnnotation,
      `${ipinfos.length} ipinfos: a pod has at most ${MAX_IPINFOS}, one per request_ip_range group`,
    );
  }
  ipinfos.forEach(checkIPInfo);
  // one address twice: the second failed the delegate ("file exists") after it made the interface
  const seen = new BlockList();
  for (const info of ipinfos) {
    const address = info.ip.split('/')[0]!;
    const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (seen.check(address, type)) {
      throw new CniError(Code.badAnnotation, `ipinfo ${shown(info)}: address ${address} is given twice`);
    }
    seen.addAddress(address, type);
  }
  if (perIPInfo) return ipinfos.map((info) => [info]);
  const byVlan = new Map<number, IPInfo[]>();
  for (const info of ipinfos) byVlan.set(info.vlan, [...(byVlan.get(info.vlan) ?? []), info]);
  return [...byVlan.values()];
}
