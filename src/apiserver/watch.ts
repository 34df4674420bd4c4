// Watch streams: newline-delimited JSON events on a chunked HTTP response, fed synchronously from the store
// so a watcher never misses a change between its replay and its live events. Asked for Tables (kubectl
// get -w), each event's object is a one-row Table.
import type { ServerResponse } from 'node:http';
import type { StoreEvent } from './history.js';
import { apiVersionOf, type ResourceType } from './registry.js';
import type { ObjectMatcher } from './selectors.js';
import { objectJson } from './serialize.js';
import type { ApiError } from './status.js';
import type { Store, StoredObject } from './store.js';
import { type IncludeObject, toTable } from './table.js';

export interface WatchFilter {
  namespace?: string;
  matches?: ObjectMatcher;
}

export interface WatchOptions {
  bookmarks: boolean;
  bookmarkIntervalMs: number;
  timeoutMs?: number;
  /** Events as one-row Tables (`kubectl get -w`), their objects as `includeObject` says. */
  table?: IncludeObject;
}

/** A watcher that lets this much output pile up is too slow; kube-apiserver drops such watchers too. */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
/** Events are coalesced into chunks of about this size, flushed at the end of the current tick. */
const CHUNK_BYTES = 64 * 1024;

export class WatchStream {
  private pending: string[] = [];
  private pendingBytes = 0;
  private flushScheduled = false;
  private closed = false;
  private columnsSent = false;
  private readonly timers: NodeJS.Timeout[] = [];
  onClose: (() => void) | undefined;

  constructor(
    private readonly res: ServerResponse,
    readonly rt: ResourceType,
    private readonly filter: WatchFilter,
    private readonly currentRevision: () => number,
    private readonly options: WatchOptions,
  ) {
    res.on('close', () => this.finish());
  }

  /** Sends the 200 and headers at once, so the client knows the watch is established. */
  open(): void {
    this.res.writeHead(200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache, private',
      'Transfer-Encoding': 'chunked',
    });
    this.res.flushHeaders();
    if (this.options.bookmarks && this.options.bookmarkIntervalMs > 0) {
      this.timers.push(setInterval(() => this.sendBookmark(), this.options.bookmarkIntervalMs));
    }
    if (this.options.timeoutMs !== undefined) {
      this.timers.push(
        setTimeout(() => {
          if (this.options.bookmarks) this.sendBookmark();
          this.close();
        }, this.options.timeoutMs),
      );
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private selected(obj: StoredObject): boolean {
    const meta = obj.obj.metadata;
    if (this.filter.namespace !== undefined && meta?.namespace !== this.filter.namespace) return false;
    return !this.filter.matches || this.filter.matches(obj.obj);
  }

  /**
   * With a selector, a change can move an object into or out of the watched set; kube-apiserver reports
   * those as ADDED and DELETED, and so does this.
   */
  deliver(event: StoreEvent): void {
    if (this.closed) return;
    if (event.type === 'ADDED') {
      if (this.selected(event.object)) this.send('ADDED', event.object);
      return;
    }
    if (event.type === 'DELETED') {
      if (this.selected(event.object)) this.send('DELETED', event.object);
      return;
    }
    const now = this.selected(event.object);
    const before = event.previous !== undefined && this.selected(event.previous);
    if (now && before) this.send('MODIFIED', event.object);
    else if (now) this.send('ADDED', event.object);
    else if (before) this.send('DELETED', event.object);
  }

  sendInitial(obj: StoredObject): void {
    if (this.selected(obj)) this.send('ADDED', obj);
  }

  private send(type: string, obj: StoredObject): void {
    if (this.options.table === undefined) {
      this.enqueue(`{"type":"${type}","object":${objectJson(obj, this.rt)}}\n`);
      return;
    }
    const meta = { resourceVersion: obj.obj.metadata?.resourceVersion ?? '' };
    const table = toTable(this.rt, [obj.obj], meta, this.options.table) as { columnDefinitions: unknown };
    // as kube-apiserver: the columns with the first event only, so that kubectl prints one header
    if (this.columnsSent) table.columnDefinitions = null;
    this.columnsSent = true;
    this.enqueue(`{"type":"${type}","object":${JSON.stringify(table)}}\n`);
  }

  sendBookmark(initialEventsEnd = false): void {
    if (this.closed) return;
    const metadata: Record<string, unknown> = { resourceVersion: String(this.currentRevision()) };
    if (initialEventsEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
    const object = { kind: this.rt.kind, apiVersion: apiVersionOf(this.rt), metadata };
    this.enqueue(`{"type":"BOOKMARK","object":${JSON.stringify(object)}}\n`);
  }

  /** An ERROR event carrying a Status, then the end of the stream, as kube-apiserver does for 410. */
  fail(error: ApiError): void {
    this.enqueue(`{"type":"ERROR","object":${JSON.stringify(error.toStatus())}}\n`);
    this.close();
  }

  private enqueue(line: string): void {
    if (this.closed) return;
    this.pending.push(line);
    this.pendingBytes += line.length;
    if (this.pendingBytes >= CHUNK_BYTES) this.flush();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.pending.length === 0 || this.res.writableEnded || this.res.destroyed) return;
    this.res.write(this.pending.join(''));
    this.pending = [];
    this.pendingBytes = 0;
    if (this.res.writableLength > MAX_BUFFERED_BYTES) this.close();
  }

  /** Ends the stream cleanly: the client sees a normal end of body and re-watches from its last version. */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.finish();
    if (!this.res.writableEnded) this.res.end();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.pending = [];
    this.onClose?.();
  }
}

/** All open watches, by storage; the store pushes every change here. */
export class WatchHub {
  private readonly byStorage = new Map<string, Set<WatchStream>>();

  constructor(private readonly store: Store) {
    store.subscribe((event) => {
      const watchers = this.byStorage.get(event.storageKey);
      if (watchers) for (const w of watchers) w.deliver(event);
    });
  }

  register(stream: WatchStream): void {
    const key = stream.rt.storageKey;
    let set = this.byStorage.get(key);
    if (!set) {
      set = new Set();
      this.byStorage.set(key, set);
    }
    set.add(stream);
    stream.onClose = () => set.delete(stream);
  }

  /** Closes every open watch; returns how many there were. */
  dropAll(): number {
    let dropped = 0;
    for (const set of this.byStorage.values()) {
      for (const w of [...set]) {
        w.close();
        dropped++;
      }
    }
    return dropped;
  }

  /** Closes the watches on a resource that no longer exists (its CRD was deleted). */
  dropStorage(storageKey: string): void {
    for (const w of [...(this.byStorage.get(storageKey) ?? [])]) w.close();
  }

  get openCount(): number {
    let n = 0;
    for (const set of this.byStorage.values()) n += set.size;
    return n;
  }

  revision(): number {
    return this.store.revision;
  }
}
