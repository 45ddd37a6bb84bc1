import { AsyncLocalStorage } from 'node:async_hooks';

import type { ChainHold } from './chain-hold.js';

/** The locks held by the current async call chain, by name. Never mutated: copied on entry. */
export type LockScope = ReadonlyMap<string, ChainHold>;

// One storage per process, even when both the CommonJS and the ESM build (or two copies of
// the package) are loaded: a Symbol.for key on globalThis is shared by all of them.
const KEY = Symbol.for('nestjs-zk-lock.lock-scope.v2');
const holder = globalThis as typeof globalThis & { [KEY]?: AsyncLocalStorage<LockScope> };

export const lockScopeStorage: AsyncLocalStorage<LockScope> = (holder[KEY] ??= new AsyncLocalStorage<LockScope>());

/** Runs `fn` in a scope that adds `hold` to the current one; entered only with `run()`. */
export function runInScope<T>(name: string, hold: ChainHold, fn: () => T): T {
  const scope = new Map(lockScopeStorage.getStore());
  scope.set(name, hold);
  return lockScopeStorage.run(scope, fn);
}

/**
 * The hold the current call chain has on `name`, if it still holds the lock. A grant whose
 * holder is done and whose nested holds are all released does not count: work the holder
 * started but did not await (a timer, a detached promise) can outlive the grant, and must
 * then take the lock for itself.
 */
export function heldInScope(name: string): ChainHold | undefined {
  const hold = lockScopeStorage.getStore()?.get(name);
  return hold?.active ? hold : undefined;
}
