// The bytes of request bodies being read at once, across every connection. Each verb's body is
// bounded (256 MiB for those that carry full Nodes), but connections are not: six 200 MB filters at
// once held 1.7 GB, and as many more as a caller opened. kube-scheduler sends its calls one after
// another (binds in parallel, of a few hundred bytes each): a budget of two full-size bodies never
// refuses it, and refuses a flood with a 503 to retry rather than growing until the process is killed.
// A body counts for the bytes that have arrived, never for what its Content-Length announces: two
// idle connections announcing 256 MiB each held the whole budget for a minute with one byte sent,
// and every bind was refused. Small bodies (the scheduler's binds, prioritizes and names-only
// filters) have a reserve of their own, so that large ones, however many, never crowd them out.

/** One request's share of the budget. */
export interface BodyShare {
  /** Counts `bytes` more of this body; false when that takes the whole over the budget. */
  take(bytes: number): boolean;
  /** Gives this body's bytes back (its answer is sent, or can no longer be). */
  release(): void;
}

export interface BodyBudgetLimits {
  /** The most bytes of bodies at once. */
  readonly limitBytes: number;
  /** A body no larger than this (so far) is small... */
  readonly smallBytes: number;
  /** ...and may also take from this reserve once the budget is spent. */
  readonly smallReserveBytes: number;
}

export class BodyBudget {
  private inUse = 0;

  constructor(readonly limits: BodyBudgetLimits) {}

  get limitBytes(): number {
    return this.limits.limitBytes;
  }

  /** Bytes of bodies being read or answered now. */
  get used(): number {
    return this.inUse;
  }

  share(): BodyShare {
    let held = 0;
    return {
      take: (bytes) => {
        held += bytes;
        this.inUse += bytes;
        const { limitBytes, smallBytes, smallReserveBytes } = this.limits;
        return (
          this.inUse <= limitBytes || (held <= smallBytes && this.inUse <= limitBytes + smallReserveBytes)
        );
      },
      release: () => {
        this.inUse -= held;
        held = 0;
      },
    };
  }
}
