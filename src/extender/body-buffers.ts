// Buffers for the bodies of full-Node calls and for their filter answers, used again from call to
// call. kube-scheduler sends every candidate node's whole object with each filter and prioritize
// (about 2 KiB a node: 117 KiB for 50), and a new Buffer for each body and each answer is memory
// outside V8's heap that only a garbage collection gives back. V8 counts what was allocated there
// since its last full collection towards starting the next one, and floatip allocates little else,
// so in bench:e2e's full-Node rounds that memory alone started mark-compacts every 0.3 to 1 s, back
// to back (--trace-gc-verbose: 22-43 MB of such memory at each, no scavenge between them).
// A call takes what it needs here and gives it back once its answer is sent and its handler done.

/** The buffers kept between calls: at most `keep` of them, none over `largest` bytes. */
export class BodyBuffers {
  private readonly free: Buffer[] = [];

  constructor(
    private readonly keep = 4,
    private readonly largest = 4 * 2 ** 20,
  ) {}

  /** A buffer of at least `size` bytes (the smallest kept that is), whose bytes are whatever was there. */
  take(size: number): Buffer {
    let best = -1;
    this.free.forEach((buffer, i) => {
      if (buffer.length >= size && (best < 0 || buffer.length < this.free[best]!.length)) best = i;
    });
    if (best >= 0) return this.free.splice(best, 1)[0]!;
    // sizes rounded up to a power of two (64 KiB at least), so that one buffer serves calls of about one size
    return Buffer.allocUnsafeSlow(
      size > this.largest ? size : Math.max(2 ** 16, 2 ** Math.ceil(Math.log2(size))),
    );
  }

  /** A buffer from `take` that nothing reads any more. The largest are kept. */
  give(buffer: Buffer): void {
    if (buffer.length > this.largest) return;
    this.free.push(buffer);
    if (this.free.length > this.keep) {
      this.free.sort((a, b) => b.length - a.length);
      this.free.length = this.keep;
    }
  }

  /** The buffers of one call, all given back at once when it ends. */
  lease(): BufferLease {
    return new BufferLease(this);
  }
}

export class BufferLease {
  private readonly taken: Buffer[] = [];

  constructor(private readonly from: BodyBuffers) {}

  /** `size` bytes, read and written only until `end` (an arrow, to be passed as an allocator). */
  readonly take = (size: number): Buffer => {
    const buffer = this.from.take(size);
    this.taken.push(buffer);
    return buffer.subarray(0, size);
  };

  /** Nothing of this call reads its buffers any more. */
  end(): void {
    for (const buffer of this.taken.splice(0)) this.from.give(buffer);
  }
}

/** `parts` in one buffer, as Buffer.concat joins them, but in one from `alloc`. */
export function joined(
  parts: readonly Buffer[],
  alloc: (size: number) => Buffer = Buffer.allocUnsafe,
): Buffer {
  let size = 0;
  for (const part of parts) size += part.length;
  const bytes = alloc(size);
  let at = 0;
  for (const part of parts) at += part.copy(bytes, at);
  return bytes;
}
