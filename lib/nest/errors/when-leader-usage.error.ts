import { ZkLockError } from '../../core/errors/errors.js';

/** `@WhenLeader` put where it cannot work (not on a method), or given a bad group. */
export class WhenLeaderUsageError extends ZkLockError {
  readonly code = 'WHEN_LEADER_USAGE';
}
