import { lockMessages } from './messages.js';
import { ZkLockError } from './zk-lock.error.js';

/** A lock name that cannot be used; thrown before anything is sent to ZooKeeper. */
export class InvalidLockNameError extends ZkLockError {
  readonly code = 'INVALID_LOCK_NAME';

  constructor(
    readonly lockName: unknown,
    readonly why: string,
  ) {
    super(lockMessages.invalidName(lockName, why));
  }
}
