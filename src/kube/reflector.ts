// A read-only cache of one resource kept in step with the API server: list (paged), then watch
// from the list's version; when the watch ends it resumes, and when it fails or its history is
// gone (410) it lists again and reports the difference as events, so a consumer never misses a
// deletion that happened while it was not watching. client-node's informer stops on errors and
// leaves restarting to its user (kubernetes-client/javascript#795, #1933); this one does not stop.
// A watch that goes silent without closing (a dead NAT entry, a blackholed path: no FIN, no RST)
// would otherwise be followed forever: every watch asks the server to end it after
// `watchTimeoutSeconds`, so a healthy one ends by then; one still open `SILENCE_GRACE_MS` later
// (or still waiting for its response headers) is given up on and watched again from its version.
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../log.js';
import { ApiConnection } from './api-connection.js';
import { KubeApiError, kubeError } from './api-error.js';
import { watchLines, type WatchRequest } from './watch-lines.js';
import type { WatchPacing } from './watch-pacing.js';

export interface ListResult<T> {
  items: T[];
  metadata?: { continue?: string; resourceVersion?: string };
}

export interface ReflectorOptions<T> {
  /** For log lines: "pods", "nodes", ... */
  readonly name: string;
  /** The watch path, e.g. `/api/v1/pods` or `/api/v1/namespaces/kube-system/configmaps`. */
  readonly path: string;
  /** One page of the list (the typed client-node call for the resource). */
  readonly list: (page: { limit: number; _continue?: string }) => Promise<ListResult<T>>;
  /** Extra watch parameters, e.g. `{ fieldSelector: 'metadata.name=x' }` (the list must match them). */
  readonly watchQuery?: Record<string, string>;
  readonly kubeConfig: KubeConfig;
  readonly log: Logger;
  readonly pageSize?: number;
  /**
   * `versions` keeps only each object's name and resourceVersion (enough to tell what changed),
   * for a consumer that keeps its own copy: 100,000 FloatingIPs are not worth holding twice.
   */
  readonly keep?: 'objects' | 'versions';
  /**
   * The server ends each watch after this (its `timeoutSeconds`), so a watch still open
   * `SILENCE_GRACE_MS` later is silent and is watched again. Default `WATCH_TIMEOUT_SECONDS`.
   */
  readonly watchTimeoutSeconds?: number;
  /**
   * The pace of the watch's reads (watch-pacing.ts), for a resource whose events come in bursts;
   * without, each read is delivered as it comes.
   */
  readonly pacing?: WatchPacing;
}

/** client-go asks for 5-10 min; shorter here, as it bounds how long a silent watch goes unnoticed. */
export const WATCH_TIMEOUT_SECONDS = 30;
/** How long past its timeoutSeconds a watch may stay open before it counts as silent. */
export const SILENCE_GRACE_MS = 5000;

/** managedFields can be half of an object's size and floatip never reads them. */
function trimmed<T extends KubernetesObject>(object: T): T {
  if (object.metadata?.managedFields) delete object.metadata.managedFields;
  return object;
}

export type ReflectorEvent = 'add' | 'update' | 'delete';
type Handler<T> = (object: T, old: T | undefined) => void;

const BACKOFF_MS = [200, 500, 1000, 2000, 5000];

export const objectKey = (o: KubernetesObject): string =>
  o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : (o.metadata?.name ?? '');

export class Reflector<T extends KubernetesObject> {
  private readonly cache = new Map<string, T>();
  private readonly handlers: Record<ReflectorEvent, Handler<T>[]> = { add: [], update: [], delete: [] };
  private readonly connection: ApiConnection;
  private version = '';
  private stopped = false;
  private abort: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private everSynced = false;
  /** catchUp() callers, each resolved by the first list begun after its call. */
  private catchUps: { resolve: () => void; reject: (err: Error) => void }[] = [];

  constructor(private readonly options: ReflectorOptions<T>) {
    this.connection = new ApiConnection(options.kubeConfig);
  }

  on(event: ReflectorEvent, handler: Handler<T>): this {
    this.handlers[event].push(handler);
    return this;
  }

  /**
   * Lists, then follows; resolves once the first list is in the cache and the watch is open.
   * Retries the first list until it works or stop().
   */
  async start(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        await this.relist();
        break;
      } catch (err) {
        failures++;
        this.options.log.warn(
          { resource: this.options.name, err: (err as Error).message },
          'list failed; retrying',
        );
        await sleep(BACKOFF_MS[Math.min(failures, BACKOFF_MS.length) - 1]!);
      }
    }
    this.everSynced = true;
    const watching = new Promise<void>((resolve) => (this.watching = resolve));
    this.loop = this.follow();
    await watching;
  }

  /** Resolved when a watch is open (or could not open), so that start() can say "following". */
  private watching: (() => void) | undefined;

  async stop(): Promise<void> {
    this.stopped = true;
    this.watching?.();
    this.abort?.();
    await this.loop;
    for (const waiter of this.catchUps.splice(0)) {
      waiter.reject(new Error(`${this.options.name}: stopped before it caught up`));
    }
  }

  /**
   * Resolves once a list begun after this call is in the cache, the differences reported as events.
   * A watch may be silent for up to its timeout and grace before anyone can tell, so whoever must
   * decide on what the API server holds now (a replica that has just taken the Lease) asks for
   * this rather than trusting the watch. Retries the list until it works; rejects only on stop().
   */
  catchUp(): Promise<void> {
    if (this.stopped) return Promise.reject(new Error(`${this.options.name}: stopped`));
    const caughtUp = new Promise<void>((resolve, reject) => this.catchUps.push({ resolve, reject }));
    // the watch (healthy or silent) ends at once, and the loop lists before it watches again
    this.abort?.();
    return caughtUp;
  }

  /**
   * Resolves once what the API server has already sent on the resting watches of this one's pace
   * (this one among them) is in the cache: for whoever must not act on a cache a beat behind.
   */
  readArrived(): Promise<void> {
    return this.options.pacing?.readArrived() ?? Promise.resolve();
  }

  get synced(): boolean {
    return this.everSynced;
  }

  get(namespaceOrName: string, name?: string): T | undefined {
    return this.cache.get(name === undefined ? namespaceOrName : `${namespaceOrName}/${name}`);
  }

  list(): T[] {
    return [...this.cache.values()];
  }

  get size(): number {
    return this.cache.size;
  }

  private async follow(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      if (this.catchUps.length > 0) {
        await this.listForCatchUps();
        continue;
      }
      try {
        await this.watchOnce();
        failures = 0;
      } catch (err) {
        if (this.stopped) return;
        if (this.catchUps.length > 0) continue;
        failures++;
        const gone = err instanceof KubeApiError && err.status === 410;
        this.options.log.info(
          { resource: this.options.name, err: (err as Error).message, gone },
          'watch ended; listing again',
        );
        if (!gone) await sleep(BACKOFF_MS[Math.min(failures, BACKOFF_MS.length) - 1]!);
        if (this.stopped) return;
        try {
          await this.relist();
        } catch (listErr) {
          this.options.log.warn(
            { resource: this.options.name, err: (listErr as Error).message },
            'list failed',
          );
        }
      }
    }
  }

  /**
   * One watch, from the last version seen; resolves when it ends normally (the server's timeout
   * included), rejects on failure or when it outlives its timeout (silent).
   */
  private watchOnce(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let failure: Error | undefined;
      // a silent watch is abandoned: whatever it might still deliver must not reach the cache
      let abandoned = false;
      const timeoutSeconds = this.options.watchTimeoutSeconds ?? WATCH_TIMEOUT_SECONDS;
      const query = {
        ...this.options.watchQuery,
        resourceVersion: this.version,
        allowWatchBookmarks: true,
        timeoutSeconds,
      };
      let opened = false;
      const silence = setTimeout(
        () => {
          abandoned = true;
          this.abort = undefined;
          request.abort();
          this.watching?.();
          reject(
            new Error(
              `watch ${this.options.name} silent: still open ${SILENCE_GRACE_MS} ms past its ` +
                `timeoutSeconds=${timeoutSeconds} (${opened ? 'no end' : 'no response'})`,
            ),
          );
        },
        timeoutSeconds * 1000 + SILENCE_GRACE_MS,
      );
      const request: WatchRequest = watchLines(
        this.connection,
        this.options.path,
        query,
        `watch ${this.options.name}`,
        ({ type, object }) => {
          if (abandoned) return;
          if (type === 'ERROR') {
            const status = object as { code?: unknown; reason?: unknown; message?: unknown };
            failure = new KubeApiError(
              typeof status.code === 'number' ? status.code : 500,
              typeof status.reason === 'string' ? status.reason : '',
              typeof status.message === 'string' ? status.message : 'watch error',
            );
            request.abort();
            return;
          }
          this.onEvent(type, object as T);
        },
        (err) => {
          clearTimeout(silence);
          if (abandoned) return;
          this.abort = undefined;
          if (failure) reject(failure);
          else if (err) reject(err);
          else resolve();
        },
        this.options.pacing,
      );
      // stop() before the response headers: the attempt is dropped
      this.abort = () => {
        if (opened) return request.abort();
        abandoned = true;
        clearTimeout(silence);
        request.abort();
        resolve();
      };
      request.opened.then(
        () => {
          opened = true;
          if (abandoned || this.stopped) return request.abort();
          this.watching?.();
        },
        (err: unknown) => {
          clearTimeout(silence);
          this.watching?.();
          reject(kubeError(err, `watch ${this.options.name}`));
        },
      );
    });
  }

  private onEvent(type: string, object: T): void {
    const version = object.metadata?.resourceVersion;
    if (version) this.version = version;
    if (type === 'BOOKMARK') return;
    const key = objectKey(object);
    const old = this.cache.get(key);
    if (type === 'DELETED') {
      this.cache.delete(key);
      this.emit('delete', object, old);
    } else {
      this.cache.set(key, this.kept(object));
      this.emit(old ? 'update' : 'add', object, old);
    }
  }

  private kept(object: T): T {
    if (this.options.keep !== 'versions') return trimmed(object);
    const { name, namespace, resourceVersion } = object.metadata ?? {};
    return { metadata: { name, namespace, resourceVersion } } as T;
  }

  /** One list for everyone waiting in catchUp() when it begins; on failure they wait for the next. */
  private async listForCatchUps(): Promise<void> {
    const waiting = this.catchUps.splice(0);
    try {
      await this.relist();
    } catch (err) {
      this.options.log.warn(
        { resource: this.options.name, err: (err as Error).message },
        'list to catch up failed; retrying',
      );
      this.catchUps.unshift(...waiting);
      await sleep(BACKOFF_MS[1]!);
      return;
    }
    for (const waiter of waiting) waiter.resolve();
  }

  /** Lists everything and reports what changed since the cache was last right. */
  private async relist(): Promise<void> {
    const listed = new Map<string, T>();
    let token: string | undefined;
    let version = '';
    do {
      const page = await this.options.list({
        limit: this.options.pageSize ?? 5000,
        ...(token ? { _continue: token } : {}),
      });
      for (const item of page.items) listed.set(objectKey(item), item);
      token = page.metadata?.continue || undefined;
      if (!version) version = page.metadata?.resourceVersion ?? '';
    } while (token);
    for (const [key, old] of this.cache) {
      if (!listed.has(key)) {
        this.cache.delete(key);
        // deleted while we were not watching, at some version up to the list's (client-go's
        // DeletedFinalStateUnknown): the list's version is the newest it can be
        this.emit('delete', { ...old, metadata: { ...old.metadata, resourceVersion: version } }, old);
      }
    }
    for (const [key, object] of listed) {
      const old = this.cache.get(key);
      this.cache.set(key, this.kept(object));
      if (!old) this.emit('add', object, undefined);
      else if (old.metadata?.resourceVersion !== object.metadata?.resourceVersion)
        this.emit('update', object, old);
    }
    this.version = version;
  }

  private emit(event: ReflectorEvent, object: T, old: T | undefined): void {
    for (const handler of this.handlers[event]) {
      try {
        handler(object, old);
      } catch (err) {
        // one consumer's bug must not stop the others or the watch
        this.options.log.error(
          { resource: this.options.name, event, err: (err as Error).stack },
          'event handler failed',
        );
      }
    }
  }
}
