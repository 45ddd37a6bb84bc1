import { InvalidOptionError } from '../errors/errors.js';
import type { AcquireLeaseOptions, AcquireOptions, MultiAcquireOptions } from '../port/lock-backend.js';
import { resolveAcquireOptions, type ResolvedAcquireOptions } from '../port/options.js';

/** The calls of `ReentrantLocker` (and `LockService`) take one more option than the backends. */
export interface ReentrancyOption {
  /**
   * `false` makes the call queue a node of its own, like Curator's non-reentrant
   * `InterProcessSemaphoreMutex`: inside a call chain that already holds the lock it fails
   * at once with `LockReentryError` instead of waiting for itself. Default `true`.
   */
  readonly reentrant?: boolean;
}

/** The `reentrant` option, checked before anything is sent. */
export function resolveReentrant(options: ReentrancyOption | undefined): boolean {
  const { reentrant = true } = options ?? {};
  if (typeof reentrant !== 'boolean') throw new InvalidOptionError('reentrant', reentrant, 'true or false');
  return reentrant;
}

/**
 * What `withLock` does when another holder has the lock:
 * - `wait` (default): waits up to `timeoutMs`, then rejects with `LockTimeoutError`;
 * - `skip`: does not run the function and resolves `undefined` (after waiting `timeoutMs`,
 *   default 0): for scheduled jobs that must run on one instance per tick;
 * - `throw`: rejects with `LockTimeoutError` (after waiting `timeoutMs`, default 0).
 */
export type IfLocked = 'wait' | 'skip' | 'throw';
export const IF_LOCKED: readonly IfLocked[] = ['wait', 'skip', 'throw'];

/**
 * What `withLock` does when the lock is lost while the function runs: `reject` (default)
 * rejects with the `LockLostError` once the function settles, whatever it returned;
 * `ignore` returns its result anyway. Both report the loss (in Nest: a warning log).
 */
export type OnLockLost = 'reject' | 'ignore';
export const ON_LOCK_LOST: readonly OnLockLost[] = ['reject', 'ignore'];

/** Throws `InvalidOptionError` unless `value` is an `OnLockLost`. */
export function checkOnLockLost(value: unknown): asserts value is OnLockLost {
  if (!ON_LOCK_LOST.includes(value as OnLockLost))
    throw new InvalidOptionError('onLockLost', value, '"reject" or "ignore"');
}

/** Options of `withLock`: those of `acquire`, and what to do when the lock is taken or lost. */
export interface WithLockCallOptions extends AcquireOptions, ReentrancyOption {
  readonly ifLocked?: IfLocked;
  /**
   * Keeps the lock at least this long after the function started, even when it returned
   * earlier (ShedLock's `lockAtLeastFor`): an instance whose timer fires late then finds the
   * lock still taken, instead of running the same scheduled tick a second time. `withLock`
   * resolves when the function does. The rest of the hold is kept in the backend (the job's
   * record, on ZooKeeper's clock) and the node released at once, so a crash or `close()`
   * does not end it; calls with `holdAtLeastMs` (or a `maxHoldMs` of their own) read it and
   * count the lock as held until it ends; other calls do not. Default 0; any finite number
   * of milliseconds (a monthly job's 28 days too).
   */
  readonly holdAtLeastMs?: number;
  readonly onLockLost?: OnLockLost;
}

/**
 * Options of `withLocks`: those of `acquireAll`, and `ifLocked`, `holdAtLeastMs`, `onLockLost`
 * as for `withLock`, except that `withLocks` keeps its hold in the process (shutdown ends it).
 */
export interface WithLocksCallOptions extends MultiAcquireOptions, ReentrancyOption {
  readonly ifLocked?: IfLocked;
  readonly holdAtLeastMs?: number;
  readonly onLockLost?: OnLockLost;
}

/** Options of `acquireLease` and `withLease`: `timeoutMs` defaults to the locker's default timeout. */
export type LeaseCallOptions = AcquireLeaseOptions;

/** `withLock` options whose `ifLocked` is not `'skip'`: the function always runs (or the call rejects). */
export type RunAlwaysOptions = WithLockCallOptions & { readonly ifLocked?: 'wait' | 'throw' };

export interface ResolvedWithLockOptions extends ResolvedAcquireOptions {
  readonly reentrant: boolean;
  readonly ifLocked: IfLocked;
  readonly holdAtLeastMs: number;
  readonly onLockLost: OnLockLost;
}

/** `withLock`'s options beside `acquire`'s. */
const WITH_LOCK_OPTION_KEYS: readonly string[] = ['ifLocked', 'holdAtLeastMs', 'onLockLost'];

/**
 * Checks `withLock` options before anything is sent. Without `timeoutMs`, `wait` waits
 * `defaultTimeoutMs`; `skip` and `throw` do not wait.
 */
export function resolveWithLockOptions(
  options: WithLockCallOptions | undefined,
  defaultTimeoutMs: number,
): ResolvedWithLockOptions {
  const { ifLocked = 'wait', holdAtLeastMs = 0, onLockLost = 'reject' } = options ?? {};
  if (!IF_LOCKED.includes(ifLocked)) throw new InvalidOptionError('ifLocked', ifLocked, '"wait", "skip" or "throw"');
  if (typeof holdAtLeastMs !== 'number' || !Number.isFinite(holdAtLeastMs) || holdAtLeastMs < 0) {
    throw new InvalidOptionError('holdAtLeastMs', holdAtLeastMs, 'a finite number of milliseconds >= 0');
  }
  checkOnLockLost(onLockLost);
  const acquire = resolveAcquireOptions(
    options,
    ifLocked === 'wait' ? defaultTimeoutMs : 0,
    'withLock/@WithLock',
    WITH_LOCK_OPTION_KEYS,
  );
  return { ...acquire, reentrant: resolveReentrant(options), ifLocked, holdAtLeastMs, onLockLost };
}
