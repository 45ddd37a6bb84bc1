import type { LeaderTerm } from '../core/leader/leadership-term.js';
import type { LeaderWorkOptions } from '../core/leader/leader-work.js';

/** What `@WhenLeader` needs of a `LeadershipService`: `LeaderElection.runAsLeader` of a group. */
export interface LeaderRunner {
  runAsLeader<T>(
    group: string,
    fn: (term: LeaderTerm) => T | Promise<T>,
    options: LeaderWorkOptions,
  ): Promise<T> | undefined;
}

// Shared by every loaded copy of the package (CommonJS and ESM builds alike).
const KEY = Symbol.for('nestjs-zk-lock.leadership.v2');
const holder = globalThis as typeof globalThis & { [KEY]?: WeakMap<object, LeaderRunner> };
const services: WeakMap<object, LeaderRunner> = (holder[KEY] ??= new WeakMap());

/**
 * Each application's `LeadershipService`, under that application's `LockService`: a
 * `@WhenLeader` method finds its application's `LockService` through the lock-service
 * registry, and its leadership here. Held weakly, and only from construction to shutdown.
 */
export const leadershipRegistry = {
  register(lockService: object, leadership: LeaderRunner): void {
    services.set(lockService, leadership);
  },
  unregister(lockService: object, leadership: LeaderRunner): void {
    if (services.get(lockService) === leadership) services.delete(lockService);
  },
  find(lockService: object): LeaderRunner | undefined {
    return services.get(lockService);
  },
};
