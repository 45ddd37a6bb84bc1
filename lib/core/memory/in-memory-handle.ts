import { type LockLostError, LockRevocationRequestedError } from '../errors/errors.js';
import {
  assertHeld,
  type HoldExpiry,
  type KeptRelease,
  type LeaseHandle,
  type LockHandle,
  type LockMode,
} from '../port/lock-backend.js';
import { longTimeout, type LongTimeout } from '../util/long-timeout.js';
import type { LeaseEntry, LockEntry, QueueEntry } from './in-memory-queue.js';

/**
 * What a lock and a lease granted by `InMemoryLockBackend` share: one entry in a queue,
 * which `release()` takes out at once, and a signal the backend aborts when it takes the
 * entry away (its test controls, `close()`).
 */
export abstract class InMemoryHandle implements AsyncDisposable, HoldExpiry {
  readonly name: string;
  /** The entry's name in the queue, as `contenders()` (or `leaseContenders()`) lists it. */
  readonly node: string;
  private readonly lost = new AbortController();
  private releasing: Promise<void> | undefined;
  private confirmation: Promise<void> | undefined;
  private confirmLater: (() => void) | undefined;
  /** The `maxHoldMs` timer, if the call set one; cleared by the release or a loss. */
  private maxHold: LongTimeout | undefined;

  constructor(
    entry: QueueEntry,
    /** Takes the handle's entry out of the queue (if it is still there). */
    private readonly onReleased: (handle: InMemoryHandle) => void,
    /** Tells the holder, then takes the entry away: the handle was held past `maxHoldMs`. */
    private readonly onHeldTooLong: (handle: InMemoryHandle, maxHoldMs: number) => void,
  ) {
    ({ name: this.name, node: this.node } = entry);
  }

  /** Aborts with a `LockLostError` when the entry is taken away. */
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

  /** Nothing to confirm in memory: settles with the release, which is at once. */
  get releaseConfirmed(): Promise<void> {
    return this.releasing ?? this.whenReleased();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }

  /** Aborts the signal with `reason`, unless the holder released (or lost) it already. */
  revoke(reason: LockLostError): void {
    if (this.releasing || this.lost.signal.aborted) return;
    this.maxHold?.clear();
    this.lost.abort(reason);
  }

  /** Runs `holdExpired` once the handle has been held `maxHoldMs`, unless it was released or lost before. */
  limitHold(maxHoldMs: number): void {
    this.maxHold = longTimeout(() => this.holdExpired(maxHoldMs), maxHoldMs);
  }

  /** @internal Held past `maxHoldMs` (its own, or its group's): the backend tells the holder, then takes the entry away. */
  holdExpired(maxHoldMs: number): void {
    if (this.isHeld()) this.onHeldTooLong(this, maxHoldMs);
  }

  private async leave(): Promise<void> {
    this.maxHold?.clear();
    this.onReleased(this);
    this.confirmLater?.();
  }

  /** `releaseConfirmed` before `release()`: one promise, settled by the release. */
  private whenReleased(): Promise<void> {
    return (this.confirmation ??= new Promise<void>((resolve) => (this.confirmLater = resolve)));
  }
}

/** A lock granted by `InMemoryLockBackend`: one entry in its lock's queue. */
export class InMemoryLockHandle extends InMemoryHandle implements LockHandle, KeptRelease {
  readonly mode: LockMode;
  private revocationRequest: AbortController | undefined;

  constructor(
    entry: LockEntry,
    readonly fencingToken: bigint,
    /** Acquired with `revocable: true`: `requestRevocation` reaches it. */
    private readonly revocable: boolean,
    onReleased: (handle: InMemoryHandle) => void,
    onHeldTooLong: (handle: InMemoryHandle, maxHoldMs: number) => void,
    /** Puts a kept hold of `holdMs` on the lock, its entry still in the queue. */
    private readonly keep: (handle: InMemoryLockHandle, holdMs: number) => void,
  ) {
    super(entry, onReleased, onHeldTooLong);
    this.mode = entry.mode;
  }

  /** The kept hold first, then the release, in one tick: nobody is granted between. */
  async releaseKeeping(holdMs: number): Promise<boolean> {
    if (!this.isHeld()) return false;
    this.keep(this, holdMs);
    await this.release();
    return true;
  }

  /**
   * Aborts with a `LockRevocationRequestedError` when `requestRevocation` asks this lock's
   * holders to release it (`revocable: true` only; for others it never aborts).
   */
  get revocation(): AbortSignal {
    return (this.revocationRequest ??= new AbortController()).signal;
  }

  /** The backend's call when this holder is asked to release; ignored once released or not revocable. */
  revocationRequested(): void {
    if (!this.revocable || this.released) return;
    const request = (this.revocationRequest ??= new AbortController());
    if (!request.signal.aborted) request.abort(new LockRevocationRequestedError(this.name));
  }
}

/** A lease granted by `InMemoryLockBackend`: one entry among the first `maxLeases` of its semaphore. */
export class InMemoryLeaseHandle extends InMemoryHandle implements LeaseHandle {
  constructor(
    entry: LeaseEntry,
    readonly maxLeases: number,
    readonly fencingToken: bigint,
    onReleased: (handle: InMemoryHandle) => void,
    onHeldTooLong: (handle: InMemoryHandle, maxHoldMs: number) => void,
  ) {
    super(entry, onReleased, onHeldTooLong);
  }
}
