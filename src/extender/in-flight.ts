// Requests being answered (or binds being decided), so that a graceful shutdown can wait for them.
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  enter(): void {
    this.count++;
  }

  leave(): void {
    if (--this.count === 0) for (const resolve of this.waiters.splice(0)) resolve();
  }

  drained(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}
