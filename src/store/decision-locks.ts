// Locks shared by everyone who decides about a pod's or an app's addresses (the extender's bind, the
// lifecycle, the REST API's releases), so that their decisions about one pod, or one Deployment or
// Pool sharing parked addresses, never interleave. Order: a pod's lock before its app's.
import { AllocationKey } from '../ipam/index.js';
import { KeyedLock } from './keyed-lock.js';

export class DecisionLocks {
  private readonly pods = new KeyedLock();
  private readonly apps = new KeyedLock();

  /** Runs `work` holding the lock of the pod namespace/name. */
  pod<T>(namespace: string, name: string, work: () => Promise<T> | T): Promise<T> {
    return this.pods.run(`${namespace}/${name}`, work);
  }

  /** Runs `work` holding the lock of an app or pool, by its parking key (AllocationKey.poolPrefix). */
  app<T>(parkingKey: string, work: () => Promise<T> | T): Promise<T> {
    return this.apps.run(parkingKey, work);
  }

  /** Runs `work` under the lock of the pod a key names, or of the app or pool for a parked key. */
  forKey<T>(key: string, work: () => Promise<T> | T): Promise<T> {
    const pod = AllocationKey.parse(key).pod;
    return pod ? this.pod(pod.namespace, pod.name, work) : this.app(key, work);
  }
}
