import { lockMessages } from './messages.js';
import { ZkLockError } from './zk-lock.error.js';

/** The lock client was closed; nothing more can be acquired through it. */
export class LockClientClosedError extends ZkLockError {
  readonly code = 'CLIENT_CLOSED';

  constructor(message: string = lockMessages.closed(), options?: { cause?: unknown }) {
    super(message, options);
  }
}
