import { lockMessages } from './messages.js';
import { ZkLockError } from './zk-lock.error.js';

/** An option with a wrong type or value; thrown before anything is sent to ZooKeeper. */
export class InvalidOptionError extends ZkLockError {
  readonly code = 'INVALID_OPTION';

  constructor(
    readonly option: string,
    readonly value: unknown,
    readonly expected: string,
  ) {
    super(lockMessages.invalidOption(option, value, expected));
  }
}
