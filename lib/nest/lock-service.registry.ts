import type { WithLockCallOptions } from '../core/context/with-lock.options.js';
import type { LockHandle } from '../core/recipe/lock-backend.interface.js';

/** What `@WithLock` needs of a `LockService`. */
export interface LockRunner {
  withLock<T>(name: string, fn: (handle: LockHandle) => T | Promise<T>, options: WithLockCallOptions): Promise<T | undefined>;
}

interface Registry {
  /** Every LockService between its creation and application shutdown. */
  readonly live: Set<LockRunner>;
  /** Instances with @WithLock methods, bound at module init to their application's service. */
  readonly owners: WeakMap<object, LockRunner>;
}

// Shared by every loaded copy of the package (CommonJS and ESM builds alike).
const KEY = Symbol.for('nestjs-zk-lock.lock-services');
const holder = globalThis as typeof globalThis & { [KEY]?: Registry };
const registry: Registry = (holder[KEY] ??= { live: new Set(), owners: new WeakMap() });

export const lockServiceRegistry = {
  register(service: LockRunner): void {
    registry.live.add(service);
  },
  unregister(service: LockRunner): void {
    registry.live.delete(service);
  },
  bind(instance: object, service: LockRunner): void {
    registry.owners.set(instance, service);
  },
  /**
   * The service for a decorated method called on `instance`: the one of the application
   * that created the instance, else the only live one. Returns a reason when there is none.
   */
  find(instance: unknown): LockRunner | string {
    const owner = typeof instance === 'object' && instance !== null ? registry.owners.get(instance) : undefined;
    if (owner && registry.live.has(owner)) return owner;
    if (registry.live.size === 1) return registry.live.values().next().value as LockRunner;
    return registry.live.size === 0
      ? 'no ZkLockModule is running in this process'
      : 'several applications run ZkLockModule in this process and this instance belongs to none of them';
  },
};
