import { ZkLockError } from '../errors/zk-lock.error.js';
import { leaseMessages } from './lease.messages.js';

/**
 * A lease was asked for with a `maxLeases` other than the one its semaphore was created
 * with. Thrown before this call leaves anything in ZooKeeper.
 */
export class LeaseLimitMismatchError extends ZkLockError {
  readonly code = 'LEASE_LIMIT_MISMATCH';

  constructor(
    readonly lockName: string,
    /** The `maxLeases` this call passed. */
    readonly requested: number,
    /** The `maxLeases` the semaphore was created with. */
    readonly stored: number,
    where: string,
  ) {
    super(leaseMessages.limitMismatch(lockName, requested, stored, where));
  }
}
