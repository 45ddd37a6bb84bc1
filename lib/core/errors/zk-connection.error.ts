import { ZkLockError } from './zk-lock.error.js';

/** ZooKeeper could not be reached, or the connection string is unusable. */
export class ZkConnectionError extends ZkLockError {
  readonly code = 'ZK_CONNECTION';

  constructor(
    message: string,
    readonly connectionString: string,
    cause?: unknown,
  ) {
    super(message, { cause });
  }
}
