import { lockMessages } from './messages.js';
import { ZkLockError } from './zk-lock.error.js';

/**
 * A write lock was asked for inside a call chain that holds the same lock for read. It
 * would wait for itself forever, so it fails at once instead.
 */
export class LockUpgradeError extends ZkLockError {
  readonly code = 'LOCK_UPGRADE';

  constructor(readonly lockName: string) {
    super(lockMessages.upgrade(lockName));
  }
}
