import type { LockHandle } from '../recipe/lock-backend.interface.js';
import type { LockMode } from '../recipe/lock-mode.js';

/**
 * What a nested acquire of a lock the call chain already holds returns: the outer grant's
 * token and signal, no node of its own, and a release that leaves the outer grant alone.
 */
export class ReentrantHandle implements LockHandle {
  private done = false;

  constructor(
    private readonly outer: LockHandle,
    readonly mode: LockMode,
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

  get released(): boolean {
    return this.done || this.outer.released;
  }

  async release(): Promise<void> {
    this.done = true;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}
