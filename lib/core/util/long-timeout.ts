/**
 * The longest delay `setTimeout` honours (about 24.8 days). Past it Node prints a
 * `TimeoutOverflowWarning` and fires after 1 ms instead: a month-long `holdAtLeastMs`
 * would let the lock go at once.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** A pending `longTimeout`. */
export interface LongTimeout {
  /** Cancels it; nothing happens if it already fired. */
  clear(): void;
}

export interface LongTimeoutOptions {
  /** Every timer it arms is `unref()`ed: it never keeps the process alive by itself. */
  readonly unref?: boolean;
}

const NEVER: LongTimeout = Object.freeze({ clear: () => undefined });

/**
 * `setTimeout` for any delay: runs `fn` after `ms`, `Infinity` (or NaN) never. A delay
 * within `MAX_TIMER_MS` is one plain timer, as before; a longer one waits in chunks of at
 * most `MAX_TIMER_MS`, each re-armed for what is left by `performance.now()`, so the
 * chunks' lateness does not add up and `fn` never runs before `ms` passed.
 */
export function longTimeout(fn: () => void, ms: number, options: LongTimeoutOptions = {}): LongTimeout {
  if (!(ms < Infinity)) return NEVER;
  const due = performance.now() + ms;
  let timer: NodeJS.Timeout;
  const arm = (left: number): void => {
    timer =
      left > MAX_TIMER_MS
        ? setTimeout(() => arm(due - performance.now()), MAX_TIMER_MS)
        : setTimeout(fn, Math.max(0, left)); // below 0, Node 23+ warns (TimeoutNegativeWarning)
    if (options.unref) timer.unref();
  };
  arm(ms);
  return { clear: () => clearTimeout(timer) };
}
