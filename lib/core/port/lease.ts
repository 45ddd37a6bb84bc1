/** Options of `acquireLease`. */
export interface AcquireLeaseOptions {
  /**
   * How many holders the semaphore admits at once, 1 to 1000. Stored with the semaphore
   * when it is created: every client must pass the same number (`LeaseLimitMismatchError`).
   */
  readonly maxLeases: number;
  /**
   * How long to wait for a lease, in milliseconds: `0` tries once without waiting,
   * `Infinity` waits as long as it takes. Default: `Infinity` in the core.
   */
  readonly timeoutMs?: number;
  /** Cancels the wait; the call rejects with `LockAbortedError` and leaves no node. */
  readonly signal?: AbortSignal;
}

/**
 * One of a semaphore's `maxLeases` leases. Not reentrant: each `acquireLease` takes one
 * more. Release it exactly once; releasing again returns the same promise.
 */
export interface LeaseHandle extends AsyncDisposable {
  readonly name: string;
  readonly maxLeases: number;
  /** Aborts with a `LockLostError` as its reason when the lease can no longer be trusted. */
  readonly signal: AbortSignal;
  /** Whether `release()` has been called. */
  readonly released: boolean;
  /** Not released and not lost, checked against the clock at this moment. */
  isHeld(): boolean;
  /** Throws unless `isHeld()`: the signal's `LockLostError`, or one saying the handle was released. */
  assertHeld(): void;
  release(): Promise<void>;
}

/** One node of a semaphore's queue, as `leaseContenders()` reports it. */
export interface LeaseContender {
  /** The child node's name: `<32 hex guid>__lease__<seq>`. */
  readonly node: string;
  /** ZooKeeper's sequence number: the queue position. */
  readonly sequence: number;
  /** What the client wrote into its node (by default `host:pid:instance`), if readable. */
  readonly identity: string | null;
  /** `true` for the (at most `maxLeases`) holders, `false` for waiters. */
  readonly holding: boolean;
}
