import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitForOptions {
  /** Give up after this long (default 5000 ms). */
  timeoutMs?: number;
  /** Pause between two polls (default 25 ms). */
  intervalMs?: number;
  /** What is awaited, for the error message: "a leader", "/root/node to vanish"… A function is read at timeout. */
  what?: string | (() => string);
}

const STILL_RUNNING = Symbol('still running');

/**
 * Polls `predicate` until it returns a truthy value and resolves with that value. A throw
 * or rejection counts as "not yet" (the last one is reported); a poll that never settles
 * is cut off at the deadline. On timeout it throws
 * `timed out after N ms waiting for <what> (last value: … | last error: …)`.
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  { timeoutMs = 5000, intervalMs = 25, what = 'a condition' }: WaitForOptions = {},
): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  let last = 'no poll finished';
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    try {
      const deadline = new Promise<typeof STILL_RUNNING>((resolve) => {
        timer = setTimeout(() => resolve(STILL_RUNNING), Math.max(until - Date.now(), 0));
      });
      const value = await Promise.race([Promise.resolve().then(predicate), deadline]);
      if (value === STILL_RUNNING) last = 'last poll still running';
      else if (value) return value as NonNullable<T>;
      else last = `last value: ${String(value)}`;
    } catch (error) {
      last = `last error: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      clearTimeout(timer);
    }
    if (Date.now() >= until) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what} (${last})`,
      );
    }
    await sleep(intervalMs);
  }
}
