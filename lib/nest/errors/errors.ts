import { ZkLockError } from '../../core/errors/errors.js';
import { type Decorator, nestMessages } from './messages.js';

/** `@WithLock` put where it cannot work (not on a method), or given a bad name or option. */
export class WithLockUsageError extends ZkLockError {
  readonly code = 'WITH_LOCK_USAGE';
}

/** `@WhenLeader` put where it cannot work (not on a method), or given a bad group. */
export class WhenLeaderUsageError extends ZkLockError {
  readonly code = 'WHEN_LEADER_USAGE';
}

/**
 * A job cannot follow leadership (`nestjs-zk-lock/schedule`): `@LeaderOnly` on a method
 * that is not a named `@Cron` job, or `followLeadership` given a job that does not exist.
 */
export class LeaderJobError extends ZkLockError {
  readonly code = 'LEADER_JOB';
}

/** A `@WithLock`, `@WithLease` or `@WhenLeader` method ran where no `LockService` is alive. */
export class ZkLockModuleMissingError extends ZkLockError {
  readonly code = 'ZK_LOCK_MODULE_MISSING';

  constructor(method: string, why: string, decorator: Decorator = '@WithLock') {
    super(nestMessages.moduleMissing(decorator, method, why));
  }
}
