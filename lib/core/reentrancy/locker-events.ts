import type { LockLostError, LockUnavailableError } from '../errors/errors.js';
import type { LockMode } from '../port/lock-backend.js';

/**
 * Why `withLock(…, { ifLocked: 'skip' })` did not run its function; `unavailable`: no
 * ZooKeeper session was connected to ask (see `LockUnavailableError`).
 */
export type SkipReason = 'held' | 'timeout' | 'closing' | 'unavailable';

export interface LockSkippedEvent {
  readonly name: string;
  readonly mode: LockMode;
  readonly reason: SkipReason;
  /** For `unavailable`: the error, whose `unavailableSince` tells one outage from the next. */
  readonly error?: LockUnavailableError;
}

export interface LockLostEvent {
  readonly name: string;
  readonly mode: LockMode;
  /** From the grant to the moment the loss was seen. */
  readonly heldMs: number;
  readonly error: LockLostError;
  /** The call used `onLockLost: 'ignore'` and returns its result anyway. */
  readonly ignored: boolean;
}

/**
 * What a `ReentrantLocker` reports beside its results, for logs and metrics (the Nest
 * `LockService` logs them). Listeners must not throw; if one does, the error is dropped.
 */
export interface LockerEvents {
  skipped?(event: LockSkippedEvent): void;
  /** A lock was lost while a `withLock` function held it; called once, as soon as it is seen. */
  lost?(event: LockLostEvent): void;
}
