/**
 * An AbortSignal that aborts with `reason()` after `ms` (never, for `Infinity`), with a
 * `clear()` that cancels the timer, unlike `AbortSignal.timeout`, whose timer outlives
 * the wait it guarded.
 */
export interface Deadline {
  readonly signal: AbortSignal;
  clear(): void;
}

// setTimeout fires at once for delays above 2^31 - 1 ms (about 24.8 days): treat those as "never".
export const MAX_TIMER_MS = 2_147_483_647;

export function deadline(ms: number, reason: () => unknown): Deadline {
  const controller = new AbortController();
  if (!(ms <= MAX_TIMER_MS)) return { signal: controller.signal, clear: () => undefined };
  const timer = setTimeout(() => controller.abort(reason()), ms);
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
