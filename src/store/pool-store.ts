// Pool objects (galaxy.k8s.io/v1alpha1, docs/galaxy.md#pool-objects): a named, sized group of addresses shared by
// Deployments. Read from one namespace (galaxy: kube-system), kept in step by watch, and written by
// the REST API. `size` and `preAllocateIP` sit at the top level of the object, as galaxy's.
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { CustomResourceClient, isConflict, isNotFound } from '../kube/custom-resources.js';
import { Reflector } from '../kube/reflector.js';
import { type Logger, clipString } from '../log.js';
import { GROUP, POOL_PLURAL, VERSION } from './floating-ip-object.js';
import { KeyedLock } from './keyed-lock.js';

export interface Pool {
  readonly name: string;
  /** The most addresses the pool's pods may hold at once. */
  readonly size: number;
  readonly preAllocateIP: boolean;
}

interface PoolObject extends KubernetesObject {
  size?: unknown;
  preAllocateIP?: unknown;
}

/** A Pool as floatip writes and admits them: a whole number >= 0 for `size` (the webhook's rule). */
export function decodePool(object: PoolObject): Pool | undefined {
  const name = object.metadata?.name;
  const { size, preAllocateIP } = object;
  if (!name || typeof size !== 'number' || !Number.isInteger(size) || size < 0) return undefined;
  return { name, size, preAllocateIP: preAllocateIP === true };
}

/** A Pool object as found in the API server, which may hold what floatip itself never writes. */
export interface StoredPool extends Pool {
  /** Why `size` could not be read (not a number, or one with a fraction); `size` is then 0. */
  readonly unreadable?: string;
}

/**
 * A stored Pool as galaxy read it: galaxy's CRD types `size` as an integer with no minimum, so
 * kubectl may store a negative one, which galaxy shows and, counting pods against it, takes to
 * admit none; an absent or null size is Go's zero, 0. A size that is no integer at all (which a
 * CRD without a schema, as galaxy's example manifest installs it, lets kubectl store) galaxy's
 * decoder could not read: it is read as 0 here,
 * so that the pool admits no pod until an operator fixes it, rather than none of its limit
 * applying (`unreadable` says why). Sizes past 2^53 arrive rounded: JSON.parse reads doubles.
 */
export function readStoredPool(object: PoolObject): StoredPool | undefined {
  const name = object.metadata?.name;
  if (!name) return undefined;
  const { size, preAllocateIP } = object;
  const pool = { name, preAllocateIP: preAllocateIP === true };
  if (size === undefined || size === null) return { ...pool, size: 0 };
  if (typeof size === 'number' && Number.isInteger(size)) return { ...pool, size };
  return { ...pool, size: 0, unreadable: `size ${clipString(JSON.stringify(size))} is not an integer` };
}

/**
 * How often a write is tried when another writer (kubectl, another replica, any controller) changed
 * the Pool between floatip's read and its write: created, deleted or modified it.
 */
const PUT_ATTEMPTS = 5;

/**
 * The pause after a lost attempt grows from this (doubling, each one at a random point of its upper
 * half): writers that lost together to one another no longer all try again at once and lose again.
 * The four pauses add up to under 300 ms, well inside the API server call's own timeout.
 */
const RETRY_PAUSE_MS = 20;

export interface PoolStoreOptions {
  /** Waits out a pause between attempts (tests); a timer by default. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** A number in [0, 1) placing each pause in its range (tests); Math.random by default. */
  readonly random?: () => number;
}

/**
 * Every attempt of a write lost to another writer of the same Pool. Nothing failed here and nothing
 * was written: the caller may send it again (the REST port's 409, by its kind). galaxy gave up at
 * the first such loss and answered 500, which says a client should not retry.
 */
export class PoolContendedError extends Error {
  readonly kind = 'conflict';
  constructor(name: string, verb: 'create' | 'update' | 'delete', last: Error) {
    super(
      `pool ${name} was changed by another writer at each of floatip's ${PUT_ATTEMPTS} attempts to ${verb} it; retry (last: ${last.message})`,
    );
  }
  override get name(): string {
    return 'PoolContendedError';
  }
}

export class PoolStore {
  private readonly client: CustomResourceClient;
  private readonly reflector: Reflector<PoolObject>;
  /**
   * This replica's writes of one Pool, one at a time: put reads, then creates or patches, and a
   * DELETE landing between the two made it read again; POSTs and DELETEs of one pool arriving
   * together made it lose five times in a row and answer 500 (`failed to create Pool: ... already
   * exists`, or `... not found`) for one POST in five. Queued, each write sees the one before.
   */
  private readonly writes = new KeyedLock();

  constructor(
    kubeConfig: KubeConfig,
    readonly namespace: string,
    private readonly log: Logger,
    /** Called before every write; throws to refuse it (a replica that is not the leader). */
    private readonly guard: () => void = () => undefined,
    private readonly options: PoolStoreOptions = {},
  ) {
    this.client = new CustomResourceClient(kubeConfig, {
      group: GROUP,
      version: VERSION,
      plural: POOL_PLURAL,
      namespace,
    });
    this.reflector = new Reflector<PoolObject>({
      name: `pools in ${namespace}`,
      path: this.client.path,
      list: (page) => this.client.reflectorPage<PoolObject>(page),
      kubeConfig,
      log,
    });
    const check = (o: PoolObject) => {
      const pool = readStoredPool(o);
      if (pool?.unreadable)
        log.warn(
          { pool: pool.name, problem: pool.unreadable },
          'Pool size is not an integer: read as 0, so no pod of the pool gets an address until the object is fixed',
        );
      else if (pool && pool.size < 0)
        log.warn(
          { pool: pool.name, size: pool.size },
          'Pool size is negative: no pod of the pool gets an address (as galaxy read it)',
        );
    };
    this.reflector.on('add', check).on('update', check);
  }

  /** Calls `listener` with a Pool's name whenever the Pool is created, changed or deleted. */
  onChange(listener: (name: string) => void): void {
    const changed = (o: PoolObject) => listener(o.metadata?.name ?? '');
    this.reflector.on('add', changed).on('update', changed).on('delete', changed);
  }

  start(): Promise<void> {
    return this.reflector.start();
  }

  stop(): Promise<void> {
    return this.reflector.stop();
  }

  /** The Pools as the API server has them now (Reflector.catchUp). */
  catchUp(): Promise<void> {
    return this.reflector.catchUp();
  }

  /** The Pool as read for allocation (readStoredPool): a size < 0 or an unreadable one admits no pod. */
  get(name: string): StoredPool | undefined {
    const object = this.reflector.get(this.namespace, name);
    return object ? readStoredPool(object) : undefined;
  }

  list(): StoredPool[] {
    return this.reflector.list().flatMap((o) => readStoredPool(o) ?? []);
  }

  /** The Pool as the API server has it now (the cache may not have seen a write just made). */
  async fetch(name: string): Promise<StoredPool | undefined> {
    const object = (await this.client.get(name)) as PoolObject | undefined;
    return object ? readStoredPool(object) : undefined;
  }

  /** Creates or updates a Pool object; returns it as stored. */
  async put(pool: Pool): Promise<Pool> {
    const body = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'Pool',
      metadata: { name: pool.name, namespace: this.namespace },
      size: pool.size,
      preAllocateIP: pool.preAllocateIP,
    };
    this.guard();
    return this.writes.run(pool.name, () => this.write(pool, body));
  }

  private async write(pool: Pool, body: object): Promise<Pool> {
    for (let attempt = 1; ; attempt++) {
      const existing = await this.client.get(pool.name);
      let stored: unknown;
      try {
        stored = existing
          ? await this.client.patch(
              pool.name,
              { size: pool.size, preAllocateIP: pool.preAllocateIP },
              this.guard,
            )
          : await this.client.create(body, undefined, this.guard);
      } catch (err) {
        // another writer created, deleted or changed it between the read and the write: read again,
        // so that concurrent POSTs of one new pool all land, the last one's values standing
        const raced = isConflict(err) || (existing !== undefined && isNotFound(err));
        if (!raced) throw err;
        if (attempt >= PUT_ATTEMPTS)
          throw new PoolContendedError(pool.name, existing ? 'update' : 'create', err as Error);
        await this.pauseAfter(attempt);
        continue;
      }
      this.log.info(
        { pool: pool.name, size: pool.size, preAllocateIP: pool.preAllocateIP },
        existing ? 'Pool updated' : 'Pool created',
      );
      return decodePool(stored as PoolObject) ?? pool;
    }
  }

  /** Deletes a Pool object; false when there was none. Addresses are untouched. */
  async delete(name: string): Promise<boolean> {
    this.guard();
    return this.writes.run(name, () => this.remove(name));
  }

  private async remove(name: string): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.client.delete(name, undefined, undefined, this.guard);
        this.log.info({ pool: name }, 'Pool deleted');
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        // the API server's 409: the object changed under the deletion (a finalizer's writer, say)
        if (!isConflict(err)) throw err;
        if (attempt >= PUT_ATTEMPTS) throw new PoolContendedError(name, 'delete', err as Error);
        await this.pauseAfter(attempt);
      }
    }
  }

  /** The pause after lost attempt `attempt` (RETRY_PAUSE_MS). */
  private async pauseAfter(attempt: number): Promise<void> {
    const most = RETRY_PAUSE_MS * 2 ** (attempt - 1);
    await (this.options.sleep ?? sleep)((most / 2) * (1 + (this.options.random ?? Math.random)()));
    // a replica that stopped leading while it waited tries no more
    this.guard();
  }
}
