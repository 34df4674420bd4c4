// Since when a free address has been free, the `updateTime` galaxy's REST list shows for it
// ("last allocate or release time of this ip"): the moment it was released, or, for one not
// released since, the moment the configuration in force was applied (galaxy rebuilds its table of
// free addresses then, every one stamped with that time). Only released addresses are recorded,
// and an address leaves the record when it is taken again, so the record never outgrows the
// addresses that have been allocated; a new configuration starts it afresh. The lowest free
// address is taken and released over and over, hence the churn-safe map.
import { ChurnSafeMap } from './churn-safe-map.js';

export class FreeSince {
  private configuredAt = 0;
  private released = new ChurnSafeMap<string, number>();

  /** A configuration was applied at `now`: every free address is free since then. */
  configured(now: number): void {
    this.configuredAt = now;
    this.released = new ChurnSafeMap();
  }

  /** `ip` (canonical) was freed at `now`. */
  freed(ip: string, now: number): void {
    this.released.set(ip, now);
  }

  /** `ip` is held again. */
  taken(ip: string): void {
    this.released.delete(ip);
  }

  /** When the free address `ip` (canonical) became free, in ms since the epoch. */
  of(ip: string): number {
    return this.released.get(ip) ?? this.configuredAt;
  }
}
