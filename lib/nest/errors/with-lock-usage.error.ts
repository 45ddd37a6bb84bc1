import { ZkLockError } from '../../core/errors/errors.js';

/** `@WithLock` put where it cannot work (not on a method), or given a bad name or option. */
export class WithLockUsageError extends ZkLockError {
  readonly code = 'WITH_LOCK_USAGE';
}
