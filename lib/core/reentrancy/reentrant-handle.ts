import { assertHeld, type LockHandle, type LockMode } from '../port/lock-backend.js';

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
