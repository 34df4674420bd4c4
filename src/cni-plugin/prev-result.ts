// The runtime's prevResult: read from the configuration (any version's shape, checked where it is
// used), and consulted by CHECK (the spec's MUST): every interface and address floatip-cni's ADD
// added must be in it. A runtime that lost one (or was handed another plugin's result) would
// otherwise be told all is well while the delegates check only what the state file remembers.
import type { IPConfig, Result, Route } from './protocol.js';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const lower = (text: string | undefined): string | undefined => text?.toLowerCase();

/**
 * What `added` (the delegates' ADD results) has that `prev` does not list, each as a phrase naming
 * the interface or address. Addresses are compared as text (lower case): libcni re-serializes Go's
 * canonical forms, which are what the delegates printed.
 */
export function missingFromPrevResult(added: readonly Result[], prev: Result): string[] {
  const prevInterfaces = prev.interfaces ?? [];
  const missing: string[] = [];
  for (const result of added) {
    const ours = result.interfaces ?? [];
    for (const iface of ours) {
      if (iface.sandbox === undefined || iface.sandbox === '') continue;
      // not the MAC: a later plugin in the chain (tuning) may change it and say so in the result
      if (!prevInterfaces.some((p) => p.name === iface.name && p.sandbox === iface.sandbox)) {
        missing.push(`interface ${iface.name} in ${iface.sandbox}`);
      }
    }
    for (const ip of result.ips ?? []) {
      const on = ip.interface === undefined ? undefined : ours[ip.interface]?.name;
      const listed = (prev.ips ?? []).some((p) => {
        if (lower(p.address) !== lower(ip.address)) return false;
        const prevOn = p.interface === undefined ? undefined : prevInterfaces[p.interface]?.name;
        return on === undefined || prevOn === undefined || on === prevOn;
      });
      if (!listed) missing.push(`address ${ip.address}${on === undefined ? '' : ` on ${on}`}`);
    }
  }
  return missing;
}

/**
 * A 0.1.0/0.2.0 result (`ip4`, `ip6`: galaxy's own plugins answer so, and galaxy's daemon hands a
 * pod's previous network's result on as it came) read as the 0.3.0 one libcni converts it to: its
 * addresses in `ips`, its routes in `routes`. Read as a later result, it had neither, and ADD's
 * answer dropped the previous plugin's address.
 */
export function fromPre030(prev: Record<string, unknown>): Result {
  if (prev.ips !== undefined || (prev.ip4 === undefined && prev.ip6 === undefined)) {
    return prev as unknown as Result;
  }
  const ips: IPConfig[] = [];
  const routes: Route[] = [];
  for (const [family, version] of [
    ['ip4', '4'],
    ['ip6', '6'],
  ] as const) {
    const config = prev[family] as { ip: string; gateway?: unknown; routes?: Route[] } | undefined;
    if (config === undefined) continue;
    ips.push({
      version,
      address: config.ip,
      ...(typeof config.gateway === 'string' && config.gateway !== '' ? { gateway: config.gateway } : {}),
    });
    for (const { dst, gw } of config.routes ?? [])
      routes.push({ dst, ...(typeof gw === 'string' ? { gw } : {}) });
  }
  const { ip4: _4, ip6: _6, ...rest } = prev;
  return { ...rest, ips, routes } as unknown as Result;
}

export function validPrevResult(value: unknown): boolean {
  if (!isObject(value)) return false;
  // a 0.1.0/0.2.0 result: an address per family, each with its routes
  const pre030 = (config: unknown) =>
    config === undefined ||
    (isObject(config) &&
      typeof config.ip === 'string' &&
      (config.routes === undefined ||
        (Array.isArray(config.routes) &&
          config.routes.every((r) => isObject(r) && typeof r.dst === 'string'))));
  if (!pre030(value.ip4) || !pre030(value.ip6)) return false;
  const { interfaces, ips, routes } = value;
  const listOf = (list: unknown, ok: (item: Record<string, unknown>) => boolean) =>
    list === undefined || (Array.isArray(list) && list.every((item) => isObject(item) && ok(item)));
  return (
    listOf(interfaces, (i) => typeof i.name === 'string') &&
    listOf(ips, (ip) => typeof ip.address === 'string') &&
    listOf(routes, (r) => typeof r.dst === 'string')
  );
}
