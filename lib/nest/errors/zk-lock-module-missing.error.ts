import { ZkLockError } from '../../core/errors/errors.js';

/** A `@WithLock` or `@WhenLeader` method ran where no `LockService` is alive. */
export class ZkLockModuleMissingError extends ZkLockError {
  readonly code = 'ZK_LOCK_MODULE_MISSING';

  constructor(method: string, why: string, decorator = '@WithLock') {
    super(
      `${decorator} on ${method} found no LockService to use: ${why}. Import ZkLockModule.forRoot({ connectionString }) ` +
        '(or forRootAsync) in your application module, and call the method on an instance Nest created, after the application has started.',
    );
  }
}
