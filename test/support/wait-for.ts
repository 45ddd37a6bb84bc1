import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitForOptions {
  /** Give up after this long (default 5000 ms). */
  timeoutMs?: number;
  /** Pause between two polls (default 25 ms). */
  intervalMs?: number;
  /** What is awaited, for the error message: "a leader", "/root/node to vanish"… */
  what?: string;
}

/**
 * Polls `predicate` until it returns a truthy value and resolves with that value. A throw
 * or rejection counts as "not yet" (the last one is reported). On timeout it throws
 * `timed out after N ms waiting for <what>`, with the last value or error seen.
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  { timeoutMs = 5000, intervalMs = 25, what = 'a condition' }: WaitForOptions = {},
): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  let last: string;
  for (;;) {
    try {
      const value = await predicate();
      if (value) return value as NonNullable<T>;
      last = `last value: ${String(value)}`;
    } catch (error) {
      last = `last error: ${(error as Error)?.message ?? String(error)}`;
    }
    if (Date.now() >= until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${last})`);
    await sleep(intervalMs);
  }
}
