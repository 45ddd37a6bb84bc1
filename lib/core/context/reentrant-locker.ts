import { LockUpgradeError } from '../errors/lock-upgrade.error.js';
import { encodeLockName } from '../naming/lock-name.codec.js';
import { resolveAcquireOptions } from '../recipe/acquire-options.validator.js';
import type { AcquireOptions, LockBackend, LockHandle } from '../recipe/lock-backend.interface.js';
import type { LockMode } from '../recipe/lock-mode.js';
import { PendingWork } from '../util/pending-work.js';
import { ChainHold } from './chain-hold.js';
import { heldInScope, runInScope } from './lock-scope.storage.js';
import type { ReentrantHandle } from './reentrant.handle.js';

/**
 * Reentrancy per async call chain over any lock backend. Inside `withLock(name, fn)`,
 * everything `fn` starts (awaited calls, timers, promises) holds the lock: taking it again
 * there creates no node and does not wait; `write` held admits `read` (a downgrade);
 * `read` held refuses `write` at once. Calls started outside (another HTTP request, a
 * sibling `Promise.all` branch) exclude each other as two processes would. The lock is
 * released when the last hold of the chain is: see `ChainHold`.
 */
export class ReentrantLocker {
  /** `withLock` bodies running now, so that shutdown can let them finish. */
  private readonly bodies = new PendingWork();

  constructor(
    private readonly backend: LockBackend,
    private readonly defaultTimeoutMs: number,
  ) {}

  /**
   * Runs `fn` holding the lock and releases it when `fn` returns or throws (and every
   * nested hold `fn` started is released). Rejects with the `LockLostError` if the lock was
   * lost while `fn` ran, even if `fn` returned: its work was not done under the lock.
   */
  async withLock<T>(name: string, fn: (handle: LockHandle) => T | Promise<T>, options?: AcquireOptions): Promise<T> {
    const { mode } = this.check(name, options);
    const outer = heldInScope(name);
    if (outer) return this.runNested(this.nested(outer, mode), fn);
    const handle = await this.backend.acquire(name, this.withDefaults(options));
    const hold = new ChainHold(handle);
    const body = runInScope(name, hold, async () => fn(handle));
    this.bodies.track(body.catch(() => undefined));
    try {
      return await this.settle(handle, body);
    } finally {
      await hold.release().catch(() => undefined); // a failed release loses to the caller's result or error
    }
  }

  /**
   * Runs `fn` as the holder of `handle` (from `acquire`): inside it, taking the same lock
   * again is reentrant. `acquire()` cannot make the code after it the holder by itself:
   * an async function cannot change its caller's async context without also changing it
   * for everything else its caller started (a sibling `Promise.all` branch would then
   * join the lock). Resolves with `fn`'s result once every nested hold `fn` started is
   * released; `handle` stays held: release it yourself.
   */
  async runHolding<T>(handle: LockHandle, fn: () => T | Promise<T>): Promise<T> {
    const hold = new ChainHold(handle);
    try {
      return await this.settle(handle, runInScope(handle.name, hold, async () => fn()));
    } finally {
      await hold.settle();
    }
  }

  /** A handle; reentrant (no node, no wait) if this call chain already holds the lock. */
  async acquire(name: string, options?: AcquireOptions): Promise<LockHandle> {
    const { mode } = this.check(name, options);
    const outer = heldInScope(name);
    return outer ? this.nested(outer, mode) : this.backend.acquire(name, this.withDefaults(options));
  }

  /** Like `acquire`, but resolves `null` at once instead of waiting for another holder. */
  async tryAcquire(name: string, options?: Omit<AcquireOptions, 'timeoutMs'>): Promise<LockHandle | null> {
    const { mode } = this.check(name, options);
    const outer = heldInScope(name);
    return outer ? this.nested(outer, mode) : this.backend.tryAcquire(name, options);
  }

  /** The handle this call chain holds for `name`, if any (e.g. to read its fencing token). */
  held(name: string): LockHandle | undefined {
    return heldInScope(name)?.handle;
  }

  /** Waits until no `withLock` body runs, or `timeoutMs` passed; resolves whether they all ended. */
  async drain(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(resolve, timeoutMs, false)));
    try {
      return await Promise.race([this.bodies.drain().then(() => true), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async runNested<T>(handle: ReentrantHandle, fn: (handle: LockHandle) => T | Promise<T>): Promise<T> {
    try {
      const result = await fn(handle);
      handle.assertHeld();
      return result;
    } finally {
      handle.end();
    }
  }

  /** `body`'s result, unless the lock was lost meanwhile. */
  private async settle<T>(handle: LockHandle, body: Promise<T>): Promise<T> {
    const result = await body;
    handle.assertHeld();
    return result;
  }

  private check(name: string, options: AcquireOptions | undefined): { mode: LockMode } {
    encodeLockName(name); // throws InvalidLockNameError, also on the reentrant path
    return resolveAcquireOptions(options, this.defaultTimeoutMs);
  }

  private withDefaults(options: AcquireOptions | undefined): AcquireOptions {
    return { ...options, timeoutMs: options?.timeoutMs ?? this.defaultTimeoutMs };
  }

  private nested(outer: ChainHold, mode: LockMode): ReentrantHandle {
    const { signal } = outer.handle;
    if (signal.aborted) throw signal.reason; // a lost lock is not re-entered
    if (outer.handle.mode === 'read' && mode === 'write') throw new LockUpgradeError(outer.handle.name);
    return outer.enter(mode);
  }
}
