// Small fakes for unit tests of the rooms that decide: a store that writes to an allocator at once
// (recording each write), an Event recorder and a cluster view that remember what they were given.
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { BindStore } from '../../src/extender/bind.js';
import type { AllocateRequest, Allocator, Attrs, Family, Owner } from '../../src/ipam/index.js';
import type { EventRecorder, EventType, InvolvedObject } from '../../src/kube/events.js';
import { DEFAULT_RESOURCE } from '../../src/pods/pod-facts.js';

/** A store whose writes go straight to the allocator; `writes` lists them, `failNext` makes one throw. */
export function memoryStore(allocator: Allocator) {
  const writes: string[] = [];
  let failing: ((what: string) => Error | undefined) | undefined;
  const write = <T>(what: string, apply: () => T): Promise<T> => {
    const err = failing?.(what);
    if (err) return Promise.reject(err);
    writes.push(what);
    return Promise.resolve(apply());
  };
  const store: BindStore & { writes: string[]; failWhen(f: (what: string) => Error | undefined): void } = {
    allocator,
    writes,
    failWhen: (f) => (failing = f),
    allocate: (request: AllocateRequest) =>
      write(`allocate ${request.key}`, () => allocator.allocate(request)),
    update: (ip: string, owner: Owner, attrs: Attrs) =>
      write(`update ${ip}`, () => allocator.update(ip, owner, attrs)),
    release: (ip: string, owner: Owner) => write(`release ${ip}`, () => allocator.release(ip, owner)),
    rekey: (ip: string, owner: Owner, key: string, attrs: Attrs) =>
      write(`rekey ${ip} ${key}`, () => allocator.rekey(ip, owner, key, attrs)),
    unpark: (parked: string, key: string, nodeSubnet: string, attrs: Attrs, family?: Family) =>
      write(`unpark ${parked} ${key}`, () => allocator.unpark(parked, key, nodeSubnet, attrs, family)),
  };
  return store;
}

export interface RecordedEvent {
  readonly object: InvolvedObject;
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
}

export function recordedEvents(): EventRecorder & { events: RecordedEvent[] } {
  const events: RecordedEvent[] = [];
  return {
    events,
    record: (object, type, reason, message) => events.push({ object, type, reason, message }),
  };
}

export const node = (name: string, ...internalIPs: string[]): V1Node => ({
  metadata: { name, resourceVersion: '1' },
  status: { addresses: internalIPs.map((address) => ({ type: 'InternalIP', address })) },
});

export interface PodOptions {
  namespace?: string;
  uid?: string;
  owner?: { kind: string; name: string };
  annotations?: Record<string, string>;
  wants?: boolean;
  nodeName?: string;
}

export const pod = (name: string, o: PodOptions = {}): V1Pod => ({
  metadata: {
    name,
    namespace: o.namespace ?? 'ns1',
    uid: o.uid ?? `uid-${name}`,
    annotations: o.annotations ?? {},
    ownerReferences: o.owner ? [{ apiVersion: 'apps/v1', uid: 'o', ...o.owner }] : [],
  },
  spec: {
    containers: [
      { name: 'c', resources: o.wants === false ? {} : { requests: { [DEFAULT_RESOURCE]: '1' } } },
    ],
    ...(o.nodeName ? { nodeName: o.nodeName } : {}),
  },
});

/** The caches the verbs read: nodes by name, pods by namespace/name (mutable, for the test to change). */
export function cluster(nodes: V1Node[] = [], pods: V1Pod[] = []) {
  const nodeMap = new Map(nodes.map((n) => [n.metadata!.name!, n]));
  const podMap = new Map(pods.map((p) => [`${p.metadata!.namespace}/${p.metadata!.name}`, p]));
  return {
    nodeMap,
    podMap,
    node: (name: string) => nodeMap.get(name),
    pods: {
      cached: (namespace: string, name: string) => podMap.get(`${namespace}/${name}`),
      fetch: (namespace: string, name: string) => Promise.resolve(podMap.get(`${namespace}/${name}`)),
      find: (namespace: string, name: string) => Promise.resolve(podMap.get(`${namespace}/${name}`)),
    },
  };
}
