// Builds response bodies from stored JSON by concatenation, so listing many objects costs no re-serialisation.
import { apiVersionOf, type ResourceType } from './registry.js';
import type { StoredObject } from './store.js';

/** An object as served at `rt`'s version (a CRD may serve one stored object at several versions). */
export function objectJson(stored: Pick<StoredObject, 'obj' | 'json'>, rt: ResourceType): string {
  const apiVersion = apiVersionOf(rt);
  if (stored.obj.apiVersion === apiVersion) return stored.json;
  return JSON.stringify({ ...stored.obj, apiVersion });
}

export function listJson(
  rt: ResourceType,
  items: readonly Pick<StoredObject, 'obj' | 'json'>[],
  resourceVersion: number,
  continueToken?: string,
): string {
  const metadata: Record<string, string> = { resourceVersion: String(resourceVersion) };
  if (continueToken) metadata.continue = continueToken;
  const head = `{"kind":${JSON.stringify(rt.listKind)},"apiVersion":${JSON.stringify(apiVersionOf(rt))},"metadata":${JSON.stringify(metadata)},"items":[`;
  return head + items.map((s) => objectJson(s, rt)).join(',') + ']}';
}
