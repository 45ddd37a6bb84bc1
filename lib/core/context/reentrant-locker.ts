import { LockUpgradeError } from '../errors/lock-upgrade.error.js';
import { encodeLockName } from '../naming/lock-name.codec.js';
import { resolveAcquireOptions } from '../recipe/acquire-options.validator.js';
import type { AcquireOptions, LockBackend, LockHandle } from '../recipe/lock-backend.interface.js';
import type { LockMode } from '../recipe/lock-mode.js';
import { heldInScope, runHolding } from './lock-scope.storage.js';
import { ReentrantHandle } from './reentrant.handle.js';

/**
 * Reentrancy per async call chain over any lock backend. Inside `withLock(name, fn)`,
 * everything `fn` starts (awaited calls, timers, promises) holds the lock: taking it again
 * there creates no node and does not wait; `write` held admits `read` (a downgrade);
 * `read` held refuses `write` at once. Calls started outside (another HTTP request, a
 * sibling `Promise.all` branch) exclude each other as two processes would.
 */
export class ReentrantLocker {
  constructor(
    private readonly backend: LockBackend,
    private readonly defaultTimeoutMs: number,
  ) {}

  /** Runs `fn` holding the lock and releases it when `fn` returns or throws. */
  async withLock<T>(name: string, fn: (handle: LockHandle) => T | Promise<T>, options?: AcquireOptions): Promise<T> {
    const { mode } = this.check(name, options);
    const outer = heldInScope(name);
    if (outer) return fn(this.nested(outer, mode));
    const handle = await this.backend.acquire(name, this.withDefaults(options));
    let result: T;
    try {
      result = await runHolding(handle, () => fn(handle));
    } catch (error) {
      await handle.release().catch(() => undefined); // the caller's error matters more
      throw error;
    }
    await handle.release();
    return result;
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
    return heldInScope(name);
  }

  private check(name: string, options: AcquireOptions | undefined): { mode: LockMode } {
    encodeLockName(name); // throws InvalidLockNameError, also on the reentrant path
    return resolveAcquireOptions(options, this.defaultTimeoutMs);
  }

  private withDefaults(options: AcquireOptions | undefined): AcquireOptions {
    return { ...options, timeoutMs: options?.timeoutMs ?? this.defaultTimeoutMs };
  }

  private nested(outer: LockHandle, mode: LockMode): LockHandle {
    if (outer.signal.aborted) throw outer.signal.reason; // a lost lock is not re-entered
    if (outer.mode === 'read' && mode === 'write') throw new LockUpgradeError(outer.name);
    return new ReentrantHandle(outer, mode);
  }
}
