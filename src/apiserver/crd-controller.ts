// Keeps the served custom resources in step with the stored CRDs: a CRD that is written (re)registers its
// types; a CRD that is removed takes its objects and watches with it, as apiextensions-apiserver does.
import { establishedStatus, typesFromCrd, validateCrd } from './crds.js';
import type { ResourceRegistry } from './registry.js';
import type { ResourceHooks } from './resources.js';
import type { Store, StoredObject } from './store.js';
import type { KubeObject } from './types.js';

export interface CrdControllerDeps {
  registry: ResourceRegistry;
  store: Store;
  /** Closes the watches on a storage that is going away. */
  dropWatches(storageKey: string): void;
  builtinStorageKeys: ReadonlySet<string>;
}

export class CrdController {
  constructor(private readonly deps: CrdControllerDeps) {}

  /** Registers the types of a CRD already in the store (loaded from a state file). */
  register(crd: KubeObject): void {
    const name = crd.metadata?.name ?? '';
    this.deps.registry.removeCrd(name);
    for (const rt of typesFromCrd(crd)) this.deps.registry.add(rt);
  }

  private unregister(crd: StoredObject): void {
    const removed = this.deps.registry.removeCrd(crd.obj.metadata?.name ?? '');
    const storageKeys = new Set(removed.map((rt) => rt.storageKey));
    for (const storageKey of storageKeys) {
      // Instances go first, each with its DELETED event, so watchers and informers see them leave.
      const keys = [...this.deps.store.scan(storageKey, '')].map((s) => s.key);
      for (const key of keys) this.deps.store.remove(storageKey, key);
      this.deps.dropWatches(storageKey);
      this.deps.store.dropTable(storageKey);
    }
  }

  readonly hooks: ResourceHooks = {
    prepare: (obj, previous) => {
      validateCrd(obj, this.deps.builtinStorageKeys);
      obj.status = establishedStatus(obj, previous);
    },
    afterWrite: (stored) => this.register(stored.obj),
    beforeRemove: (stored) => this.unregister(stored),
  };
}
