import { longTimeout } from './long-timeout.js';

/**
 * An AbortSignal that aborts with `reason()` after `ms` (never, for `Infinity`), with a
 * `clear()` that cancels the timer, unlike `AbortSignal.timeout`, whose timer outlives
 * the wait it guarded.
 */
export interface Deadline {
  readonly signal: AbortSignal;
  clear(): void;
}

export function deadline(ms: number, reason: () => unknown): Deadline {
  const controller = new AbortController();
  const timer = longTimeout(() => controller.abort(reason()), ms);
  return { signal: controller.signal, clear: () => timer.clear() };
}
