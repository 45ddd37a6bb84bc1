import { AsyncLocalStorage } from 'node:async_hooks';

import type { LockHandle } from '../recipe/lock-backend.interface.js';

/** The locks held by the current async call chain, by name. Never mutated: copied on entry. */
export type LockScope = ReadonlyMap<string, LockHandle>;

// One storage per process, even when both the CommonJS and the ESM build (or two copies of
// the package) are loaded: a Symbol.for key on globalThis is shared by all of them.
const KEY = Symbol.for('nestjs-zk-lock.lock-scope');
const holder = globalThis as typeof globalThis & { [KEY]?: AsyncLocalStorage<LockScope> };

export const lockScopeStorage: AsyncLocalStorage<LockScope> = (holder[KEY] ??= new AsyncLocalStorage<LockScope>());

/** Runs `fn` in a scope that adds `handle` to the current one; entered only with `run()`. */
export function runHolding<T>(handle: LockHandle, fn: () => T): T {
  const scope = new Map(lockScopeStorage.getStore());
  scope.set(handle.name, handle);
  return lockScopeStorage.run(scope, fn);
}

/**
 * The handle the current call chain holds for `name`, if any. A handle released already
 * does not count: work the holder started but did not await (a timer, a detached promise)
 * can outlive the grant, and must then take the lock for itself.
 */
export function heldInScope(name: string): LockHandle | undefined {
  const handle = lockScopeStorage.getStore()?.get(name);
  return handle && !handle.released ? handle : undefined;
}
