import type { LockLostError } from '../errors/errors.js';
/** Calls `onLost` once, as soon as `handle`'s signal aborts; returns the way to stop watching. */
export function watchLoss(
  handle: { readonly signal: AbortSignal },
  onLost: (reason: LockLostError) => void,
): () => void {
  const { signal } = handle;
  const listener = (): void => onLost(signal.reason as LockLostError);
  if (signal.aborted) {
    listener();
    return () => undefined;
  }
  signal.addEventListener('abort', listener, { once: true });
  return () => signal.removeEventListener('abort', listener);
}

/**
 * For a grant that fails the clock check before its body starts (the event loop was
 * blocked past the session's trust deadline while the grant came back): releases it, so
 * its node goes, and rejects with its `LockLostError`. The body never starts under it.
 * No second acquire: until the session has proved itself again, a new grant would be
 * born lost too.
 */
export async function refuseLost(grant: { assertHeld(): void; release(): Promise<void> }): Promise<never> {
  let lost: unknown;
  try {
    grant.assertHeld();
  } catch (error) {
    lost = error;
  }
  await grant.release().catch(() => undefined); // the loss is the answer, not a failed delete
  throw lost;
}
