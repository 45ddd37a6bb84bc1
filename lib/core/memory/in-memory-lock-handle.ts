import { type LockLostError, LockRevocationRequestedError } from '../errors/errors.js';
import { assertHeld, type LockHandle, type LockMode } from '../port/lock-backend.js';

export interface InMemoryLockHandleInit {
  readonly name: string;
  readonly mode: LockMode;
  readonly fencingToken: bigint;
  readonly node: string;
  /** Takes the handle's entry out of the queue (if it is still there). */
  readonly onReleased: (handle: InMemoryLockHandle) => void;
  /** Acquired with `revocable: true`: `requestRevocation` reaches it. */
  readonly revocable?: boolean;
}

/** A lock granted by `InMemoryLockBackend`: one entry in its lock's queue. */
export class InMemoryLockHandle implements LockHandle {
  readonly name: string;
  readonly mode: LockMode;
  readonly fencingToken: bigint;
  /** The entry's name in the queue, as `contenders()` lists it (Kazoo's node format). */
  readonly node: string;
  private readonly lost = new AbortController();
  private releasing: Promise<void> | undefined;
  private revocationRequest: AbortController | undefined;

  constructor(private readonly init: InMemoryLockHandleInit) {
    ({ name: this.name, mode: this.mode, fencingToken: this.fencingToken, node: this.node } = init);
  }

  /** Aborts with a `LockLostError` when the lock is taken away (see the backend's test controls and `close()`). */
  get signal(): AbortSignal {
    return this.lost.signal;
  }

  get released(): boolean {
    return this.releasing !== undefined;
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
    if (!this.init.revocable || this.releasing) return;
    const request = (this.revocationRequest ??= new AbortController());
    if (!request.signal.aborted) request.abort(new LockRevocationRequestedError(this.name));
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

  /** Aborts the signal with `reason`, unless the holder released (or lost) the lock already. */
  revoke(reason: LockLostError): void {
    if (this.releasing || this.lost.signal.aborted) return;
    this.lost.abort(reason);
  }

  private async leave(): Promise<void> {
    this.init.onReleased(this);
  }
}
