import { lockMessages } from './messages.js';
import { ZkLockError } from './zk-lock.error.js';

/** A granted lock can no longer be trusted: its session is gone or may be gone. */
export class LockLostError extends ZkLockError {
  readonly code = 'LOCK_LOST';

  constructor(
    readonly lockName: string,
    readonly why: string,
    cause?: unknown,
  ) {
    super(lockMessages.lost(lockName, why), { cause });
  }
}
