import { lockMessages } from './messages.js';
import { ZkLockError } from './zk-lock.error.js';

/** The lock client was used before it connected. */
export class LockClientNotStartedError extends ZkLockError {
  readonly code = 'CLIENT_NOT_STARTED';

  constructor() {
    super(lockMessages.notStarted());
  }
}
