// pods/binding and the scale subresource: the two subresources whose bodies are not the object itself.
import { applyPatch, type PatchType } from './patch.js';
import type { ResourceType } from './registry.js';
import { cloneStored, type ResourceService, type Served } from './resources.js';
import { formatLabelSelector } from './selectors.js';
import { badRequest, conflict, invalid, STALE_OBJECT } from './status.js';
import { isPlainObject, kubeTimestamp, type KubeObject } from './types.js';

function readPath(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const part of path.replace(/^\./, '').split('.')) {
    if (!isPlainObject(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}

function writePath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.replace(/^\./, '').split('.');
  let cur = obj;
  for (const part of parts.slice(0, -1)) {
    const next = cur[part];
    if (isPlainObject(next)) cur = next;
    else {
      const created: Record<string, unknown> = {};
      cur[part] = created;
      cur = created;
    }
  }
  cur[parts[parts.length - 1] ?? ''] = value;
}

/**
 * What kube-apiserver names in the two refusals of a Binding that are not about the pod object's
 * storage (being deleted, already assigned): it wraps them as a conflict on `pods/binding`
 * (`Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n"`).
 * A UID precondition or a stale resourceVersion is the storage's refusal: a conflict on `pods`.
 */
const BINDING = { group: '', resource: 'pods/binding' };

const ref = (rt: ResourceType): { group: string; resource: string } => ({
  group: rt.group,
  resource: rt.plural,
});

/**
 * POST pods/<name>/binding, as kube-apiserver's BindingREST does it: sets spec.nodeName, copies the
 * Binding's annotations onto the pod and marks it PodScheduled; 409 if the pod is already bound, is being
 * deleted, or fails the Binding's uid/resourceVersion preconditions.
 */
export function bindPod(
  service: ResourceService,
  pods: ResourceType,
  namespace: string,
  name: string,
  body: unknown,
  dryRun: boolean,
): Served {
  if (!isPlainObject(body))
    throw badRequest('the request body for pods/binding must be a JSON Binding object');
  if (body.kind !== undefined && body.kind !== 'Binding') {
    throw badRequest(`${String(body.kind)} in version "v1" cannot be handled as a Binding`);
  }
  const meta = isPlainObject(body.metadata) ? body.metadata : {};
  if (meta.name !== name) throw badRequest('name in URL does not match name in Binding object');
  if (meta.namespace !== undefined && meta.namespace !== namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const target = isPlainObject(body.target) ? body.target : {};
  const causes: { field: string; message: string; reason?: string }[] = [];
  if (typeof target.name !== 'string' || target.name === '') {
    causes.push({ field: 'target.name', message: 'Required value', reason: 'FieldValueRequired' });
  }
  if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node') {
    causes.push({
      field: 'target.kind',
      message: `Invalid value: "${String(target.kind)}": must be empty or 'Node'`,
    });
  }
  if (causes.length > 0) throw invalid('Binding', '', name, causes);
  const nodeName = target.name as string;

  const existing = service.get(pods, namespace, name);
  const podMeta = existing.obj.metadata ?? {};
  if (typeof meta.uid === 'string' && meta.uid !== '' && meta.uid !== podMeta.uid) {
    throw conflict(
      ref(pods),
      name,
      `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${podMeta.uid ?? ''}`,
    );
  }
  if (
    typeof meta.resourceVersion === 'string' &&
    meta.resourceVersion !== '' &&
    meta.resourceVersion !== podMeta.resourceVersion
  ) {
    throw conflict(ref(pods), name, STALE_OBJECT);
  }
  if (podMeta.deletionTimestamp !== undefined) {
    throw conflict(BINDING, name, `pod ${name} is being deleted, cannot be assigned to a host`);
  }
  const spec = isPlainObject(existing.obj.spec) ? existing.obj.spec : {};
  if (typeof spec.nodeName === 'string' && spec.nodeName !== '') {
    throw conflict(BINDING, name, `pod ${name} is already assigned to node "${spec.nodeName}"`);
  }

  const pod = cloneStored(existing);
  const podSpec = isPlainObject(pod.spec) ? pod.spec : (pod.spec = {});
  podSpec.nodeName = nodeName;
  if (isPlainObject(meta.annotations)) {
    const annotations: Record<string, string> = { ...pod.metadata?.annotations };
    for (const [k, v] of Object.entries(meta.annotations)) if (typeof v === 'string') annotations[k] = v;
    pod.metadata = { ...pod.metadata, annotations };
  }
  markScheduled(pod);
  return service.commitUpdate(pods, existing, pod, { dryRun });
}

function markScheduled(pod: KubeObject): void {
  const status = isPlainObject(pod.status) ? pod.status : (pod.status = {});
  const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isPlainObject) : [];
  const at = conditions.findIndex((c) => c.type === 'PodScheduled');
  const scheduled = {
    type: 'PodScheduled',
    status: 'True',
    lastProbeTime: null,
    lastTransitionTime: kubeTimestamp(),
  };
  if (at >= 0) {
    const current = conditions[at];
    if (current?.status !== 'True') conditions[at] = scheduled;
  } else conditions.push(scheduled);
  status.conditions = conditions;
}

/** The autoscaling/v1 Scale view of a scalable object. */
export function scaleOf(rt: ResourceType, obj: KubeObject): KubeObject {
  const paths = rt.scale;
  if (!paths) throw new Error(`${rt.plural} has no scale subresource`);
  const meta = obj.metadata ?? {};
  const selector = paths.labelSelectorPath ? readPath(obj, paths.labelSelectorPath) : undefined;
  const scale: KubeObject = {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: meta.name,
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
      creationTimestamp: meta.creationTimestamp,
    },
    spec: { replicas: Number(readPath(obj, paths.specReplicasPath) ?? 0) },
    status: { replicas: Number(readPath(obj, paths.statusReplicasPath) ?? 0) },
  };
  if (meta.namespace !== undefined) scale.metadata!.namespace = meta.namespace;
  const selectorString = typeof selector === 'string' ? selector : formatLabelSelector(selector);
  if (selectorString) (scale.status as Record<string, unknown>).selector = selectorString;
  return scale;
}

/** PUT …/scale: only spec.replicas is taken from the Scale; its resourceVersion is a precondition. */
export function updateScale(
  service: ResourceService,
  rt: ResourceType,
  namespace: string | undefined,
  name: string,
  body: unknown,
  dryRun: boolean,
): KubeObject {
  const paths = rt.scale;
  if (!paths) throw new Error(`${rt.plural} has no scale subresource`);
  if (!isPlainObject(body))
    throw badRequest('the request body for a scale subresource must be a JSON Scale object');
  const meta = isPlainObject(body.metadata) ? body.metadata : {};
  const replicas = isPlainObject(body.spec) ? body.spec.replicas : undefined;
  if (!Number.isInteger(replicas) || (replicas as number) < 0) {
    throw invalid('Scale', 'autoscaling', name, [
      {
        field: 'spec.replicas',
        message: `Invalid value: ${JSON.stringify(replicas ?? null)}: must be a non-negative integer`,
      },
    ]);
  }
  const existing = service.get(rt, namespace, name);
  if (
    typeof meta.resourceVersion === 'string' &&
    meta.resourceVersion !== '' &&
    meta.resourceVersion !== existing.obj.metadata?.resourceVersion
  ) {
    throw conflict(ref(rt), name, STALE_OBJECT);
  }
  const next = cloneStored(existing);
  writePath(next, paths.specReplicasPath, replicas);
  return scaleOf(rt, service.commitUpdate(rt, existing, next, { dryRun }).obj);
}

export function patchScale(
  service: ResourceService,
  rt: ResourceType,
  namespace: string | undefined,
  name: string,
  type: PatchType,
  patch: unknown,
  dryRun: boolean,
): KubeObject {
  const current = scaleOf(rt, service.get(rt, namespace, name).obj);
  return updateScale(service, rt, namespace, name, applyPatch(type, current, patch), dryRun);
}
