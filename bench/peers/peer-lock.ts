/**
 * The one port every lock of the peers pass implements: this library and the Redis locks
 * Nest teams pick instead, each used as its README shows. The speed runs and the fault
 * trials drive a `PeerLock` and nothing else, so every lock meets the same code.
 */

/** The locks compared, in the order the page lists them. */
export const PEER_IDS = ['ours', 'redlock-1', 'redlock-3', 'redis-semaphore', 'nest-redlock', 'murlock'] as const;
export type PeerId = (typeof PEER_IDS)[number];

/** What the body run under a lock is given. */
export interface PeerHold {
  /**
   * The lock's fencing token, for a store to refuse an older holder's writes; undefined for
   * a lock that gives none (every Redis lock here).
   */
  readonly token: bigint | undefined;
  /**
   * The library's own way of saying the lock is still held, checked right before each write
   * as a careful user would: `isHeld()` for this library (it checks the clock), the
   * `AbortSignal` of `using()` for redlock, `onLockLost` for redis-semaphore; always true
   * for a lock that never tells (murlock).
   */
  isHeld(): boolean;
  /** Aborts when the library tells the holder its lock is lost (never, for a lock that does not tell). */
  readonly signal: AbortSignal;
}

/** How a peer is set up for a run. */
export interface PeerConfig {
  readonly id: PeerId;
  /**
   * Where its servers are: for `ours` a ZooKeeper connection string; for the Redis locks
   * one `host:port` per Redis server (three for `redlock-3`, one for the others).
   */
  readonly endpoints: readonly string[];
  /**
   * The lock's time to live (Redis locks) or session timeout (ours), in ms: the time after
   * which a silent holder's lock may go to another. Undefined: the library's default.
   */
  readonly ttlMs?: number;
  /** How long one call may wait for the lock before it fails (the library's retry settings set from it). */
  readonly acquireTimeoutMs: number;
}

export interface PeerLock {
  readonly id: PeerId;
  /**
   * Acquires `key`, runs `body` holding it, releases it (the library's `using`, `withLock`
   * or decorated method). Rejects when the lock could not be had within the config's
   * `acquireTimeoutMs`, or as the library rejects when it loses the lock.
   */
  run<T>(key: string, body: (hold: PeerHold) => Promise<T>): Promise<T>;
  /** Closes every connection and timer it opened. */
  close(): Promise<void>;
}
