// The REST API shares its process, and so its event loop, with the scheduler extender: a handler
// that loops over thousands of entries must let the extender's calls in between, or
// kube-scheduler waits for an operator's release (a 10 MB release once held the loop for 3 s).
import { setImmediate as nextTurn } from 'node:timers/promises';

/** The longest stretch of work between two turns of the event loop. */
export const SLICE_MS = 2;

/**
 * A pause to await between units of work: it resolves at once until `sliceMs` have passed since
 * the last turn, then waits for the next turn of the event loop (after pending I/O).
 */
export function timeSlicer(sliceMs = SLICE_MS): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await nextTurn();
    since = performance.now();
  };
}
