import {
  canExpireHold,
  type LockHandle,
  type MultiAcquireOptions,
  type MultiLockHandle,
} from '../port/lock-backend.js';
import { longTimeout, type LongTimeout } from '../util/long-timeout.js';
import type { PlannedLock } from './multi-lock-plan.js';

/**
 * How a backend sends the requests of several locks together (ZooKeeper: one transaction
 * for all the creates, one for all the deletes). Optional: without it, each lock is tried
 * and released on its own, all at the same time.
 */
export interface LockGroupRequests {
  /**
   * Tries every lock of `locks` at once, never waiting for a holder: per lock, its handle
   * or `null` (taken elsewhere). `signals`: one per lock, each try's own; `options`, every lock's.
   */
  tryAll(
    locks: readonly PlannedLock[],
    signals: readonly AbortSignal[],
    options: Pick<MultiAcquireOptions, 'nodeFormat' | 'release'>,
  ): Promise<Array<PromiseSettledResult<LockHandle | null>>>;
  /** Releases every handle of `handles`; settles once each release has. */
  releaseAll(handles: readonly LockHandle[]): Promise<Array<PromiseSettledResult<void>>>;
}

/** The `MultiLockHandle` of any backend: a frozen list of handles, held and released together. */
export class LockGroupHandle implements MultiLockHandle {
  readonly handles: readonly LockHandle[];
  readonly names: readonly string[];
  /** Made on first use of `signal`, as single handles do: most holders never look at it. */
  private lost: AbortController | undefined;
  private unsubscribe: (() => void) | undefined;
  private releasing: Promise<void> | undefined;
  /** The group's `maxHoldMs`, armed at the grant; cleared by the release. */
  private readonly maxHold: LongTimeout | undefined;
  private confirmation: Promise<void> | undefined;

  /**
   * `together`: the backend's way to release the handles in one go (see `LockGroupRequests`).
   * `maxHoldMs`: the group's limit, from now (every handle must then be a `HoldExpiry`).
   */
  constructor(
    handles: readonly LockHandle[],
    private readonly together?: Pick<LockGroupRequests, 'releaseAll'>,
    maxHoldMs?: number,
  ) {
    this.handles = Object.freeze([...handles]);
    this.names = Object.freeze(handles.map((handle) => handle.name));
    if (maxHoldMs !== undefined) this.maxHold = longTimeout(() => this.holdExpired(maxHoldMs), maxHoldMs);
  }

  /**
   * Aborts with the first lost lock's `LockLostError`. Each read reads every lock's own
   * signal, so a ZooKeeper lock whose session deadline passed while the event loop was
   * blocked shows as lost at once, as on a single handle.
   */
  get signal(): AbortSignal {
    const signals = this.handles.map((handle) => handle.signal);
    if (!this.lost) {
      this.lost = new AbortController();
      const aborted = signals.find((signal) => signal.aborted);
      if (aborted) this.lost.abort(aborted.reason);
      else if (!this.releasing) this.unsubscribe = this.follow(signals, this.lost);
    }
    return this.lost.signal;
  }

  get released(): boolean {
    return this.releasing !== undefined;
  }

  isHeld(): boolean {
    return !this.released && this.handles.every((handle) => handle.isHeld());
  }

  assertHeld(): void {
    for (const handle of this.handles) handle.assertHeld();
  }

  /** Settles once every lock's release is confirmed (see `MultiLockHandle.releaseConfirmed`). */
  get releaseConfirmed(): Promise<void> {
    return (this.confirmation ??= Promise.all(this.handles.map((handle) => handle.releaseConfirmed)).then(
      () => undefined,
    ));
  }

  /**
   * Resolves when every lock's release has (sent, or confirmed: as the call that took them
   * said). Calling it again returns the first call's promise.
   */
  release(): Promise<void> {
    return (this.releasing ??= this.releaseAll());
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }

  private async releaseAll(): Promise<void> {
    this.unsubscribe?.();
    this.maxHold?.clear();
    // Every release starts before the first is awaited: the deletes travel together.
    const results = await (this.together?.releaseAll(this.handles) ??
      Promise.allSettled(this.handles.map((handle) => handle.release())));
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /**
   * Held past the group's `maxHoldMs`: each lock runs out as a single lock held past its own
   * does (its signal aborts, then it is released), all in this one synchronous run: the
   * holder is told (the group's signal follows the first) before any other client can be
   * granted any of them.
   */
  private holdExpired(maxHoldMs: number): void {
    for (const handle of this.handles) if (canExpireHold(handle)) handle.holdExpired(maxHoldMs);
  }

  /** Aborts `lost` with the reason of the first of `signals` to abort; returns the unsubscribe. */
  private follow(signals: readonly AbortSignal[], lost: AbortController): () => void {
    const onAbort = (event: Event): void => {
      stop();
      lost.abort((event.target as AbortSignal).reason);
    };
    const stop = (): void => {
      for (const signal of signals) signal.removeEventListener('abort', onAbort);
    };
    for (const signal of signals) signal.addEventListener('abort', onAbort, { once: true });
    return stop;
  }
}
