import { lockMessages } from './messages.js';
import { ZkLockError } from './zk-lock.error.js';

/**
 * A multi-lock (`withLocks`, or a locker's `acquireAll`) was asked in a call chain that
 * holds a lock sorting after a name the multi-lock must still take. Waiting for that name
 * while holding the later lock breaks the one order every multi-lock takes names in, and
 * can deadlock with a client that takes both in that order; so it fails at once, before
 * anything is sent, instead.
 */
export class LockOrderError extends ZkLockError {
  readonly code = 'LOCK_ORDER';

  constructor(
    /** The locks the chain holds that sort after a name still to take. */
    readonly heldNames: readonly string[],
    /** The names the multi-lock would have to wait for that sort before a lock held. */
    readonly missingNames: readonly string[],
  ) {
    super(lockMessages.order(heldNames, missingNames));
  }
}
