import { ZkLockError } from './zk-lock.error.js';
import { leaderMessages } from './leader-messages.js';

/** A leader group that cannot be used; thrown before anything is sent to ZooKeeper. */
export class InvalidLeaderGroupError extends ZkLockError {
  readonly code = 'INVALID_LEADER_GROUP';

  constructor(
    readonly group: unknown,
    readonly why: string,
    cause?: unknown,
  ) {
    super(leaderMessages.invalidGroup(group, why), { cause });
  }
}
