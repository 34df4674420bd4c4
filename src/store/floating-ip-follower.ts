// Brings memory to the FloatingIP objects others wrote: at start every object (listed, paged) into the
// allocator, then the watch, so that objects created, edited or deleted by anyone (kubectl
// reservations) take effect at once; a lost watch is resumed or re-listed (src/kube/reflector.ts).
// Apart from the writes (floating-ip-store.ts) because it decides nothing: it only applies what the
// API server says, through the version rule both share (address-versions.ts).
import type { KubeConfig } from '@kubernetes/client-node';
import type { Allocation, Allocator } from '../ipam/index.js';
import type { CustomResourceClient } from '../kube/custom-resources.js';
import { Reflector } from '../kube/reflector.js';
import type { Logger } from '../log.js';
import { type AddressVersions, versionOf } from './address-versions.js';
import {
  type FloatingIPObject,
  fromFloatingIPObject,
  ipOfCanonicalName,
  objectNameOf,
} from './floating-ip-object.js';

/** Something wrong with an object that the store keeps (never deletes) and reports. */
export interface ObjectProblem {
  readonly name: string;
  readonly reason: string;
}

/** What following the objects reports (the store's observer, see StoreObserver). */
export interface FollowObserver {
  /** A FloatingIP object the store cannot use, or one outside the configuration. */
  objectProblem?(problem: ObjectProblem): void;
  /** An address became free: released here, or its object deleted by someone else. */
  freed?(ip: string): void;
  /**
   * Whether a live pod still holds `a` (the incarnation its pod UID names exists and has not
   * finished): its object, deleted by someone else, is then written again instead of freeing an
   * address that pod runs with.
   */
  stillHeld?(a: Allocation): boolean;
}

export interface StartReport {
  readonly objects: number;
  readonly loaded: number;
  readonly orphaned: readonly Allocation[];
  readonly problems: readonly ObjectProblem[];
}

/**
 * The FloatingIP objects as the API server has them, listed in pages and watched, keeping only each
 * one's name and version (the allocator holds the rest: 100,000 objects are not worth holding twice).
 */
export function floatingIPReflector(
  api: CustomResourceClient,
  kubeConfig: KubeConfig,
  log: Logger,
): Reflector<FloatingIPObject> {
  return new Reflector<FloatingIPObject>({
    name: 'floatingips',
    path: api.path,
    list: (page) => api.reflectorPage<FloatingIPObject>(page),
    kubeConfig,
    log,
    keep: 'versions',
  });
}

export class FloatingIPFollower {
  private readonly reflector: Reflector<FloatingIPObject>;
  private starting: ObjectProblem[] | undefined;

  constructor(
    api: CustomResourceClient,
    kubeConfig: KubeConfig,
    private readonly allocator: Allocator,
    private readonly versions: AddressVersions,
    private readonly log: Logger,
    private readonly observer: FollowObserver,
    /** Writes the object of an allocation memory keeps again (the store's, on the leader). */
    private readonly restore: (a: Allocation) => void = () => undefined,
  ) {
    this.reflector = floatingIPReflector(api, kubeConfig, log)
      .on('add', (o) => this.onObject(o))
      .on('update', (o) => this.onObject(o))
      .on('delete', (o) => this.onDeleted(o));
  }

  /** Lists every object into the allocator, and follows the watch from then on. */
  async start(): Promise<StartReport> {
    this.starting = [];
    await this.reflector.start();
    const problems = this.starting;
    this.starting = undefined;
    const orphaned = this.allocator.orphaned();
    this.log.info(
      {
        objects: this.reflector.size,
        loaded: this.allocator.size,
        orphaned: orphaned.length,
        problems: problems.length,
      },
      'floating IPs restored',
    );
    return { objects: this.reflector.size, loaded: this.allocator.size, orphaned, problems };
  }

  stop(): Promise<void> {
    return this.reflector.stop();
  }

  private onObject(object: FloatingIPObject): void {
    const decoded = fromFloatingIPObject(object);
    if (!decoded.ok) {
      this.reportProblem({ name: object.metadata?.name ?? '', reason: decoded.reason });
      return;
    }
    const { record } = decoded;
    this.versions.applyEvent(record.ip, versionOf(object), () => {
      this.allocator.load(record);
      if (!this.allocator.isConfigured(record.ip)) {
        this.reportProblem({
          name: objectNameOf(record.ip),
          reason: `${record.ip} is outside every configured range; kept`,
        });
      }
    });
  }

  private onDeleted(object: FloatingIPObject): void {
    // an object under another name than its address's was never loaded (onObject): its deletion
    // must not free the address the canonical object still holds
    const ip = ipOfCanonicalName(object.metadata?.name ?? '');
    if (ip === undefined) return;
    this.versions.applyEvent(ip, versionOf(object), () => {
      const held = this.allocator.get(ip);
      if (held && !held.reserved && held.podUid !== '' && this.observer.stillHeld?.(held)) {
        // `kubectl delete floatingip` of a running pod's address: freeing it would hand the pod's
        // address to the next pod while this one runs with it
        this.log.warn(
          { ip, key: held.key, podUid: held.podUid },
          `FloatingIP ${object.metadata?.name} was deleted while pod ${held.key} (uid ${held.podUid}) still holds ${ip}; it stays held and its object is written again`,
        );
        this.restore(held);
        return;
      }
      if (this.allocator.unload(ip)) this.observer.freed?.(ip);
    });
  }

  private reportProblem(problem: ObjectProblem): void {
    this.starting?.push(problem);
    this.log.warn(
      { object: problem.name, reason: problem.reason },
      'FloatingIP object kept but not usable as is',
    );
    this.observer.objectProblem?.(problem);
  }
}
