import { LockReentryError, LockUpgradeError } from '../errors/errors.js';
import { type LockHandle, type LockMode, assertHeld } from '../port/lock-backend.js';

/**
 * One grant as an async call chain holds it: the grant's handle, and the nested holds
 * (reentrant acquires and `withLock` calls) taken under it. Like the hold count of
 * Curator's `InterProcessMutex`, the lock goes only when the last hold is released: work
 * the holder started but did not await, and that entered the lock again, keeps it held
 * after the holder returns, so it never runs inside the critical section while another
 * client is in it.
 */
export class ChainHold {
  private nested = 0;
  private outerDone = false;
  private idle: (() => void) | undefined;

  constructor(readonly handle: LockHandle) {}

  /** Whether the chain still holds the lock: it can be entered again. */
  get active(): boolean {
    return !this.handle.released && (!this.outerDone || this.nested > 0);
  }

  /** A nested hold in `mode`; its `release()` must be called (withLock does it). */
  enter(mode: LockMode): ReentrantHandle {
    this.nested++;
    return new ReentrantHandle(this.handle, mode, () => this.leave());
  }

  /**
   * A nested hold for a call of this chain that asks the lock again in `mode`, checked:
   * `LockReentryError` with `reentrant: false`, the loss if the lock was lost (a lost lock
   * is not re-entered), `LockUpgradeError` for `write` under `read`.
   */
  reenter(mode: LockMode, reentrant = true): ReentrantHandle {
    return this.joinable(mode, reentrant).enter(mode);
  }

  /** This hold, if a call of the chain may enter it in `mode`; throws as `reenter` does, entering nothing. */
  joinable(mode: LockMode, reentrant: boolean): this {
    if (!reentrant) throw new LockReentryError(this.handle.name);
    const { signal } = this.handle;
    if (signal.aborted) throw signal.reason; // a lost lock is not re-entered
    if (this.handle.mode === 'read' && mode === 'write') throw new LockUpgradeError(this.handle.name);
    return this;
  }

  /** The holder is done: releases the grant once every nested hold is released too. */
  async release(): Promise<void> {
    await this.settle();
    await this.handle.release();
  }

  /** The holder is done: resolves once every nested hold is released (the grant stays). */
  async settle(): Promise<void> {
    this.outerDone = true;
    if (this.nested > 0) await new Promise<void>((resolve) => (this.idle = resolve));
  }

  private leave(): void {
    if (--this.nested === 0) this.idle?.();
  }
}

/**
 * What a nested acquire of a lock the call chain already holds returns: the outer grant's
 * token and signal, no node of its own, and a release that ends this hold only (the grant
 * goes when its last hold is released, see `ChainHold`).
 */
export class ReentrantHandle implements LockHandle {
  private done = false;

  constructor(
    private readonly outer: LockHandle,
    readonly mode: LockMode,
    private readonly onRelease: () => void,
  ) {}

  get name(): string {
    return this.outer.name;
  }

  get fencingToken(): bigint {
    return this.outer.fencingToken;
  }

  get signal(): AbortSignal {
    return this.outer.signal;
  }

  /** The outer grant's: whether it is revocable was decided by the call that took it. */
  get revocation(): AbortSignal {
    return this.outer.revocation;
  }

  get released(): boolean {
    return this.done || this.outer.released;
  }

  /** The outer grant's: a nested hold has no node of its own, the grant's goes with its last hold. */
  get releaseConfirmed(): Promise<void> {
    return this.outer.releaseConfirmed;
  }

  isHeld(): boolean {
    return !this.released && !this.signal.aborted;
  }

  assertHeld(): void {
    assertHeld(this);
  }

  async release(): Promise<void> {
    this.end();
  }

  /** `release()` without a promise, for the nested `withLock` on its hot path. */
  end(): void {
    if (this.done) return;
    this.done = true;
    this.onRelease();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}
