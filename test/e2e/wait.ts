// Polling with a bounded wait whose error says what was awaited and what was last seen.

export interface WaitOptions {
  readonly timeoutMs?: number;
  readonly intervalMs?: number;
}

/**
 * Calls `probe` until it returns something other than undefined, and returns that. A probe that
 * throws is retried; its last error, or the last `describe()` of the state, goes into the timeout
 * error so a failing scenario says where it stood.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  options: WaitOptions & { describe?: () => string | Promise<string> } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const intervalMs = options.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      let state = '';
      if (lastError !== undefined)
        state = `; last error: ${(lastError as Error).message ?? String(lastError)}`;
      else if (options.describe) state = `; last seen: ${await options.describe()}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${state}`);
    }
    await sleep(intervalMs);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
