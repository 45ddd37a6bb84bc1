import { ZkLockError } from './zk-lock.error.js';
import { leaseMessages } from './lease-messages.js';

/** What a call takes: a lock (`acquire`, `tryAcquire`, `contenders`) or a lease (`acquireLease`, `leaseContenders`). */
export type LockKind = 'lock' | 'lease';

/** What the name turned out to be. */
export type FoundKind = LockKind | 'kazoo-semaphore' | 'unknown';

/**
 * A lock call met a lease semaphore someone holds or awaits, or a lease call met such a
 * lock (or Kazoo's semaphore, or a directory this library did not write). Thrown at once;
 * the call leaves nothing behind. A name nobody holds or awaits changes kind instead.
 */
export class LockKindMismatchError extends ZkLockError {
  readonly code = 'LOCK_KIND_MISMATCH';

  constructor(
    readonly lockName: string,
    readonly requested: LockKind,
    readonly found: FoundKind,
    where: string,
    /** The semaphore's number of leases, when `found` is a semaphore. */
    readonly maxLeases?: number,
  ) {
    super(leaseMessages.kindMismatch(lockName, requested, found, where, maxLeases));
  }
}
