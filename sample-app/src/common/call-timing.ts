/** How long a call waited for its lock (or lease) and how long it held it, in milliseconds. */
export interface CallTiming {
  readonly waitMs: number;
  readonly holdMs: number;
}

const ms = (value: number): number => Math.round(value * 100) / 100;

/**
 * The timing of a call that ends now: `enteredAt` is when the request reached the
 * controller, `grantedAt` when the guarded work began (both from `performance.now()`).
 */
export function callTiming(enteredAt: number, grantedAt: number): CallTiming {
  return { waitMs: ms(grantedAt - enteredAt), holdMs: ms(performance.now() - grantedAt) };
}
