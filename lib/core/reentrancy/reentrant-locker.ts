import {
  canKeepHold,
  type MultiAcquireOptions,
  type LockList,
  type MultiLockHandle,
  type AcquireOptions,
  type LockBackend,
  type LockHandle,
  type LeaseHandle,
} from '../port/lock-backend.js';
import { resolveAcquireOptions, resolveLeaseOptions, resolveMaxHoldMs } from '../port/options.js';
import { encodeLockName } from '../naming/lock-name-codec.js';
import { PendingWork } from '../util/pending-work.js';
import { ChainHold, type ReentrantHandle } from './chain-hold.js';
import { DeferredReleases } from './deferred-releases.js';
import { KeptHolds, type JobStart } from './kept-holds.js';
import type { JobOutcome } from '../port/job-record.js';
import { heldInScope, runInScope, scopeKeyOf } from './lock-scope.js';
import { LockCallPolicy, type LockerEvents } from './lock-call-policy.js';
import { ReentrantMultiLocker } from './reentrant-multi-locker.js';
import { refuseLost, watchLoss } from './loss-watch.js';
import {
  resolveReentrant,
  type LeaseCallOptions,
  type ReentrancyOption,
  resolveWithLockOptions,
  type ResolvedWithLockOptions,
  type RunAlwaysOptions,
  type WithLockCallOptions,
  type WithLocksCallOptions,
} from './call-options.js';

/** A `withLock` grant, with its job's record when the call keeps one. */
interface Granted {
  readonly handle: LockHandle;
  readonly job?: JobStart;
}

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
  private readonly kept: KeptHolds;
  private readonly multi: ReentrantMultiLocker;
  private readonly policy: LockCallPolicy;
  private defaults: ResolvedWithLockOptions;
  private readonly defaultMaxHoldMs: number | undefined;
  private readonly defaultTimeout: () => number;
  /** `scopeKeyOf(backend, name)` is this prefix and the name. */
  private readonly scopePrefix: string;

  constructor(
    private readonly backend: LockBackend,
    /** The `timeoutMs` of calls that name none; a function is read at each call (the Nest module's default follows the session's timeout). */
    defaultTimeoutMs: number | (() => number),
    events: LockerEvents = {},
    /** The `maxHoldMs` of `acquire`, `tryAcquire`, `withLock`, `acquireAll`, `withLocks`, `acquireLease`, `withLease` calls that name none. */
    defaultMaxHoldMs?: number,
  ) {
    this.defaultTimeout = typeof defaultTimeoutMs === 'function' ? defaultTimeoutMs : () => defaultTimeoutMs;
    this.defaultMaxHoldMs = resolveMaxHoldMs(defaultMaxHoldMs);
    this.policy = new LockCallPolicy(events, (name) => this.kept.keeps(name) || this.deferred.holds(name));
    this.kept = new KeptHolds(backend, this.policy.closingSignal);
    this.defaults = resolveWithLockOptions(this.withDefaultMaxHold(undefined), this.defaultTimeoutMs);
    this.scopePrefix = scopeKeyOf(backend, '');
    this.multi = new ReentrantMultiLocker(backend, this.defaultTimeout, this.bodies, this.policy, this.deferred);
  }

  private get defaultTimeoutMs(): number {
    return this.defaultTimeout();
  }

  /** The options of a call that names none, resolved again only when the default timeout moved. */
  private defaultCall(): ResolvedWithLockOptions {
    const timeoutMs = this.defaultTimeoutMs;
    if (this.defaults.timeoutMs !== timeoutMs) this.defaults = { ...this.defaults, timeoutMs };
    return this.defaults;
  }

  /**
   * Runs `fn` holding the lock and releases it when `fn` returns or throws (and every
   * nested hold `fn` started is released). Rejects with the `LockLostError` if the lock was
   * lost while `fn` ran, even if `fn` returned: its work was not done under the lock
   * (unless `onLockLost: 'ignore'`). A grant already lost when `fn` would start (the event
   * loop was blocked past the session as it came) is released and the call rejects with
   * its `LockLostError`, whatever `ifLocked` and `onLockLost` say: `fn` never starts.
   * With `ifLocked: 'skip'`, resolves `undefined` without running `fn` when another
   * holder has the lock.
   */
  withLock<T>(name: string, fn: (handle: LockHandle) => T | Promise<T>, options?: RunAlwaysOptions): Promise<T>;
  withLock<T>(
    name: string,
    fn: (handle: LockHandle) => T | Promise<T>,
    options: WithLockCallOptions,
  ): Promise<T | undefined>;
  async withLock<T>(
    name: string,
    fn: (handle: LockHandle) => T | Promise<T>,
    options?: WithLockCallOptions,
  ): Promise<T | undefined> {
    // Nested calls without options are the hot path of reentrancy: their defaults are resolved once.
    const call =
      options === undefined
        ? this.defaultCall()
        : resolveWithLockOptions(this.withDefaultMaxHold(options), this.defaultTimeoutMs);
    encodeLockName(name); // after the options, as the backends check them
    const key = this.scopePrefix + name;
    const outer = heldInScope(key);
    if (outer) return this.runNested(outer.reenter(call.mode, call.reentrant), fn);
    // A job keeps a record (its kept hold, its last runs); the module's default maxHoldMs alone does not make one.
    const isJob = call.holdAtLeastMs > 0 || options?.maxHoldMs !== undefined;
    const granted = await this.grant(name, call, isJob);
    if (!granted) return undefined;
    const { handle, job } = granted;
    // Checked against the clock right before the body, in the same synchronous run.
    if (!handle.isHeld()) return refuseLost(handle);
    const grantedAt = performance.now();
    const stopWatching = this.policy.reportsLoss
      ? watchLoss(handle, (error) => this.policy.lost(name, call, grantedAt, error))
      : undefined;
    const hold = new ChainHold(handle);
    const body = runInScope(key, hold, async () => fn(handle));
    void this.bodies.track(body.catch(() => undefined));
    let threw = true;
    try {
      const result = await this.settle(handle, body, call.onLockLost === 'ignore');
      threw = false;
      return result;
    } finally {
      stopWatching?.();
      await this.release(
        hold,
        call,
        grantedAt,
        job && { job, outcome: this.outcomeOf(handle, call, grantedAt, threw) },
      );
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
      return await this.settle(
        handle,
        runInScope(this.scopePrefix + handle.name, hold, async () => fn()),
        false,
      );
    } finally {
      await hold.settle();
    }
  }

  /**
   * A handle; reentrant (no node, no wait) if this call chain already holds the lock, or
   * `LockReentryError` then with `reentrant: false`. A reentrant call joins the outer grant
   * as it is: its `maxHoldMs` is not read (the grant's own, from the call that took it,
   * applies, and its clock does not restart). The same holds for nested `withLock`.
   */
  async acquire(name: string, options?: AcquireOptions & ReentrancyOption): Promise<LockHandle> {
    const resolved = this.check(name, options);
    const outer = heldInScope(this.scopePrefix + name);
    if (outer) return outer.reenter(resolved.mode, resolveReentrant(options));
    this.policy.refuseIfClosing(name);
    return this.policy.acquiring(name, this.backend.acquire(name, resolved));
  }

  /** Like `acquire`, but resolves `null` at once instead of waiting for another holder. */
  async tryAcquire(
    name: string,
    options?: Omit<AcquireOptions, 'timeoutMs'> & ReentrancyOption,
  ): Promise<LockHandle | null> {
    const { mode, signal, revocable, nodeFormat, maxHoldMs, release } = this.check(name, options);
    const outer = heldInScope(this.scopePrefix + name);
    if (outer) return outer.reenter(mode, resolveReentrant(options));
    this.policy.refuseIfClosing(name);
    return this.policy.acquiring(
      name,
      this.backend.tryAcquire(name, { mode, signal, revocable, nodeFormat, maxHoldMs, release }),
    );
  }

  /**
   * Every lock of `locks` at once, all or nothing, without deadlock whatever order callers
   * list them in (see `acquireAll` in core/multi). Names this call chain holds are joined
   * (no node, no wait); read held and write asked fails at once with `LockUpgradeError`
   * (`LockReentryError` with `reentrant: false`). The names it must still take must all
   * sort after every lock the chain holds, listed or not, or it fails at once with
   * `LockOrderError` (waiting for them could deadlock). Without `timeoutMs`, waits the
   * locker's default timeout. `maxHoldMs` (or the locker's default) limits the locks it
   * takes, from the moment the whole group is held; joined names keep their outer grant's.
   */
  acquireAll(locks: LockList, options?: MultiAcquireOptions & ReentrancyOption): Promise<MultiLockHandle> {
    return this.multi.acquireAll(locks, this.withDefaultMaxHold(options));
  }

  /**
   * `withLock` for several locks: runs `fn` holding all of `locks` (taken as `acquireAll`
   * takes them) with every name in scope, so nested calls on any of them are reentrant;
   * releases them when `fn` settles and its nested holds end. Rejects with the
   * `LockLostError` if any lock was lost while `fn` ran (unless `onLockLost: 'ignore'`).
   * `ifLocked`, `holdAtLeastMs` and `maxHoldMs` work as for `withLock` (`maxHoldMs` as for
   * `acquireAll`: its clock starts once the whole group is held).
   */
  withLocks<T>(
    locks: LockList,
    fn: (handle: MultiLockHandle) => T | Promise<T>,
    options?: WithLocksCallOptions & { readonly ifLocked?: 'wait' | 'throw' },
  ): Promise<T>;
  withLocks<T>(
    locks: LockList,
    fn: (handle: MultiLockHandle) => T | Promise<T>,
    options: WithLocksCallOptions,
  ): Promise<T | undefined>;
  withLocks<T>(
    locks: LockList,
    fn: (handle: MultiLockHandle) => T | Promise<T>,
    options?: WithLocksCallOptions,
  ): Promise<T | undefined> {
    return this.multi.withLocks(locks, fn, this.withDefaultMaxHold(options));
  }

  /**
   * One of `maxLeases` leases on `name` (a counting semaphore shared by every client).
   * Without `timeoutMs`, waits the locker's default timeout. Not reentrant: each call
   * takes one more.
   */
  async acquireLease(name: string, options: LeaseCallOptions): Promise<LeaseHandle> {
    const resolved = resolveLeaseOptions(this.withDefaultMaxHold(options), this.defaultTimeoutMs);
    const { maxLeases, timeoutMs, signal, maxHoldMs, release } = resolved;
    this.policy.refuseIfClosing(name);
    return this.policy.acquiring(
      name,
      this.backend.acquireLease(name, { maxLeases, timeoutMs, signal, maxHoldMs, release }),
    );
  }

  /**
   * Runs `fn(lease)` holding one lease of `name`; releases it when `fn` settles; rejects
   * with `LockLostError` if the lease was lost meanwhile, or already when `fn` would start
   * (then `fn` never starts). Leases are not reentrant: each call takes one more.
   */
  async withLease<T>(name: string, fn: (lease: LeaseHandle) => T | Promise<T>, options: LeaseCallOptions): Promise<T> {
    const lease = await this.acquireLease(name, options);
    if (!lease.isHeld()) return refuseLost(lease);
    const body = (async () => fn(lease))();
    void this.bodies.track(body.catch(() => undefined));
    try {
      const result = await body;
      lease.assertHeld(); // lost while fn ran: its work was not done under the lease
      return result;
    } finally {
      await lease.release().catch(() => undefined); // a failed release loses to fn's outcome
    }
  }

  /** The handle this call chain holds for `name`, if any (e.g. to read its fencing token). */
  held(name: string): LockHandle | undefined {
    return heldInScope(this.scopePrefix + name)?.handle;
  }

  /**
   * Shutdown begins: waits under way fail (`ifLocked: 'skip'` calls resolve `undefined`),
   * and every call that would take a lock from now on is refused at once, with a
   * `LockClientClosedError` that says the client is shutting down. Bodies already running
   * keep their locks (and reentrant calls inside them still join them) until `drain`.
   */
  async cancelWaits(): Promise<void> {
    this.policy.close();
    await this.backend.cancelWaits();
  }

  /**
   * Waits until no `withLock` body runs, or `timeoutMs` passed; resolves whether they all
   * ended. Then releases at once the locks `holdAtLeastMs` still keeps in this process
   * (`withLocks`, and a `withLock` whose kept hold could not be put in the backend); holds
   * kept in the backend (its markers, its records) stay.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    try {
      return await this.bodies.drainWithin(timeoutMs);
    } finally {
      await this.deferred.flush();
    }
  }

  /**
   * The grant, or `undefined` when `ifLocked: 'skip'` lets the call go without it. A job's
   * grant comes with its record, read once granted; a hold still in force in it counts as
   * the lock being held (see `KeptHolds.begin`): the grant is released and the call
   * skips, throws or waits as it would for a holder.
   */
  private grant(name: string, call: ResolvedWithLockOptions, isJob: boolean): Promise<Granted | undefined> {
    const { mode, timeoutMs, signal, revocable, nodeFormat, maxHoldMs, release } = call;
    const calledAt = performance.now();
    return this.policy.granted(name, call, async () => {
      this.policy.refuseIfClosing(name);
      const handle = await this.backend.acquire(name, {
        mode,
        timeoutMs,
        signal,
        revocable,
        nodeFormat,
        maxHoldMs,
        release,
      });
      if (!isJob) return { handle };
      try {
        return { handle, job: await this.kept.begin(handle, call, calledAt) };
      } catch (error) {
        await handle.release().catch(() => undefined);
        throw error;
      }
    });
  }

  /**
   * Ends the chain's hold; the grant goes once nested holds end. A job writes its run (and
   * the hold left, if any) into its record first. With hold time left, the grant goes
   * leaving a kept hold behind, which every acquirer of the name honours (`releaseKeeping`);
   * if the backend could not put one in place (or has none, and the record write failed),
   * the grant stays held here until `holdAtLeastMs` passed.
   */
  private async release(
    hold: ChainHold,
    call: ResolvedWithLockOptions,
    startedAt: number,
    end: { job: JobStart; outcome: JobOutcome } | undefined,
  ): Promise<void> {
    const { handle } = hold;
    try {
      await hold.settle();
      const { holdAtLeastMs } = call;
      const recorded =
        end && (await this.kept.finish(handle, end.job, { outcome: end.outcome, startedAt, holdAtLeastMs }));
      const leftMs = startedAt + holdAtLeastMs - performance.now();
      if (leftMs <= 0 || !handle.isHeld() || this.policy.closing) return await handle.release();
      if (canKeepHold(handle)) {
        if (await handle.releaseKeeping(leftMs)) return;
      } else if (recorded) return await handle.release(); // a backend without kept holds: job calls read the record
      this.deferred.schedule(handle, startedAt + holdAtLeastMs - performance.now());
    } catch {
      // a failed release loses to the caller's result or error
    }
  }

  /** How a job's function ended, for its record: a loss past the call's own `maxHoldMs` is that limit's doing. */
  private outcomeOf(handle: LockHandle, call: ResolvedWithLockOptions, grantedAt: number, threw: boolean): JobOutcome {
    if (!handle.signal.aborted) return threw ? 'error' : 'ok';
    const { maxHoldMs } = call;
    return maxHoldMs !== undefined && performance.now() - grantedAt >= maxHoldMs ? 'max-hold' : 'lost';
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

  /** `options` with the locker's default `maxHoldMs` when they name none (a call's own wins). */
  private withDefaultMaxHold<O extends { readonly maxHoldMs?: number }>(options: O): O;
  private withDefaultMaxHold<O extends { readonly maxHoldMs?: number }>(options: O | undefined): O | undefined;
  private withDefaultMaxHold<O extends { readonly maxHoldMs?: number }>(options: O | undefined): O | undefined {
    if (this.defaultMaxHoldMs === undefined || options?.maxHoldMs !== undefined) return options;
    // A non-object stays as it is, for the checks to refuse it.
    if (options !== undefined && (options === null || typeof options !== 'object')) return options;
    return { ...options, maxHoldMs: this.defaultMaxHoldMs } as O;
  }

  private check(name: string, options: (AcquireOptions & ReentrancyOption) | undefined) {
    const resolved = resolveAcquireOptions(this.withDefaultMaxHold(options), this.defaultTimeoutMs);
    resolveReentrant(options);
    encodeLockName(name); // throws InvalidLockNameError, also on the reentrant path
    return resolved;
  }
}
