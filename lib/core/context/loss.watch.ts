import type { LockLostError } from '../errors/lock-lost.error.js';
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
