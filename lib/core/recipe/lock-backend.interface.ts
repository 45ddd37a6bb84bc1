import { LockLostError } from '../errors/lock-lost.error.js';
import { lockMessages } from '../errors/lock.messages.js';
import type { LockMode } from './lock-mode.js';

/** Per-call options of `acquire` and `tryAcquire`. */
export interface AcquireOptions {
  /** `write` (exclusive, the default) or `read` (shared with other readers). */
  readonly mode?: LockMode;
  /**
   * How long to wait for the lock, in milliseconds: `0` tries once without waiting,
   * `Infinity` waits as long as it takes. Default: `Infinity` in the core.
   */
  readonly timeoutMs?: number;
  /** Cancels the wait; the acquire rejects with `LockAbortedError` and leaves no node. */
  readonly signal?: AbortSignal;
}

/** A granted lock. Release it exactly once; releasing again does nothing. */
export interface LockHandle extends AsyncDisposable {
  readonly name: string;
  readonly mode: LockMode;
  /**
   * Strictly increasing across successive grants of this lock (see README, "Fencing").
   * Pass it to the protected resource, which must refuse tokens lower than one it has seen.
   */
  readonly fencingToken: bigint;
  /** Aborts with a `LockLostError` as its reason when the lock can no longer be trusted. */
  readonly signal: AbortSignal;
  /** Whether `release()` has been called. */
  readonly released: boolean;
  /** Not released and not lost, checked against the clock at this moment. */
  isHeld(): boolean;
  /**
   * Throws unless `isHeld()`: the signal's `LockLostError`, or a `LockLostError` saying the
   * handle was released. Call it right before each step that needs the lock.
   */
  assertHeld(): void;
  release(): Promise<void>;
}

/** `LockHandle.assertHeld` for any handle. */
export function assertHeld(handle: LockHandle): void {
  const { signal } = handle;
  if (signal.aborted) throw signal.reason;
  if (handle.released) throw new LockLostError(handle.name, lockMessages.releasedHandle);
}

/** One node in a lock's queue, as `contenders()` reports it. */
export interface LockContender {
  /** The child node's name (Kazoo format). */
  readonly node: string;
  readonly mode: LockMode;
  /** ZooKeeper's sequence number: the queue position. */
  readonly sequence: number;
  /** What the client wrote into its node (by default `host:pid:instance`), if readable. */
  readonly identity: string | null;
  /** `true` for current holders, `false` for waiters. */
  readonly holding: boolean;
}

/**
 * The lock port: the semantics every backend implements (ZooKeeper here; an in-memory one
 * for users' unit tests can implement the same). Names are any non-empty strings.
 */
export interface LockBackend {
  /** Connects, if the backend needs to; idempotent. */
  start(): Promise<void>;
  /** Resolves with a handle, or rejects with `LockTimeoutError` / `LockAbortedError`. */
  acquire(name: string, options?: AcquireOptions): Promise<LockHandle>;
  /** Resolves with a handle, or `null` if the lock is not available right away. */
  tryAcquire(name: string, options?: Omit<AcquireOptions, 'timeoutMs'>): Promise<LockHandle | null>;
  /** Holders and waiters, in queue order. */
  contenders(name: string): Promise<LockContender[]>;
  /** Fails every wait under way with `LockClientClosedError`; held locks stay held. */
  cancelWaits(): Promise<void>;
  /** Releases what is held, cancels waits, and disconnects. */
  close(): Promise<void>;
}
