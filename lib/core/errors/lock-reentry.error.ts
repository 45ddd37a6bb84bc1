import { lockMessages } from './messages.js';
import { ZkLockError } from './zk-lock.error.js';

/**
 * A call with `reentrant: false` was made in a call chain that already holds the same
 * lock. It would wait for itself forever, so it fails at once instead.
 */
export class LockReentryError extends ZkLockError {
  readonly code = 'LOCK_REENTRY';

  constructor(readonly lockName: string) {
    super(lockMessages.reentry(lockName));
  }
}
