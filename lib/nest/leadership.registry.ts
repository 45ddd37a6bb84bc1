/** What `@WhenLeader` needs of a `LeadershipService`. */
export interface LeadershipChecker {
  isLeader(group: string): boolean;
}

// Shared by every loaded copy of the package (CommonJS and ESM builds alike).
const KEY = Symbol.for('nestjs-zk-lock.leadership');
const holder = globalThis as typeof globalThis & { [KEY]?: WeakMap<object, LeadershipChecker> };
const services: WeakMap<object, LeadershipChecker> = (holder[KEY] ??= new WeakMap());

/**
 * Each application's `LeadershipService`, under that application's `LockService`: a
 * `@WhenLeader` method finds its application's `LockService` through the lock-service
 * registry, and its leadership here. Held weakly, and only from construction to shutdown.
 */
export const leadershipRegistry = {
  register(lockService: object, leadership: LeadershipChecker): void {
    services.set(lockService, leadership);
  },
  unregister(lockService: object, leadership: LeadershipChecker): void {
    if (services.get(lockService) === leadership) services.delete(lockService);
  },
  find(lockService: object): LeadershipChecker | undefined {
    return services.get(lockService);
  },
};
