// Allocation keys (docs/galaxy.md#keys): the string that says who owns an address. Existing FloatingIP objects
// carry galaxy's exact strings, so the text form is a compatibility contract. Parse it once into an
// AllocationKey and pass that around; never split key strings by position elsewhere.
import { UnsupportedAppTypeError } from './errors.js';

export const POOL_KEY_PREFIX = 'pool__';

/** App type prefixes galaxy gives special meaning to. */
export const DEPLOYMENT_PREFIX = 'dp_';
export const STATEFULSET_PREFIX = 'sts_';
export const BARE_POD_PREFIX = 'NULL_';

export interface OwnerReference {
  readonly kind: string;
  readonly name: string;
}

/** The pod facts a key is made of. */
export interface PodIdentity {
  readonly namespace: string;
  readonly name: string;
  readonly ownerReferences: readonly OwnerReference[];
  /** The pool annotation's value; "" for none. */
  readonly pool: string;
}

export class AllocationKey {
  /** The key as stored in FloatingIP objects. */
  readonly text: string;

  private constructor(
    text: string,
    readonly pool: string,
    /** e.g. `dp_`, `sts_`, `NULL_`, `tapp_`; "" when the key does not name an app. */
    readonly typePrefix: string,
    readonly namespace: string,
    readonly appName: string,
    readonly podName: string,
  ) {
    this.text = text;
  }

  /** galaxy's FormatKey (docs/galaxy.md#keys-from-a-pod-formatkey): the key of a pod, from its first owner reference. */
  static forPod(pod: PodIdentity): AllocationKey {
    const owner = pod.ownerReferences[0];
    let typePrefix = BARE_POD_PREFIX;
    let appName = 'NULL';
    if (owner) {
      if (owner.kind === 'ReplicaSet') {
        typePrefix = DEPLOYMENT_PREFIX;
        appName = pod.ownerReferences.length === 1 ? deploymentOfReplicaSet(owner.name) : '';
      } else {
        typePrefix = owner.kind === 'StatefulSet' ? STATEFULSET_PREFIX : appTypePrefix(owner.kind);
        appName = owner.name;
      }
      if (appName === '') throw new UnsupportedAppTypeError(`${pod.namespace}/${pod.name}`);
    }
    const text = `${pod.pool ? `${POOL_KEY_PREFIX}${pod.pool}_` : ''}${typePrefix}${pod.namespace}_${appName}_${pod.name}`;
    return new AllocationKey(text, pod.pool, typePrefix, pod.namespace, appName, pod.name);
  }

  /**
   * galaxy's ParseKey (docs/galaxy.md#parsing-a-key-parsekey). Any string parses; parts it cannot find are "".
   * One difference: a pool name may contain `_` (the annotation is free text) while the four parts after
   * it cannot (kind, namespace, app and pod names have none), so the pool is what precedes the last four
   * parts, or, for a key of no pod, the whole of what precedes the final `_`. galaxy splits at the first
   * `_`, which reads `pool__my_pool_dp_ns_app_pod` as naming no pod: resync then never looked at it, and
   * the address of a pod deleted unseen stayed held for good.
   */
  static parse(text: string): AllocationKey {
    let pool = '';
    let rest = text;
    if (text.startsWith(POOL_KEY_PREFIX)) {
      const remainder = text.slice(POOL_KEY_PREFIX.length);
      const cut = remainder.indexOf('_');
      if (cut < 0) return new AllocationKey(text, '', '', '', '', '');
      const parts = remainder.split('_');
      if (parts.length > 5) {
        pool = parts.slice(0, -4).join('_');
        rest = parts.slice(-4).join('_');
      } else if (parts.length < 5 && remainder.endsWith('_')) {
        return new AllocationKey(text, remainder.slice(0, -1), '', '', '', '');
      } else {
        pool = remainder.slice(0, cut);
        rest = remainder.slice(cut + 1);
      }
    }
    const parts = rest.split('_');
    if (parts.length !== 4) return new AllocationKey(text, pool, '', '', '', '');
    const [type, namespace, appName, podName] = parts as [string, string, string, string];
    return new AllocationKey(text, pool, `${type}_`, namespace, appName, podName);
  }

  /**
   * galaxy's NewKeyObj (docs/galaxy.md#keys-from-parts-newkeyobj), used by the REST API to build a key or key prefix from query fields.
   * Argument order as galaxy's: type prefix, namespace, app, pod, pool.
   */
  static fromParts(
    typePrefix: string,
    namespace: string,
    appName: string,
    podName: string,
    pool: string,
  ): AllocationKey {
    let text: string;
    if (pool !== '' && appName === '') text = `${POOL_KEY_PREFIX}${pool}_`;
    else if (pool === '' && appName === '' && namespace === '') text = '';
    else text = `${pool ? `${POOL_KEY_PREFIX}${pool}_` : ''}${typePrefix}${namespace}_${appName}_${podName}`;
    return AllocationKey.parse(text);
  }

  isDeployment(): boolean {
    return this.typePrefix === DEPLOYMENT_PREFIX;
  }

  isStatefulSet(): boolean {
    return this.typePrefix === STATEFULSET_PREFIX;
  }

  /** Where a Deployment's or a Pool's addresses wait between pods: `pool__P_` or `dp_ns_app_`. */
  get poolPrefix(): string {
    return this.pool ? `${POOL_KEY_PREFIX}${this.pool}_` : this.appPrefix;
  }

  /** The prefix shared by one app's keys, inside its pool if it has one. */
  get poolAppPrefix(): string {
    return this.pool ? `${POOL_KEY_PREFIX}${this.pool}_${this.appPrefix}` : this.appPrefix;
  }

  /** The pod the key names, if it names one (a parked key names none). */
  get pod(): { readonly namespace: string; readonly name: string } | undefined {
    return this.podName && this.namespace ? { namespace: this.namespace, name: this.podName } : undefined;
  }

  /** The REST API's `appType`: `deployment`, `statefulset`, or the prefix without its `_`. */
  get appType(): string {
    return appTypeName(this.typePrefix);
  }

  toString(): string {
    return this.text;
  }

  private get appPrefix(): string {
    return `${this.typePrefix}${this.namespace}_${this.appName}_`;
  }
}

/** A Deployment's name from its ReplicaSet's: everything before the last `-` (the template hash). */
function deploymentOfReplicaSet(replicaSet: string): string {
  const dash = replicaSet.lastIndexOf('-');
  return dash < 0 ? replicaSet : replicaSet.slice(0, dash);
}

/** galaxy's GetAppTypePrefix: a kind or REST `appType` to its key prefix, case-insensitively. Never "". */
export function appTypePrefix(kind: string): string {
  const lower = kind.toLowerCase();
  if (lower === 'statefulset' || lower === 'statefulsets') return STATEFULSET_PREFIX;
  if (lower === 'replicaset' || lower === 'deployment') return DEPLOYMENT_PREFIX;
  return `${lower}_`;
}

/**
 * The REST API's `appType` back to the type prefix of a key: the inverse of appTypeName for every
 * prefix FormatKey writes, and "" means statefulset (galaxy's list). galaxy's GetAppTypePrefix
 * lower-cases, which makes the `NULL` its list shows for a bare pod `null_`, a prefix no key has;
 * every other prefix FormatKey writes is lower-case already (GetAppTypePrefix wrote it).
 */
export function typePrefixOfAppType(appType: string): string {
  if (appType === '') return STATEFULSET_PREFIX;
  if (appType === appTypeName(BARE_POD_PREFIX)) return BARE_POD_PREFIX;
  return appTypePrefix(appType);
}

export function appTypeName(typePrefix: string): string {
  if (typePrefix === DEPLOYMENT_PREFIX) return 'deployment';
  if (typePrefix === STATEFULSET_PREFIX) return 'statefulset';
  return typePrefix.endsWith('_') ? typePrefix.slice(0, -1) : typePrefix;
}

/**
 * The integer after a pod name's last `-` (the whole name when it has none): a StatefulSet-like pod's
 * ordinal, as galaxy reads it with Go's strconv.Atoi (an optional sign, decimal digits, within int64).
 */
export function ordinalOf(podName: string): number | undefined {
  const suffix = podName.slice(podName.lastIndexOf('-') + 1);
  if (!/^[+-]?\d+$/.test(suffix)) return undefined;
  const value = BigInt(suffix);
  if (value > 2n ** 63n - 1n || value < -(2n ** 63n)) return undefined;
  return Number(value);
}
