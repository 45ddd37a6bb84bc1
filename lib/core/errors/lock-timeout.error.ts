import { lockMessages } from './messages.js';
import { ZkLockError } from './zk-lock.error.js';

/** The lock was not granted within `timeoutMs` (or at once, for `timeoutMs: 0`). */
export class LockTimeoutError extends ZkLockError {
  readonly code = 'LOCK_TIMEOUT';
  /** When the call gave up (`performance.now()` time): what was connected then tells who kept it out. */
  readonly at = performance.now();

  constructor(
    readonly lockName: string,
    readonly mode: string,
    readonly timeoutMs: number,
    /** A recipe's own wording (a lease's); by default the lock's. */
    message: string = lockMessages.timeout(lockName, mode, timeoutMs),
  ) {
    super(message);
  }
}
