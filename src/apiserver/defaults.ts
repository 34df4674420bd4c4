// The few defaults kube-apiserver applies that floatip's code relies on seeing.
import type { ResourceHooks } from './resources.js';
import { isPlainObject, type KubeObject } from './types.js';

function ensureObject(obj: KubeObject, field: string): Record<string, unknown> {
  const current = obj[field];
  if (isPlainObject(current)) return current;
  const created: Record<string, unknown> = {};
  obj[field] = created;
  return created;
}

/** A new pod is Pending until something (a kubelet, a test) says otherwise. */
export const podDefaults: ResourceHooks = {
  prepare(obj, previous) {
    if (previous) return;
    const status = ensureObject(obj, 'status');
    if (status.phase === undefined) status.phase = 'Pending';
  },
};

export const namespaceDefaults: ResourceHooks = {
  prepare(obj, previous) {
    if (previous) return;
    const status = ensureObject(obj, 'status');
    if (status.phase === undefined) status.phase = 'Active';
  },
};

/** Deployments, ReplicaSets and StatefulSets default to one replica. */
export const workloadDefaults: ResourceHooks = {
  prepare(obj) {
    const spec = ensureObject(obj, 'spec');
    if (spec.replicas === undefined || spec.replicas === null) spec.replicas = 1;
  },
};
