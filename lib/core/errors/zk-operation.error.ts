import { lockMessages } from './messages.js';
import { ZkLockError } from './zk-lock.error.js';

/** A ZooKeeper request failed; `zkCode` is ZooKeeper's own name for the failure (e.g. `NO_NODE`). */
export class ZkOperationError extends ZkLockError {
  readonly code = 'ZK_OPERATION';

  constructor(
    readonly op: string,
    readonly path: string,
    readonly zkCode: string,
    cause?: unknown,
  ) {
    super(lockMessages.operationFailed(op, path, zkCode), { cause });
  }
}
