import type { LockHandle } from '../port/lock-backend.js';

/**
 * What a member reads of a part it owns (`Partitioner.handle(part)`), to pass to its I/O:
 * one object per ownership, which never turns into the next one's.
 */
export interface PartitionHandle<P extends number | string = number | string> {
  readonly group: string;
  readonly part: P;
  /**
   * The part lock's fencing token (see `LockHandle.fencingToken`): it rises with every new
   * owner of the part, across members. Pass it with every write (e.g. to `PgFence`).
   */
  readonly fencingToken: bigint;
  /**
   * Aborts, with a `LockLostError`, when this ownership ends: the lock lost (before any
   * other member can be granted it), or released after a revocation. Each read checks
   * the lock against the clock first.
   */
  readonly signal: AbortSignal;
  /** Not ended, and the lock held at this moment. */
  isHeld(): boolean;
  /** Throws the ownership's `LockLostError` if it has ended (checked against the clock). */
  assertHeld(): void;
}

/**
 * One ownership of a part: the held part lock, and a signal of its own that aborts when
 * the ownership ends, lost (with the lock's `LockLostError`, `onLost` told at once) or
 * released after a revocation. A signal of its own, since a lock handle's does not abort
 * when its holder releases it.
 */
export class OwnedPart {
  private readonly ended = new AbortController();
  readonly view: PartitionHandle;

  constructor(
    group: string,
    part: number | string,
    readonly handle: LockHandle,
    onLost: (reason: Error) => void,
  ) {
    const lost = handle.signal;
    const ended = this.ended;
    lost.addEventListener(
      'abort',
      () => {
        if (ended.signal.aborted) return;
        ended.abort(lost.reason);
        onLost(lost.reason as Error);
      },
      { once: true },
    );
    this.view = Object.freeze({
      group,
      part,
      fencingToken: handle.fencingToken,
      get signal() {
        handle.isHeld(); // a lock lost by now tells its loss before this returns
        return ended.signal;
      },
      isHeld: () => handle.isHeld() && !ended.signal.aborted,
      assertHeld: () => {
        handle.isHeld();
        if (ended.signal.aborted) throw ended.signal.reason;
      },
    });
  }

  /** Whether the lock was lost (its signal aborted), checked against the clock. */
  get isLost(): boolean {
    return !this.handle.isHeld() && this.handle.signal.aborted;
  }

  /** Ends the ownership (idempotent): the signal aborts with `reason`. */
  end(reason: Error): void {
    if (!this.ended.signal.aborted) this.ended.abort(reason);
  }
}
