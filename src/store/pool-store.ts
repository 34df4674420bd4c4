// Pool objects (galaxy.k8s.io/v1alpha1, docs/galaxy.md#pool-objects): a named, sized group of addresses shared by
// Deployments. Read from one namespace (galaxy: kube-system), kept in step by watch, and written by
// the REST API. `size` and `preAllocateIP` sit at the top level of the object, as galaxy's.
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { CustomResourceClient, isAlreadyExists, isNotFound } from '../kube/custom-resources.js';
import { Reflector } from '../kube/reflector.js';
import type { Logger } from '../log.js';
import { GROUP, POOL_PLURAL, VERSION } from './floating-ip-object.js';

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

export function decodePool(object: PoolObject): Pool | undefined {
  const name = object.metadata?.name;
  const { size, preAllocateIP } = object;
  if (!name || typeof size !== 'number' || !Number.isInteger(size) || size < 0) return undefined;
  return { name, size, preAllocateIP: preAllocateIP === true };
}

/** How often put reads again when another writer created or deleted the Pool under it. */
const PUT_ATTEMPTS = 5;

export class PoolStore {
  private readonly client: CustomResourceClient;
  private readonly reflector: Reflector<PoolObject>;

  constructor(
    kubeConfig: KubeConfig,
    readonly namespace: string,
    private readonly log: Logger,
    /** Called before every write; throws to refuse it (a replica that is not the leader). */
    private readonly guard: () => void = () => undefined,
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
      if (!decodePool(o))
        log.warn({ pool: o.metadata?.name }, 'Pool object ignored: size must be a whole number >= 0');
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

  get(name: string): Pool | undefined {
    const object = this.reflector.get(this.namespace, name);
    return object ? decodePool(object) : undefined;
  }

  list(): Pool[] {
    return this.reflector.list().flatMap((o) => decodePool(o) ?? []);
  }

  /**
   * The Pool as the API server has it now (the cache may not have seen a write just made); throws
   * when the object exists but is not a usable Pool.
   */
  async fetch(name: string): Promise<Pool | undefined> {
    const object = (await this.client.get(name)) as PoolObject | undefined;
    if (!object) return undefined;
    const pool = decodePool(object);
    if (!pool) throw new Error(`Pool ${this.namespace}/${name}: size must be a whole number >= 0`);
    return pool;
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
        // another writer created (or deleted) it between the read and the write: read again, so
        // that concurrent POSTs of one new pool all land, the last one's values standing
        const raced = existing ? isNotFound(err) : isAlreadyExists(err);
        if (raced && attempt < PUT_ATTEMPTS) continue;
        throw err;
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
    try {
      await this.client.delete(name, undefined, undefined, this.guard);
      this.log.info({ pool: name }, 'Pool deleted');
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }
}
