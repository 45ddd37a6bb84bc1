import type { LockLostError } from '../errors/errors.js';
import { assertHeld, type LeaseHandle } from '../port/lock-backend.js';

export interface InMemoryLeaseHandleInit {
  readonly name: string;
  readonly maxLeases: number;
  readonly node: string;
  /** Takes the handle's entry out of the queue (if it is still there). */
  readonly onReleased: (handle: InMemoryLeaseHandle) => void;
}

/** A lease granted by `InMemoryLockBackend`: one entry among the first `maxLeases` of its semaphore. */
export class InMemoryLeaseHandle implements LeaseHandle {
  readonly name: string;
  readonly maxLeases: number;
  /** The entry's name in the queue, as `leaseContenders()` lists it. */
  readonly node: string;
  private readonly lost = new AbortController();
  private releasing: Promise<void> | undefined;

  constructor(private readonly init: InMemoryLeaseHandleInit) {
    ({ name: this.name, maxLeases: this.maxLeases, node: this.node } = init);
  }

  /** Aborts with a `LockLostError` when the lease is taken away (the backend's test controls, `close()`). */
  get signal(): AbortSignal {
    return this.lost.signal;
  }

  get released(): boolean {
    return this.releasing !== undefined;
  }

  isHeld(): boolean {
    return !this.released && !this.signal.aborted;
  }

  assertHeld(): void {
    assertHeld(this);
  }

  /** Leaves the queue at once; calling it again returns the first call's promise. */
  release(): Promise<void> {
    return (this.releasing ??= this.leave());
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }

  /** Aborts the signal with `reason`, unless the holder released (or lost) the lease already. */
  revoke(reason: LockLostError): void {
    if (this.releasing || this.lost.signal.aborted) return;
    this.lost.abort(reason);
  }

  private async leave(): Promise<void> {
    this.init.onReleased(this);
  }
}
