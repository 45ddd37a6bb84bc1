import type { LockLostError } from '../errors/lock-lost.error.js';
import type { LockHandle } from '../recipe/lock-backend.interface.js';

/** Calls `onLost` once, as soon as `handle`'s signal aborts; returns the way to stop watching. */
export function watchLoss(handle: LockHandle, onLost: (reason: LockLostError) => void): () => void {
  const { signal } = handle;
  const listener = (): void => onLost(signal.reason as LockLostError);
  if (signal.aborted) {
    listener();
    return () => undefined;
  }
  signal.addEventListener('abort', listener, { once: true });
  return () => signal.removeEventListener('abort', listener);
}
