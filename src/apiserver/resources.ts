// The verbs on stored objects, with kube-apiserver's semantics: server-set metadata, optimistic concurrency,
// status subresources, generation, preconditions, finalizers, and list paging.
import { randomUUID } from 'node:crypto';
import { decodeContinue, encodeContinue } from './continue-token.js';
import { equalExcept, jsonEqual } from './equality.js';
import { generatedName, nameProblem } from './names.js';
import { applyPatch, type PatchType } from './patch.js';
import { apiVersionOf, type ResourceType } from './registry.js';
import { checkCustomResource } from './schema-validation.js';
import { objectMatcher } from './selectors.js';
import {
  alreadyExists,
  ApiError,
  badRequest,
  conflict,
  invalid,
  notFound,
  STALE_OBJECT,
  unprocessable,
} from './status.js';
import { objectKey, type Store, type StoredObject } from './store.js';
import { isPlainObject, kubeTimestamp, type KubeObject, type ObjectMeta } from './types.js';

/** What a verb hands back: an object and its JSON (stored, or computed for a dry run). */
export type Served = Pick<StoredObject, 'obj' | 'json'>;

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continueToken?: string;
}

export interface ListResult {
  items: StoredObject[];
  /** The revision the list reflects: the current one, or the first page's for a continued list. */
  revision: number;
  continueToken?: string;
}

export interface WriteOptions {
  dryRun?: boolean;
  /** "status" for the status subresource; anything else is handled by the subresource's own module. */
  subresource?: 'status';
}

export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

/** Per-resource behaviour beyond the generic verbs (defaults, CRD registration). */
export interface ResourceHooks {
  /** Defaults and checks an object about to be written; `previous` is absent on create. Throws ApiError. */
  prepare?(obj: KubeObject, previous: KubeObject | undefined, rt: ResourceType): void;
  /** After a write (create or update) was stored. */
  afterWrite?(stored: StoredObject, previous: StoredObject | undefined, rt: ResourceType): void;
  /** Just before an object is removed from the store. */
  beforeRemove?(stored: StoredObject, rt: ResourceType): void;
}

const SERVER_SET_ON_UPDATE = [
  'uid',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
] as const;

function ref(rt: ResourceType): { group: string; resource: string } {
  return { group: rt.group, resource: rt.plural };
}

function metaOf(obj: KubeObject): ObjectMeta {
  return isPlainObject(obj.metadata) ? obj.metadata : {};
}

/** A deep copy, cheap because the stored form is already JSON. */
export function cloneStored(stored: StoredObject): KubeObject {
  return JSON.parse(stored.json) as KubeObject;
}

export class ResourceService {
  constructor(
    private readonly store: Store,
    private readonly hooksFor: (rt: ResourceType) => ResourceHooks,
  ) {}

  get(rt: ResourceType, namespace: string | undefined, name: string): StoredObject {
    const stored = this.store.get(rt.storageKey, objectKey(rt.namespaced ? namespace : undefined, name));
    if (!stored) throw notFound(ref(rt), name);
    return stored;
  }

  list(rt: ResourceType, namespace: string | undefined, opts: ListOptions = {}): ListResult {
    const matches = objectMatcher(opts.labelSelector, opts.fieldSelector, rt.selectableFields);
    const prefix = rt.namespaced && namespace ? `${namespace}/` : '';
    let revision = this.store.revision;
    let start: string | undefined;
    if (opts.continueToken) {
      const token = decodeContinue(opts.continueToken);
      if (token.rv < this.store.history.compactedRevision) {
        throw new ApiError(
          410,
          'Expired',
          'The provided continue parameter is too old to display a consistent list result. ' +
            'You can start a new list without the continue parameter.',
        );
      }
      revision = token.rv;
      start = prefix + token.start;
    }
    const limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : Infinity;
    const items: StoredObject[] = [];
    let more = false;
    for (const stored of this.store.scan(rt.storageKey, prefix, start)) {
      if (items.length >= limit) {
        more = true;
        break;
      }
      if (!matches || matches(stored.obj)) items.push(stored);
    }
    const result: ListResult = { items, revision };
    const last = items[items.length - 1];
    if (more && last)
      result.continueToken = encodeContinue(revision, `${last.key.slice(prefix.length)}\u0000`);
    return result;
  }

  create(rt: ResourceType, namespace: string | undefined, body: unknown, opts: WriteOptions = {}): Served {
    const obj = this.withTypeMeta(rt, body);
    const meta = { ...metaOf(obj) };
    this.placeInNamespace(rt, meta, namespace);
    if (!meta.name) {
      if (!meta.generateName) {
        throw invalid(rt.kind, rt.group, '', [
          {
            field: 'metadata.name',
            message: 'Required value: name or generateName is required',
            reason: 'FieldValueRequired',
          },
        ]);
      }
      meta.name = this.freeGeneratedName(rt, meta.namespace, meta.generateName);
    }
    this.checkNames(rt, meta);
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    meta.uid = randomUUID();
    meta.creationTimestamp = kubeTimestamp();
    meta.generation = 1;
    obj.metadata = meta;
    const hooks = this.hooksFor(rt);
    hooks.prepare?.(obj, undefined, rt);
    checkCustomResource(rt, obj);
    const key = objectKey(meta.namespace, meta.name);
    if (this.store.get(rt.storageKey, key)) throw alreadyExists(ref(rt), meta.name);
    if (opts.dryRun) return { obj, json: JSON.stringify(obj) };
    const stored = this.store.write(rt.storageKey, key, obj);
    hooks.afterWrite?.(stored, undefined, rt);
    return stored;
  }

  /** PUT. Returns `created: true` when a missing object was created (resources that allow create-on-update). */
  update(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    opts: WriteOptions = {},
  ): { served: Served; created: boolean } {
    const obj = this.withTypeMeta(rt, body);
    const meta = { ...metaOf(obj) };
    if (meta.name === undefined || meta.name === '') meta.name = name;
    if (meta.name !== name) {
      throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
    }
    this.placeInNamespace(rt, meta, namespace);
    obj.metadata = meta;
    const existing = this.store.get(rt.storageKey, objectKey(meta.namespace, name));
    if (!existing) {
      if (rt.allowCreateOnUpdate && !opts.subresource && !meta.resourceVersion) {
        return { served: this.create(rt, namespace, obj, opts), created: true };
      }
      throw notFound(ref(rt), name);
    }
    if (meta.resourceVersion !== undefined && meta.resourceVersion !== '') {
      if (meta.resourceVersion !== existing.obj.metadata?.resourceVersion) {
        throw conflict(ref(rt), name, STALE_OBJECT);
      }
    }
    let next: KubeObject;
    if (opts.subresource === 'status') {
      // Through /status only the status changes, as for every kind's status strategy.
      next = cloneStored(existing);
      if (obj.status === undefined) delete next.status;
      else next.status = obj.status;
    } else {
      next = obj;
      if (rt.statusSubresource) {
        // The main resource cannot change status when a status subresource exists.
        if (existing.obj.status === undefined) delete next.status;
        else next.status = structuredClone(existing.obj.status);
      }
    }
    return { served: this.commitUpdate(rt, existing, next, opts), created: false };
  }

  /**
   * Writes `next` over `existing`: keeps server-owned metadata, bumps generation when the spec changed,
   * skips no-op writes (no new revision, like etcd's guaranteed update), and completes a pending deletion
   * once the last finalizer is gone.
   */
  commitUpdate(
    rt: ResourceType,
    existing: StoredObject,
    next: KubeObject,
    opts: { dryRun?: boolean } = {},
  ): Served {
    const old = existing.obj;
    const oldMeta = metaOf(old);
    const meta: ObjectMeta = { ...metaOf(next) };
    // a UID in the written object is a precondition, as in kube-apiserver's storage: it stops a write
    // meant for an object that has since been deleted and re-created under the same name
    if (meta.uid && oldMeta.uid && meta.uid !== oldMeta.uid) {
      throw conflict(
        ref(rt),
        oldMeta.name ?? '',
        `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${oldMeta.uid}`,
      );
    }
    for (const field of SERVER_SET_ON_UPDATE) {
      if (oldMeta[field] === undefined) delete meta[field];
      else (meta as Record<string, unknown>)[field] = oldMeta[field];
    }
    meta.name = oldMeta.name;
    if (oldMeta.namespace === undefined) delete meta.namespace;
    else meta.namespace = oldMeta.namespace;
    meta.resourceVersion = oldMeta.resourceVersion;
    const ignored = rt.statusSubresource ? ['metadata', 'status'] : ['metadata'];
    const generation = oldMeta.generation ?? 1;
    meta.generation = equalExcept(next, old, ignored) ? generation : generation + 1;
    next.metadata = meta;
    next.apiVersion = old.apiVersion ?? apiVersionOf(rt);
    next.kind = rt.kind;
    const hooks = this.hooksFor(rt);
    hooks.prepare?.(next, old, rt);
    // every way of writing (PUT, each patch, status, scale) comes through here, as through
    // kube-apiserver's update strategy
    checkCustomResource(rt, next, old);
    // Like etcd's guaranteed update: writing what is already there is no change and makes no revision.
    if (jsonEqual(next, old)) return existing;
    if (opts.dryRun) return { obj: next, json: JSON.stringify(next) };
    if (meta.deletionTimestamp !== undefined && (meta.finalizers ?? []).length === 0) {
      return this.removeNow(rt, existing);
    }
    const stored = this.store.write(rt.storageKey, existing.key, next);
    hooks.afterWrite?.(stored, existing, rt);
    return stored;
  }

  patch(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patchBody: unknown,
    opts: WriteOptions = {},
  ): Served {
    const existing = this.get(rt, namespace, name);
    const patched = applyPatch(type, cloneStored(existing), patchBody);
    if (!isPlainObject(patched)) throw unprocessable(`the patched ${rt.kind} "${name}" is not a JSON object`);
    const rv = isPlainObject(patched.metadata) ? patched.metadata.resourceVersion : undefined;
    // A resourceVersion in the patch is a precondition, as on kube-apiserver.
    if (rv !== undefined && rv !== existing.obj.metadata?.resourceVersion) {
      throw conflict(ref(rt), name, STALE_OBJECT);
    }
    return this.update(rt, namespace, name, patched, opts).served;
  }

  /** DELETE. `removed` is false when finalizers keep the object (it then carries a deletionTimestamp). */
  delete(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    preconditions: Preconditions = {},
    opts: { dryRun?: boolean } = {},
  ): { served: Served; removed: boolean } {
    const existing = this.get(rt, namespace, name);
    const meta = metaOf(existing.obj);
    if (preconditions.uid !== undefined && preconditions.uid !== meta.uid) {
      throw conflict(
        ref(rt),
        name,
        `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${meta.uid ?? ''}`,
      );
    }
    if (
      preconditions.resourceVersion !== undefined &&
      preconditions.resourceVersion !== meta.resourceVersion
    ) {
      throw conflict(
        ref(rt),
        name,
        `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ` +
          `ResourceVersion in object meta: ${meta.resourceVersion ?? ''}`,
      );
    }
    if (opts.dryRun) return { served: existing, removed: true };
    if ((meta.finalizers ?? []).length > 0) {
      if (meta.deletionTimestamp !== undefined) return { served: existing, removed: false };
      const next = cloneStored(existing);
      next.metadata = { ...metaOf(next), deletionTimestamp: kubeTimestamp(), deletionGracePeriodSeconds: 0 };
      const stored = this.store.write(rt.storageKey, existing.key, next);
      return { served: stored, removed: false };
    }
    return { served: this.removeNow(rt, existing), removed: true };
  }

  deleteCollection(
    rt: ResourceType,
    namespace: string | undefined,
    opts: ListOptions,
    dryRun = false,
  ): { items: Served[]; revision: number } {
    const { items } = this.list(rt, namespace, { ...opts, limit: undefined, continueToken: undefined });
    const deleted = items.map(
      (s) => this.delete(rt, s.obj.metadata?.namespace, s.obj.metadata?.name ?? '', {}, { dryRun }).served,
    );
    return { items: deleted, revision: this.store.revision };
  }

  /** Removes an object for good (no finalizers left). */
  removeNow(rt: ResourceType, existing: StoredObject): StoredObject {
    this.hooksFor(rt).beforeRemove?.(existing, rt);
    return this.store.remove(rt.storageKey, existing.key) ?? existing;
  }

  /** Fills in apiVersion/kind, or refuses a body meant for another type. */
  private withTypeMeta(rt: ResourceType, body: unknown): KubeObject {
    if (!isPlainObject(body)) throw badRequest(`the request body for ${rt.plural} must be a JSON object`);
    const expected = apiVersionOf(rt);
    if (body.apiVersion !== undefined && body.apiVersion !== expected) {
      throw badRequest(
        `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${expected})`,
      );
    }
    if (body.kind !== undefined && body.kind !== rt.kind) {
      throw badRequest(`${String(body.kind)} in version "${rt.version}" cannot be handled as a ${rt.kind}`);
    }
    if (body.metadata !== undefined && !isPlainObject(body.metadata)) {
      throw badRequest(`metadata of the ${rt.kind} must be a JSON object`);
    }
    const { apiVersion: _a, kind: _k, metadata, ...rest } = body;
    return { apiVersion: expected, kind: rt.kind, metadata: (metadata ?? {}) as ObjectMeta, ...rest };
  }

  private placeInNamespace(rt: ResourceType, meta: ObjectMeta, namespace: string | undefined): void {
    if (!rt.namespaced) {
      delete meta.namespace;
      return;
    }
    if (meta.namespace && namespace && meta.namespace !== namespace) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    const ns = meta.namespace || namespace;
    if (!ns) throw badRequest(`${rt.plural} are namespaced: a namespace is required`);
    meta.namespace = ns;
  }

  private checkNames(rt: ResourceType, meta: ObjectMeta): void {
    const name = meta.name ?? '';
    const causes: { field: string; message: string }[] = [];
    const problem = nameProblem(name, rt.storageKey === 'namespaces' ? 'label' : 'subdomain');
    if (problem) causes.push({ field: 'metadata.name', message: problem });
    if (meta.namespace !== undefined) {
      const nsProblem = nameProblem(meta.namespace, 'label');
      if (nsProblem) causes.push({ field: 'metadata.namespace', message: nsProblem });
    }
    if (causes.length > 0) throw invalid(rt.kind, rt.group, name, causes);
  }

  private freeGeneratedName(rt: ResourceType, namespace: string | undefined, prefix: string): string {
    for (let attempt = 0; attempt < 8; attempt++) {
      const name = generatedName(prefix);
      if (!this.store.get(rt.storageKey, objectKey(namespace, name))) return name;
    }
    throw alreadyExists(ref(rt), `${prefix}*`);
  }
}
