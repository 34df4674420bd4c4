// The object store: one global revision counter (etcd's revision), one ordered table per resource, and the
// change history watches resume from. Stored objects are never mutated; a write replaces them, so a list or
// a watch can hand out the cached JSON without copying.
import BTreeModule from 'sorted-btree';
import { EventHistory, type EventType, type StoreEvent } from './history.js';
import type { KubeObject } from './types.js';

// sorted-btree is CommonJS with an `exports.default`; under Node's ESM loader the class sits on `.default`.
const BTree = BTreeModule.default;
type Table = InstanceType<typeof BTree<string, StoredObject>>;

export interface StoredObject {
  /** "namespace/name" for namespaced objects, "name" otherwise: the list order, like etcd's key order. */
  readonly key: string;
  readonly obj: KubeObject;
  /** `obj` serialised once, when it was written. */
  readonly json: string;
  readonly revision: number;
}

export type StoreListener = (event: StoreEvent) => void;

export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export class Store {
  private rev: number;
  private readonly tables = new Map<string, Table>();
  private readonly listeners = new Set<StoreListener>();
  readonly history: EventHistory;

  constructor(opts: { historySize: number; startRevision?: number }) {
    this.rev = opts.startRevision ?? 0;
    this.history = new EventHistory(opts.historySize, this.rev);
  }

  /** The current revision: the resourceVersion of the latest change. */
  get revision(): number {
    return this.rev;
  }

  private table(storageKey: string): Table {
    let table = this.tables.get(storageKey);
    if (!table) {
      table = new BTree<string, StoredObject>();
      this.tables.set(storageKey, table);
    }
    return table;
  }

  get(storageKey: string, key: string): StoredObject | undefined {
    return this.tables.get(storageKey)?.get(key);
  }

  count(storageKey: string): number {
    return this.tables.get(storageKey)?.size ?? 0;
  }

  /**
   * Objects whose key starts with `prefix` ("ns/" for one namespace, "" for all), in key order, from key
   * `start` on (a continue token's position) when given.
   */
  *scan(storageKey: string, prefix: string, start?: string): Generator<StoredObject> {
    const table = this.tables.get(storageKey);
    if (!table) return;
    const from = start !== undefined && start > prefix ? start : prefix;
    for (const [key, stored] of table.entries(from)) {
      if (!key.startsWith(prefix)) return;
      yield stored;
    }
  }

  /** Takes ownership of `obj`, stamps it with the next revision, and records the change. */
  write(storageKey: string, key: string, obj: KubeObject): StoredObject {
    const table = this.table(storageKey);
    const previous = table.get(key);
    const stored = this.stamp(key, obj);
    table.set(key, stored);
    this.emit(previous ? 'MODIFIED' : 'ADDED', storageKey, stored, previous);
    return stored;
  }

  /** Removes an object; the DELETED event carries its last state stamped with the deletion's revision. */
  remove(storageKey: string, key: string): StoredObject | undefined {
    const table = this.tables.get(storageKey);
    const previous = table?.get(key);
    if (!table || !previous) return undefined;
    table.delete(key);
    const finalState = { ...previous.obj, metadata: { ...previous.obj.metadata } };
    const stored = this.stamp(key, finalState);
    this.emit('DELETED', storageKey, stored, previous);
    return stored;
  }

  /** Puts an object back as it was saved (state file): no new revision, no event. */
  restore(storageKey: string, key: string, obj: KubeObject): void {
    const revision = Number(obj.metadata?.resourceVersion ?? 0);
    this.table(storageKey).set(key, { key, obj, json: JSON.stringify(obj), revision });
    if (revision > this.rev) this.rev = revision;
  }

  /** After restoring a saved state: start counting from `revision`; nothing before it can be replayed. */
  resetRevision(revision: number): void {
    this.rev = Math.max(this.rev, revision);
    this.history.compact(this.rev);
  }

  dropTable(storageKey: string): void {
    this.tables.delete(storageKey);
  }

  /** Every stored object, for the state file. */
  *allObjects(): Generator<StoredObject> {
    for (const table of this.tables.values()) yield* table.values();
  }

  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private stamp(key: string, obj: KubeObject): StoredObject {
    const revision = ++this.rev;
    obj.metadata = { ...obj.metadata, resourceVersion: String(revision) };
    return { key, obj, json: JSON.stringify(obj), revision };
  }

  private emit(type: EventType, storageKey: string, object: StoredObject, previous?: StoredObject): void {
    const event: StoreEvent = { type, revision: object.revision, storageKey, object };
    if (previous) event.previous = previous;
    this.history.append(event);
    for (const listener of this.listeners) listener(event);
  }
}
