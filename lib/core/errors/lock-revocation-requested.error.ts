import { ZkLockError } from './zk-lock.error.js';
import { revocationMessages } from './revocation-messages.js';

/**
 * The reason of a revocable handle's `revocation` signal: someone asked the holders of
 * this lock to release it. Revocation is cooperative: the lock is still held, and stays
 * held until the holder calls `release()`.
 */
export class LockRevocationRequestedError extends ZkLockError {
  readonly code = 'LOCK_REVOCATION_REQUESTED';

  constructor(readonly lockName: string) {
    super(revocationMessages.requested(lockName));
  }
}
