import { LockClientClosedError } from '../errors/lock-client-closed.error.js';
import type { LockLostError } from '../errors/lock-lost.error.js';
import { lockMessages } from '../errors/lock.messages.js';
import { LockTimeoutError } from '../errors/lock-timeout.error.js';
import { LockReentryError } from '../errors/lock-reentry.error.js';
import { LockUpgradeError } from '../errors/lock-upgrade.error.js';
import { encodeLockName } from '../naming/lock-name.codec.js';
import { resolveAcquireOptions } from '../recipe/acquire-options.validator.js';
import type { AcquireOptions, LockBackend, LockHandle } from '../recipe/lock-backend.interface.js';
import type { LockMode } from '../recipe/lock-mode.js';
import { PendingWork } from '../util/pending-work.js';
import { ChainHold } from './chain-hold.js';
import { DeferredReleases } from './deferred-releases.js';
import { heldInScope, runInScope, scopeKeyOf } from './lock-scope.storage.js';
import type { LockerEvents, SkipReason } from './locker.events.js';
import { watchLoss } from './loss.watch.js';
import type { ReentrantHandle } from './reentrant.handle.js';
import { resolveReentrant, type ReentrancyOption } from './reentrancy.option.js';
import { resolveWithLockOptions, type ResolvedWithLockOptions, type RunAlwaysOptions, type WithLockCallOptions } from './with-lock.options.js';

/**
 * Reentrancy per async call chain over any lock backend. Inside `withLock(name, fn)`,
 * everything `fn` starts (awaited calls, timers, promises) holds the lock: taking it again
 * there creates no node and does not wait; `write` held admits `read` (a downgrade);
 * `read` held refuses `write` at once. Calls started outside (another HTTP request, a
 * sibling `Promise.all` branch) exclude each other as two processes would. The lock is
 * released when the last hold of the chain is: see `ChainHold`. Reentrancy is per backend:
 * two lockers over one backend share it, lockers over two backends do not.
 */
export class ReentrantLocker {
  /** `withLock` bodies running now, so that shutdown can let them finish. */
  private readonly bodies = new PendingWork();
  private readonly deferred = new DeferredReleases();
  private closing = false;

  constructor(
    private readonly backend: LockBackend,
    private readonly defaultTimeoutMs: number,
    private readonly events: LockerEvents = {},
  ) {}

  /**
   * Runs `fn` holding the lock and releases it when `fn` returns or throws (and every
   * nested hold `fn` started is released). Rejects with the `LockLostError` if the lock was
   * lost while `fn` ran, even if `fn` returned: its work was not done under the lock
   * (unless `onLockLost: 'ignore'`). With `ifLocked: 'skip'`, resolves `undefined` without
   * running `fn` when another holder has the lock.
   */
  withLock<T>(name: string, fn: (handle: LockHandle) => T | Promise<T>, options?: RunAlwaysOptions): Promise<T>;
  withLock<T>(name: string, fn: (handle: LockHandle) => T | Promise<T>, options: WithLockCallOptions): Promise<T | undefined>;
  async withLock<T>(name: string, fn: (handle: LockHandle) => T | Promise<T>, options?: WithLockCallOptions): Promise<T | undefined> {
    const call = resolveWithLockOptions(options, this.defaultTimeoutMs);
    encodeLockName(name); // after the options, as the backends check them
    const key = scopeKeyOf(this.backend, name);
    const outer = heldInScope(key);
    if (outer) return this.runNested(this.nested(outer, call.mode, call.reentrant), fn);
    const handle = await this.grant(name, call);
    if (!handle) return undefined;
    const grantedAt = performance.now();
    const stopWatching = this.events.lost && watchLoss(handle, (error) => this.reportLost(name, call, grantedAt, error));
    const hold = new ChainHold(handle);
    const body = runInScope(key, hold, async () => fn(handle));
    this.bodies.track(body.catch(() => undefined));
    try {
      return await this.settle(handle, body, call.onLockLost === 'ignore');
    } finally {
      stopWatching?.();
      await this.release(hold, grantedAt + call.holdAtLeastMs - performance.now());
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
      return await this.settle(handle, runInScope(scopeKeyOf(this.backend, handle.name), hold, async () => fn()), false);
    } finally {
      await hold.settle();
    }
  }

  /**
   * A handle; reentrant (no node, no wait) if this call chain already holds the lock, or
   * `LockReentryError` then with `reentrant: false`.
   */
  async acquire(name: string, options?: AcquireOptions & ReentrancyOption): Promise<LockHandle> {
    const { mode, timeoutMs, signal } = this.check(name, options);
    const outer = heldInScope(scopeKeyOf(this.backend, name));
    if (outer) return this.nested(outer, mode, resolveReentrant(options));
    return this.closingAware(name, this.backend.acquire(name, { mode, timeoutMs, signal }));
  }

  /** Like `acquire`, but resolves `null` at once instead of waiting for another holder. */
  async tryAcquire(name: string, options?: Omit<AcquireOptions, 'timeoutMs'> & ReentrancyOption): Promise<LockHandle | null> {
    const { mode, signal } = this.check(name, options);
    const outer = heldInScope(scopeKeyOf(this.backend, name));
    if (outer) return this.nested(outer, mode, resolveReentrant(options));
    return this.closingAware(name, this.backend.tryAcquire(name, { mode, signal }));
  }

  /** The handle this call chain holds for `name`, if any (e.g. to read its fencing token). */
  held(name: string): LockHandle | undefined {
    return heldInScope(scopeKeyOf(this.backend, name))?.handle;
  }

  /**
   * Shutdown begins: waits under way fail (`ifLocked: 'skip'` calls resolve `undefined`),
   * and so do new ones, with a message that says the client is shutting down.
   */
  async cancelWaits(): Promise<void> {
    this.closing = true;
    await this.backend.cancelWaits();
  }

  /**
   * Waits until no `withLock` body runs, or `timeoutMs` passed; resolves whether they all
   * ended. Then releases at once the locks `holdAtLeastMs` still kept.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(resolve, timeoutMs, false)));
    try {
      return await Promise.race([this.bodies.drain().then(() => true), timedOut]);
    } finally {
      clearTimeout(timer);
      await this.deferred.flush();
    }
  }

  /** The grant, or `undefined` when `ifLocked: 'skip'` lets the call go without it. */
  private async grant(name: string, call: ResolvedWithLockOptions): Promise<LockHandle | undefined> {
    const { mode, timeoutMs, signal } = call;
    if (call.ifLocked === 'skip' && this.closing) return this.skip(name, mode, 'closing');
    try {
      return await this.closingAware(name, this.backend.acquire(name, { mode, timeoutMs, signal }));
    } catch (error) {
      if (call.ifLocked !== 'skip') throw error;
      if (error instanceof LockTimeoutError) return this.skip(name, mode, timeoutMs === 0 ? 'held' : 'timeout');
      if (error instanceof LockClientClosedError) return this.skip(name, mode, 'closing');
      throw error;
    }
  }

  private skip(name: string, mode: LockMode, reason: SkipReason): undefined {
    try {
      this.events.skipped?.({ name, mode, reason });
    } catch {
      // a listener's failure must not turn a quiet skip into an error
    }
    return undefined;
  }

  /** `pending`, with the error of a wait cut short by shutdown saying so. */
  private async closingAware<T>(name: string, pending: Promise<T>): Promise<T> {
    try {
      return await pending;
    } catch (error) {
      if (this.closing && error instanceof LockClientClosedError) {
        throw new LockClientClosedError(lockMessages.shuttingDown(name), { cause: error });
      }
      throw error;
    }
  }

  private reportLost(name: string, call: ResolvedWithLockOptions, grantedAt: number, error: LockLostError): void {
    try {
      this.events.lost?.({
        name,
        mode: call.mode,
        heldMs: Math.round(performance.now() - grantedAt),
        error,
        ignored: call.onLockLost === 'ignore',
      });
    } catch {
      // a listener's failure must not change the call's outcome
    }
  }

  /** Ends the chain's hold; the grant goes once nested holds end, and not before `delayMs`. */
  private async release(hold: ChainHold, delayMs: number): Promise<void> {
    try {
      await hold.settle();
      if (delayMs > 0 && hold.handle.isHeld() && !this.closing) this.deferred.schedule(hold.handle, delayMs);
      else await hold.handle.release();
    } catch {
      // a failed release loses to the caller's result or error
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

  /** `body`'s result, unless the lock was lost meanwhile (and the caller did not ignore that). */
  private async settle<T>(handle: LockHandle, body: Promise<T>, ignoreLoss: boolean): Promise<T> {
    const result = await body;
    if (!(ignoreLoss && handle.signal.aborted)) handle.assertHeld();
    return result;
  }

  private check(name: string, options: (AcquireOptions & ReentrancyOption) | undefined) {
    const resolved = resolveAcquireOptions(options, this.defaultTimeoutMs);
    resolveReentrant(options);
    encodeLockName(name); // throws InvalidLockNameError, also on the reentrant path
    return resolved;
  }

  private nested(outer: ChainHold, mode: LockMode, reentrant = true): ReentrantHandle {
    if (!reentrant) throw new LockReentryError(outer.handle.name);
    const { signal } = outer.handle;
    if (signal.aborted) throw signal.reason; // a lost lock is not re-entered
    if (outer.handle.mode === 'read' && mode === 'write') throw new LockUpgradeError(outer.handle.name);
    return outer.enter(mode);
  }
}
