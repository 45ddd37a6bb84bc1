import { lockMessages } from './messages.js';
import { ZkLockError } from './zk-lock.error.js';

/** The ZooKeeper session an operation ran on expired, was declared lost, or was closed. */
export class ZkSessionLostError extends ZkLockError {
  readonly code = 'SESSION_LOST';

  constructor(
    readonly sessionId: string,
    readonly why: string,
  ) {
    super(lockMessages.sessionLost(sessionId, why));
  }
}
