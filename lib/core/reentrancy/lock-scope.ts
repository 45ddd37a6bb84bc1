import { AsyncLocalStorage } from 'node:async_hooks';

import type { LockHandle } from '../port/lock-backend.js';
import type { ChainHold } from './chain-hold.js';

/**
 * The locks held by the current async call chain, by scope key (see `scopeKeyOf`). Never
 * mutated: copied on entry.
 */
export type LockScope = ReadonlyMap<string, ChainHold>;

// One storage per process, even when both the CommonJS and the ESM build (or two copies of
// the package) are loaded: a Symbol.for key on globalThis is shared by all of them.
const KEY = Symbol.for('nestjs-zk-lock.lock-scope.v3');
const holder = globalThis as typeof globalThis & { [KEY]?: AsyncLocalStorage<LockScope> };

export const lockScopeStorage: AsyncLocalStorage<LockScope> = (holder[KEY] ??= new AsyncLocalStorage<LockScope>());

const IDS_KEY = Symbol.for('nestjs-zk-lock.lock-scope-ids.v1');
const ids = ((globalThis as typeof globalThis & { [IDS_KEY]?: { next: number; of: WeakMap<object, number> } })[
  IDS_KEY
] ??= {
  next: 1,
  of: new WeakMap(),
});

/**
 * The key under which a call chain's hold of `name` through `backend` is kept. Reentrancy
 * is per backend: holding `shared` through one module's (or one application's) backend does
 * not let a call through another backend in, since that one has no node in its queue.
 */
export function scopeKeyOf(backend: object, name: string): string {
  let id = ids.of.get(backend);
  if (id === undefined) ids.of.set(backend, (id = ids.next++));
  return `${id}\u0000${name}`;
}

/** Runs `fn` in a scope that adds `hold` under `key` to the current one; entered only with `run()`. */
export function runInScope<T>(key: string, hold: ChainHold, fn: () => T): T {
  const scope = new Map(lockScopeStorage.getStore());
  scope.set(key, hold);
  return lockScopeStorage.run(scope, fn);
}

/**
 * The hold the current call chain has under `key`, if it still holds the lock. A grant whose
 * holder is done and whose nested holds are all released does not count: work the holder
 * started but did not await (a timer, a detached promise) can outlive the grant, and must
 * then take the lock for itself.
 */
export function heldInScope(key: string): ChainHold | undefined {
  const hold = lockScopeStorage.getStore()?.get(key);
  return hold?.active ? hold : undefined;
}

/**
 * The names of every lock the current call chain still holds through `backend` (as
 * `heldInScope` counts them), whatever call took them: what a multi-lock must not wait behind.
 */
export function namesHeldInScope(backend: object): string[] {
  const prefix = scopeKeyOf(backend, '');
  const names: string[] = [];
  for (const [key, hold] of lockScopeStorage.getStore() ?? []) {
    if (hold.active && key.startsWith(prefix)) names.push(hold.handle.name);
  }
  return names;
}

/**
 * Every lock the current call chain still holds (as `heldInScope` counts them), through any
 * backend, outermost first: what a fenced transaction opened for "the call's locks" guards.
 */
export function handlesInScope(): LockHandle[] {
  const handles: LockHandle[] = [];
  for (const hold of lockScopeStorage.getStore()?.values() ?? []) if (hold.active) handles.push(hold.handle);
  return handles;
}
