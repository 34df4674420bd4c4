// Watch events read in batches. Every read of a watch's socket wakes floatip, and on the
// two-core VM of issue 19 a wake-up cost 30-70 us of CPU, more than the event it brought (a
// pod's five events, its FloatingIP's two and its Deployment's status: eight wake-ups per pod).
// So a watch that has read what had come stops reading, and one timer for the whole process
// starts every such watch again at most `paceMs` later: what the API server sends in between waits
// in the kernel's socket buffer and is read at once. A lone event is read as it comes; only the
// events that follow it within `paceMs` wait. Paced: the watches of what changes with every pod
// placed (pods, Deployments, StatefulSets, FloatingIPs); not nodes, Pools or the ConfigMap, which
// change seldom and are read at once. In bench:e2e a floor watching pods this way spent
// 1.10 CPU-s per 1,000 pods against 1.29 reading each event as it came (tiny-crd, watching
// nothing, 0.97), and took 0.95 x tiny-crd's time against 1.03 x; floatip 1.60 CPU-s against 1.94
// (medians of 5 interleaved rounds each, README Performance).
//
// Whoever must act on what the API server has already said (a bind that does not find its pod in
// the cache) calls readArrived(): every resting watch reads what its socket holds now.
//
// node has no public way to stop a socket's reads at once (pause() stops them only once its
// buffer is full), so this stops and starts the socket's handle, as node's own flow control does,
// and never where node has stopped it itself (`reading` false: its buffer is full).
import type { Socket } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long a watch that has just read rests before it reads again (at most). */
export const WATCH_PACE_MS = 50;

interface StreamHandle {
  reading?: boolean;
  readStart(): number;
  readStop(): number;
}

const handleOf = (socket: Socket): StreamHandle | undefined => {
  const handle = (socket as unknown as { _handle?: Partial<StreamHandle> | null })._handle;
  return typeof handle?.readStop === 'function' && typeof handle.readStart === 'function'
    ? (handle as StreamHandle)
    : undefined;
};

export class WatchPacing {
  /** Sockets that have read and stop reading once the reads of this turn of the loop are done. */
  private readonly settling = new Map<Socket, () => boolean>();
  /** Sockets not reading until the next beat. */
  private readonly resting = new Set<Socket>();
  private settle: NodeJS.Immediate | undefined;
  private beat: NodeJS.Timeout | undefined;

  constructor(readonly paceMs: number = WATCH_PACE_MS) {}

  /**
   * Called by a watch when it has read from `socket`: the socket stops reading after this turn of
   * the event loop (libuv reads all that has come before the turn ends, so a burst larger than one
   * read is not cut into one read per beat) while `watching()` still holds.
   */
  read(socket: Socket, watching: () => boolean): void {
    if (this.paceMs <= 0 || this.resting.has(socket) || this.settling.has(socket)) return;
    this.settling.set(socket, watching);
    this.settle ??= setImmediate(() => this.rest());
  }

  /**
   * Resolves once every resting watch has read and delivered what its socket held when this was
   * called.
   */
  async readArrived(): Promise<void> {
    if (this.resting.size === 0 && this.settling.size === 0) return;
    if (this.settle) clearImmediate(this.settle);
    this.settle = undefined;
    this.settling.clear();
    this.wake();
    // the first turn's poll may have run already; the next one polls the sockets started here, and
    // a socket delivers what it reads (TLS records decrypted) before that turn's immediates run
    await nextTurn();
    await nextTurn();
  }

  private rest(): void {
    this.settle = undefined;
    for (const [socket, watching] of this.settling) {
      const handle = handleOf(socket);
      if (!watching() || socket.destroyed || !handle?.reading) continue;
      handle.readStop();
      this.resting.add(socket);
    }
    this.settling.clear();
    if (this.resting.size > 0) this.beat ??= setTimeout(() => this.wake(), this.paceMs);
  }

  private wake(): void {
    if (this.beat) clearTimeout(this.beat);
    this.beat = undefined;
    for (const socket of this.resting) {
      const handle = handleOf(socket);
      // node's `reading` is still true: it stopped nothing itself while the socket rested
      if (!socket.destroyed && handle?.reading) handle.readStart();
    }
    this.resting.clear();
  }
}

/** One pace for every watch of the process, so that one timer wakes them all. */
export const watchPacing = new WatchPacing();
