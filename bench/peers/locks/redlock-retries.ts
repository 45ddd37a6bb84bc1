/** node-redlock's and its forks' default `retryDelay` (ms between two tries; the jitter is added around it). */
export const REDLOCK_RETRY_DELAY_MS = 200;

/**
 * The `retryCount` that makes a redlock call wait about `acquireTimeoutMs` for a busy lock:
 * it tries once, then `retryCount` times more, `retryDelay` ± `retryJitter` apart (the jitter
 * averages out), so the retries span `retryCount × retryDelay`.
 */
export function redlockRetryCount(acquireTimeoutMs: number, retryDelayMs = REDLOCK_RETRY_DELAY_MS): number {
  return Math.max(0, Math.ceil(acquireTimeoutMs / retryDelayMs));
}
