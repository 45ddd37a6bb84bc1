import type { LockList } from '../../core/port/lock-backend.js';
import {
  resolveWithLockOptions,
  type WithLockCallOptions,
  type WithLocksCallOptions,
} from '../../core/reentrancy/call-options.js';
import {
  checkDeclaration,
  type LockMethodDecorator,
  lockDecorator,
  keyFor,
  type MaySkip,
  type NoExtraKeys,
} from './locked-method.js';
import { WITH_LOCK_METADATA } from './decorated-methods.js';
import { ZkLockModuleMissingError } from '../errors/errors.js';
import { nestMessages } from '../errors/messages.js';
import type { LockServiceLike } from '../service-registry.js';

/**
 * Options of `@WithLock`: `mode`, `timeoutMs` (default: the module's `acquireTimeoutMs`, or
 * 0 with `ifLocked: 'skip' | 'throw'`), `ifLocked`, `holdAtLeastMs` and `onLockLost`.
 */
export type WithLockOptions = Omit<WithLockCallOptions, 'signal'>;

/**
 * A fixed lock name, or one computed from the method's arguments; a function may return
 * several names (or `{ name, mode }` entries), taken together as `withLocks` takes them.
 */
export type LockNameSource = string | ((...args: any[]) => string | LockList);

/**
 * Runs the method holding a lock, one caller at a time across every instance of the
 * application (or shared, with `{ mode: 'read' }`). The method must be async. Reentrant:
 * called from code that already holds the lock, it runs without waiting. Where `options`
 * may say `ifLocked: 'skip'`, the call can resolve `undefined` without running the method,
 * and the compiler requires a declared type that admits it (`Promise<T | undefined>`).
 * Annotate a key function's parameters: they are not inferred from the method's.
 *
 * ```ts
 * @WithLock((showId: string) => `show:${showId}`)
 * async reserve(showId: string) { … }
 * ```
 */
export function WithLock<const K extends LockNameSource, const O extends WithLockOptions | undefined = undefined>(
  name: K,
  options?: O & NoExtraKeys<O, WithLockOptions>,
): LockMethodDecorator<K, MaySkip<O>> {
  checkDeclaration('@WithLock', name, options, () => resolveWithLockOptions(options, 0));
  return lockDecorator(
    '@WithLock',
    { key: WITH_LOCK_METADATA, value: { name, options } },
    (service, args, body, method) => {
      const lockKey = lockNameFor(name, args, method);
      if (typeof lockKey === 'string') return service.withLock(lockKey, body, options ?? {});
      return runWithLocks(service, method, lockKey, body, options);
    },
  );
}

/** A key function's list of names: each string taken in the decorator's `mode`. */
function runWithLocks(
  service: LockServiceLike,
  method: string,
  key: LockList,
  body: () => unknown,
  options: WithLockOptions | undefined,
): Promise<unknown> {
  if (!service.withLocks) throw new ZkLockModuleMissingError(method, nestMessages.noService.mockWithoutWithLocks);
  const { mode, ...rest } = options ?? {};
  const locks = mode ? key.map((entry) => (typeof entry === 'string' ? { name: entry, mode } : entry)) : key;
  return service.withLocks(locks, body, rest as WithLocksCallOptions);
}

function lockNameFor(source: LockNameSource, args: unknown[], method: string): string | LockList {
  // An array is checked by withLocks, before anything is sent.
  const where = { decorator: '@WithLock' as const, method, expected: 'a non-empty string (or an array of names)' };
  return keyFor(source, args, where, (key): key is LockList => Array.isArray(key));
}
