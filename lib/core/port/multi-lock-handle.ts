import type { LockHandle } from './lock-backend.js';

/**
 * Several locks granted together (`acquireAll`). Release it exactly once; releasing again
 * does nothing. A lost lock is not released for you: the others still guard their
 * resources until `release()`.
 */
export interface MultiLockHandle extends AsyncDisposable {
  /** The locks' names, once each, in the order they were taken (the canonical order). */
  readonly names: readonly string[];
  /** One handle per name, in the order of `names`: each with its mode and fencing token. */
  readonly handles: readonly LockHandle[];
  /** Aborts with the first `LockLostError` as its reason as soon as any one of the locks is lost. */
  readonly signal: AbortSignal;
  /** Whether `release()` has been called. */
  readonly released: boolean;
  /** Not released and none of the locks lost, checked at this moment. */
  isHeld(): boolean;
  /** Throws the `LockLostError` of the first lock that is not held. Call it right before each step that needs the locks. */
  assertHeld(): void;
  /** Releases every lock (all at once: on ZooKeeper one transaction, one round trip); rejects with the first failure after trying all. */
  release(): Promise<void>;
}
