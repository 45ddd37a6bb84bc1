import { lockMessages } from './messages.js';
import { ZkLockError } from './zk-lock.error.js';

/** The caller's `AbortSignal` cancelled a wait for a lock. `cause` is the signal's reason. */
export class LockAbortedError extends ZkLockError {
  readonly code = 'LOCK_ABORTED';

  constructor(
    readonly lockName: string,
    cause?: unknown,
  ) {
    super(lockMessages.aborted(lockName), { cause });
  }
}
