import { ZkLockError } from './zk-lock.error.js';
import { multiLockMessages } from './multi-lock-messages.js';
import { MAX_LOCKS_PER_CALL } from '../port/multi-options.js';

/**
 * The list of locks given to `acquireAll` or `withLocks` cannot be used (not an array,
 * empty, too long, or an entry that is neither a name nor `{ name, mode }`); thrown before
 * anything is sent to ZooKeeper. A bad name throws `InvalidLockNameError`, a bad mode
 * `InvalidOptionError`.
 */
export class InvalidLockListError extends ZkLockError {
  readonly code = 'INVALID_LOCK_LIST';

  constructor(readonly why: string) {
    super(multiLockMessages.invalidList(why, MAX_LOCKS_PER_CALL));
  }
}
