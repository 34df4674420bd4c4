// Serialises work per key (an IP's writes, a pod's scheduling calls) while different keys run in
// parallel. Waiters are served in arrival order; an idle key costs nothing.

export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  /** Whether someone holds or waits for the key. */
  isHeld(key: string): boolean {
    return this.tails.has(key);
  }

  /** Runs `work` once every earlier holder of `key` is done. */
  async run<T>(key: string, work: () => Promise<T> | T): Promise<T> {
    const previous = this.tails.get(key);
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous ? previous.then(() => mine) : mine;
    this.tails.set(key, tail);
    try {
      if (previous) await previous;
      return await work();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
