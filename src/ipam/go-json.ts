// Which key of a parsed JSON object Go's encoding/json fills a struct field from. galaxy decodes
// with it: each key of the object in turn that names the field, exactly or case-insensitively,
// sets it, so the last such key wins (`{"PodName":"a","podName":"b"}` is pod b). A JSON null sets a
// pointer, slice or map field to nil but leaves a string or number as it was, so for those a later
// null does not win. One gap: JSON.parse keeps a key written twice at its first place, so an exact
// duplicate interleaved with a case variant (`{"A":1,"a":2,"A":3}`) counts at its first place.

/**
 * A key as Go compares it with an ASCII field name: case folded, where `ſ` (U+017F) is an `s` and
 * the Kelvin sign (U+212A, which toLowerCase makes `k`) a `k`, as in Go's Unicode folding. No other
 * character folds to an ASCII letter.
 */
const folded = (key: string): string => key.toLowerCase().replace(/\u017f/g, 's');

/**
 * The key of `object` whose value Go's decoder leaves in the field named `name` (ASCII). `nullable`:
 * the field is a pointer, slice or map, so a null sets it; else a null is passed over.
 */
export function goFieldKey(
  object: Readonly<Record<string, unknown>>,
  name: string,
  nullable: boolean,
): string | undefined {
  const want = name.toLowerCase();
  let found: string | undefined;
  for (const key of Object.keys(object)) {
    // no character's fold to an ASCII letter changes its length, so only keys of the name's length
    // can name it: the Pod's dozens of other keys cost a comparison, not a fold
    if (key.length !== want.length || folded(key) !== want || (!nullable && object[key] === null)) continue;
    found = key;
  }
  return found;
}

/** How a Go field holds its value: a pointer, slice or map (`nullable`, set to nil by a null) or not. */
export type GoHeld = 'nullable' | 'value';

/**
 * `object` seen as Go's decoder fills a struct of the given fields (name: how it is held): each
 * field under its own name, with the value of the key goFieldKey picks; keys naming no field are
 * dropped. Lets a reader of a Go-decoded message read `view.gateway` whatever case was sent.
 */
export function goStruct<F extends string>(
  object: Readonly<Record<string, unknown>>,
  fields: Readonly<Record<F, GoHeld>>,
): Partial<Record<F, unknown>> {
  const out: Partial<Record<F, unknown>> = {};
  for (const name of Object.keys(fields) as F[]) {
    const key = goFieldKey(object, name, fields[name] === 'nullable');
    if (key !== undefined) out[name] = object[key];
  }
  return out;
}
