// Per address, the resourceVersion of the FloatingIP object that memory reflects (also for deleted
// objects), and the rule that keeps the watch and the store's own writes from interleaving: while an
// address is being written, its watch events wait and run afterwards, if still newer. Both the
// follower (floating-ip-follower.ts) and the writes (floating-ip-writer.ts, and a release's delete in
// floating-ip-store.ts) keep this one rule, so it lives apart from either. resourceVersions are
// compared as integers, as they are on every etcd-backed API server.
import type { FloatingIPObject } from './floating-ip-object.js';
import { KeyedLock } from './keyed-lock.js';

export class AddressVersions {
  private readonly versions = new Map<string, bigint>();
  private readonly writing = new KeyedLock();
  private readonly heldBack = new Map<string, { version: bigint; change: () => void }>();

  /** The version memory reflects for `ip`, if any. */
  get(ip: string): bigint | undefined {
    return this.versions.get(ip);
  }

  /** Whether a write of `ip` is in flight (or waiting): memory may not yet say what it will. */
  isWriting(ip: string): boolean {
    return this.writing.isHeld(ip);
  }

  /** After a write or a re-read: memory reflects at least `version`, never an older one than before. */
  raise(ip: string, version: bigint): void {
    if ((this.versions.get(ip) ?? -1n) < version) this.versions.set(ip, version);
  }

  /** Applies a watch event's change, unless memory already reflects something as new. */
  applyEvent(ip: string, version: bigint, change: () => void): void {
    if (this.writing.isHeld(ip)) {
      // a write of this address is in flight: apply after it, if still newer
      const held = this.heldBack.get(ip);
      if (!held || held.version < version) this.heldBack.set(ip, { version, change });
      return;
    }
    this.apply(ip, version, change);
  }

  /** Runs `change` if `version` is newer than what memory reflects for `ip`. */
  apply(ip: string, version: bigint, change: () => void): boolean {
    const known = this.versions.get(ip);
    if (known !== undefined && version <= known) return false;
    this.versions.set(ip, version);
    change();
    return true;
  }

  /**
   * Runs a write of one address, alone. Watch events for the address that arrive meanwhile are held
   * back and applied afterwards (if still newer), so that they cannot interleave with the write.
   */
  async withAddress<T>(ip: string, write: () => Promise<T>): Promise<T> {
    return this.writing.run(ip, async () => {
      try {
        return await write();
      } finally {
        const held = this.heldBack.get(ip);
        if (held) {
          this.heldBack.delete(ip);
          this.apply(ip, held.version, held.change);
        }
      }
    });
  }
}

/** An object's resourceVersion as an integer; 0 when it has none or an unreadable one. */
export function versionOf(object: unknown): bigint {
  const text = (object as FloatingIPObject | undefined)?.metadata?.resourceVersion;
  try {
    return text ? BigInt(text) : 0n;
  } catch {
    return 0n;
  }
}
