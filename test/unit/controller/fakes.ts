// Small fakes for the lifecycle's pieces: a store that records the writes it is asked for (and
// makes them in a real allocator, conditional as the real store's), pods in a cache and at an API
// server, workload facts by app, and the Events recorded.
import type { V1Pod } from '@kubernetes/client-node';
import type {
  LifecycleDeps,
  LifecycleObserver,
  LifecycleStore,
} from '../../../src/controller/lifecycle-deps.js';
import {
  type Allocation,
  Allocator,
  type AllocationKey,
  type Attrs,
  type Owner,
  ReleasePolicy,
  type WorkloadFacts,
  parsePoolConfig,
} from '../../../src/ipam/index.js';
import type { PodLookup } from '../../../src/kube/pod-lookup.js';
import { CNI_ARGS_ANNOTATION, formatCniArgs } from '../../../src/cni/args.js';
import { POOL_ANNOTATION, RELEASE_POLICY_ANNOTATION } from '../../../src/pods/pod-facts.js';
import { DecisionLocks } from '../../../src/store/decision-locks.js';
import { StaleDecisionError } from '../../../src/store/floating-ip-store.js';
import { capturedLog } from '../../integration/helpers.js';

export const CONFIG = parsePoolConfig([
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['10.0.100.10~10.0.100.40'],
    subnet: '10.0.100.0/24',
    gateway: '10.0.100.1',
  },
  {
    nodeSubnets: ['10.0.1.0/24'],
    ips: ['fd00:100::10~fd00:100::40'],
    subnet: 'fd00:100::/64',
    gateway: 'fd00:100::1',
  },
]);

export type Write =
  | { op: 'release'; ip: string; owner: Owner; decidedAt?: bigint }
  | { op: 'rekey'; ip: string; owner: Owner; to: string; attrs: Attrs; decidedAt?: bigint }
  | { op: 'update'; ip: string; owner: Owner; attrs: Attrs; decidedAt?: bigint }
  | { op: 'allocateIP'; ip: string; key: string; attrs: Attrs };

export class FakeStore implements LifecycleStore {
  readonly writes: Write[] = [];
  private readonly versions = new Map<string, bigint>();
  private next = 1n;

  constructor(readonly allocator: Allocator) {}

  /** Puts an address in place, as if its object had been read (not a write of the lifecycle's). */
  hold(ip: string, key: string, attrs: Partial<Attrs> = {}): Allocation {
    const held = this.allocator.allocateIP(ip, key, {
      policy: ReleasePolicy.PodDelete,
      nodeName: '',
      podUid: '',
      ...attrs,
    });
    this.versions.set(held.ip, this.next++);
    return held;
  }

  /** The addresses a key holds, sorted. */
  held(key: string): string[] {
    return this.allocator
      .byKey(key)
      .map((a) => a.ip)
      .sort();
  }

  versionOf(ip: string): bigint | undefined {
    return this.versions.get(ip);
  }

  private decided(ip: string, decidedAt: bigint | undefined): void {
    if (decidedAt !== undefined && this.versions.get(ip) !== decidedAt)
      throw new StaleDecisionError(ip, decidedAt);
    this.versions.set(ip, this.next++);
  }

  async release(ip: string, owner: Owner, decidedAt?: bigint): Promise<Allocation> {
    this.writes.push({ op: 'release', ip, owner, decidedAt });
    this.allocator.checkOwner(ip, owner);
    this.decided(ip, decidedAt);
    this.versions.delete(ip);
    return this.allocator.release(ip, owner);
  }

  async rekey(ip: string, owner: Owner, to: string, attrs: Attrs, decidedAt?: bigint): Promise<Allocation> {
    this.writes.push({ op: 'rekey', ip, owner, to, attrs, decidedAt });
    this.allocator.checkOwner(ip, owner);
    this.decided(ip, decidedAt);
    return this.allocator.rekey(ip, owner, to, attrs);
  }

  async update(ip: string, owner: Owner, attrs: Attrs, decidedAt?: bigint): Promise<Allocation> {
    this.writes.push({ op: 'update', ip, owner, attrs, decidedAt });
    this.allocator.checkOwner(ip, owner);
    this.decided(ip, decidedAt);
    return this.allocator.update(ip, owner, attrs);
  }

  async allocateIP(
    ip: string,
    key: string,
    attrs: Attrs,
    options: { orphan?: boolean } = {},
  ): Promise<Allocation> {
    this.writes.push({ op: 'allocateIP', ip, key, attrs });
    const held = this.allocator.allocateIP(ip, key, attrs, options);
    this.versions.set(held.ip, this.next++);
    return held;
  }
}

/** Pods in the cache and at the API server, by namespace/name; `serverFails` makes fetch throw. */
export class FakePods implements PodLookup {
  readonly cache = new Map<string, V1Pod>();
  readonly server = new Map<string, V1Pod>();
  serverFails = false;

  /** The pod in the cache and at the server. */
  add(pod: V1Pod): void {
    const name = `${pod.metadata!.namespace}/${pod.metadata!.name}`;
    this.cache.set(name, pod);
    this.server.set(name, pod);
  }

  cached(namespace: string, name: string): V1Pod | undefined {
    return this.cache.get(`${namespace}/${name}`);
  }

  async fetch(namespace: string, name: string): Promise<V1Pod | undefined> {
    if (this.serverFails) throw new Error('connect ECONNREFUSED');
    return this.server.get(`${namespace}/${name}`);
  }

  async find(namespace: string, name: string, uid?: string): Promise<V1Pod | undefined> {
    const pod = this.cached(namespace, name);
    if (pod && (!uid || pod.metadata?.uid === uid)) return pod;
    return this.fetch(namespace, name);
  }
}

export interface PodOptions {
  name: string;
  namespace?: string;
  uid?: string;
  owner?: { kind: string; name: string };
  policy?: 'immutable' | 'never';
  pool?: string;
  phase?: string;
  nodeName?: string;
  /** Addresses in the CNI args annotation. */
  ips?: string[];
}

export function pod(o: PodOptions): V1Pod {
  const annotations: Record<string, string> = {};
  if (o.policy) annotations[RELEASE_POLICY_ANNOTATION] = o.policy;
  if (o.pool) annotations[POOL_ANNOTATION] = o.pool;
  if (o.ips) {
    annotations[CNI_ARGS_ANNOTATION] = formatCniArgs({
      groups: [],
      ipinfos: o.ips.map((ip) => ({ ip: `${ip}/24`, vlan: 0, gateway: '10.0.100.1' })),
    });
  }
  return {
    metadata: {
      name: o.name,
      namespace: o.namespace ?? 'ns1',
      uid: o.uid ?? `uid-${o.name}`,
      annotations,
      ...(o.owner
        ? { ownerReferences: [{ apiVersion: 'apps/v1', ...o.owner, uid: 'u', controller: true }] }
        : {}),
    },
    spec: { containers: [], ...(o.nodeName ? { nodeName: o.nodeName } : {}) },
    status: { phase: o.phase ?? 'Running' },
  };
}

/** What the lifecycle's pieces work with, faked, and what they did: writes, Events, log lines, observations. */
export function lifecycleDeps(options: { clock?: () => number } = {}) {
  const store = new FakeStore(new Allocator(CONFIG, { clock: options.clock ?? (() => 1000) }));
  const pods = new FakePods();
  /** The facts by app name; an app not named does not exist. */
  const apps = new Map<string, WorkloadFacts>();
  const events: { reason: string; object: string; message: string }[] = [];
  const observed: string[] = [];
  const { log, lines } = capturedLog();
  const observer: LifecycleObserver = {
    released: (a, action, cause) => observed.push(`${action.kind} ${a.ip} ${cause}`),
    leakFound: (a, reason) => observed.push(`leak ${a.ip}: ${reason}`),
    settled: (namespace, name) => observed.push(`settled ${namespace}/${name}`),
    appChanged: (key) => observed.push(`app changed ${key}`),
  };
  const deps: LifecycleDeps = {
    store,
    workloads: {
      factsFor: async (key: AllocationKey) => apps.get(key.appName) ?? { exists: false, replicas: 0 },
      followFor: () => undefined,
    },
    pods,
    locks: new DecisionLocks(),
    events: {
      record: (object, _type, reason, message) => events.push({ reason, object: object.name, message }),
    },
    log,
    observer,
  };
  return { deps, store, pods, apps, events, observed, lines };
}
