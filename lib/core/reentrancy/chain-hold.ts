import { LockReentryError, LockUpgradeError } from '../errors/errors.js';
import type { LockHandle, LockMode } from '../port/lock-backend.js';
import { ReentrantHandle } from './reentrant-handle.js';

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
    if (!reentrant) throw new LockReentryError(this.handle.name);
    const { signal } = this.handle;
    if (signal.aborted) throw signal.reason;
    if (this.handle.mode === 'read' && mode === 'write') throw new LockUpgradeError(this.handle.name);
    return this.enter(mode);
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
