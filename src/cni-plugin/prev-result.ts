// CHECK consults the runtime's prevResult (the spec's MUST): every interface and address floatip-cni's
// ADD added must be in it. A runtime that lost one (or was handed another plugin's result) would
// otherwise be told all is well while the delegates check only what the state file remembers.
import type { Result } from './protocol.js';

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
