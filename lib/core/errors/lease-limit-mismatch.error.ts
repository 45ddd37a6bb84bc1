import { ZkLockError } from './zk-lock.error.js';
import { leaseMessages } from './lease-messages.js';

/**
 * A lease was asked for with a `maxLeases` other than the one its semaphore is held or
 * awaited with. Thrown at once; the call leaves nothing behind. A semaphore nobody holds
 * or awaits takes the new number instead.
 */
export class LeaseLimitMismatchError extends ZkLockError {
  readonly code = 'LEASE_LIMIT_MISMATCH';

  constructor(
    readonly lockName: string,
    /** The `maxLeases` this call passed. */
    readonly requested: number,
    /** The `maxLeases` the semaphore is held or awaited with (stored with it). */
    readonly stored: number,
    where: string,
  ) {
    super(leaseMessages.limitMismatch(lockName, requested, stored, where));
  }
}
