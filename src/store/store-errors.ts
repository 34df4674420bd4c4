// The store's refusals that tell the caller to decide again (kind `conflict`): what the edges
// map to a retry.

/** The object changed after the caller decided on it: decide again. */
export class StaleDecisionError extends Error {
  readonly kind = 'conflict';

  constructor(
    readonly ip: string,
    readonly decidedAt: bigint,
  ) {
    super(`${ip} changed after the decision made at version ${decidedAt}; deciding again`);
  }
}

/**
 * Allocating for a key found an object already recording one of the chosen addresses for that key
 * and pod: a create of an earlier attempt that landed after it was given up on. Retry: the key
 * holds it now, and the next attempt reuses it.
 */
export class LateCreateError extends Error {
  readonly kind = 'conflict';

  constructor(
    readonly ip: string,
    readonly key: string,
  ) {
    super(
      `${ip} is already recorded for ${key} by an earlier attempt whose create was not answered; the next attempt uses it`,
    );
  }
}
