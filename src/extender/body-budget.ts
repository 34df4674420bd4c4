// The bytes of request bodies being read at once, across every connection. Each verb's body is
// bounded (256 MiB for those that carry full Nodes), but connections are not: six 200 MB filters at
// once held 1.7 GB, and as many more as a caller opened. kube-scheduler sends its calls one after
// another (binds in parallel, of a few hundred bytes each): a budget of two full-size bodies never
// refuses it, and refuses a flood with a 503 to retry rather than growing until the process is killed.

/** One request's share of the budget. */
export interface BodyShare {
  /** Counts `bytes` more of this body; false when that takes the whole over the budget. */
  take(bytes: number): boolean;
  /** Gives this body's bytes back (its answer is sent, or can no longer be). */
  release(): void;
}

export class BodyBudget {
  private inUse = 0;

  constructor(readonly limitBytes: number) {}

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
        return this.inUse <= this.limitBytes;
      },
      release: () => {
        this.inUse -= held;
        held = 0;
      },
    };
  }
}
