import { setMaxListeners } from 'node:events';

import { type LockLostError, LockClientClosedError, LockTimeoutError, LockUnavailableError } from '../errors/errors.js';
import type { LockMode } from '../port/lock-backend.js';
import { lockMessages } from '../errors/messages.js';
import type { ResolvedWithLockOptions } from './call-options.js';

/**
 * Why `withLock(…, { ifLocked: 'skip' })` did not run its function; `own-hold`: a
 * `holdAtLeastMs` hold this instance's own last run left still keeps the lock;
 * `unavailable`: no ZooKeeper session was connected to ask (see `LockUnavailableError`).
 */
export type SkipReason = 'held' | 'own-hold' | 'timeout' | 'closing' | 'unavailable';

export interface LockSkippedEvent {
  readonly name: string;
  readonly mode: LockMode;
  readonly reason: SkipReason;
  /** For `unavailable`: the error, whose `unavailableSince` tells one outage from the next. */
  readonly error?: LockUnavailableError;
}

export interface LockLostEvent {
  readonly name: string;
  readonly mode: LockMode;
  /** From the grant to the moment the loss was seen. */
  readonly heldMs: number;
  readonly error: LockLostError;
  /** The call used `onLockLost: 'ignore'` and returns its result anyway. */
  readonly ignored: boolean;
}

/**
 * What a `ReentrantLocker` reports beside its results, for logs and metrics (the Nest
 * `LockService` logs them). Listeners must not throw; if one does, the error is dropped.
 */
export interface LockerEvents {
  skipped?(event: LockSkippedEvent): void;
  /** A lock was lost while a `withLock` function held it; called once, as soon as it is seen. */
  lost?(event: LockLostEvent): void;
}

/**
 * What a `ReentrantLocker` call does around the backend's answer: `ifLocked: 'skip'`
 * turns a taken lock (or shutdown, or no session to ask) into `undefined`, a wait cut short by shutdown says so,
 * and skips and losses are reported to the locker's listeners (which must not throw: a
 * listener's failure never changes a call's outcome).
 */
export class LockCallPolicy {
  private shuttingDown = false;
  private readonly shutdown = new AbortController();
  /** The errors `refuseIfClosing` threw: they already say why, `acquiring` passes them on as they are. */
  private readonly refusals = new WeakSet<Error>();

  constructor(
    private readonly events: LockerEvents,
    /** Whether a `holdAtLeastMs` hold of this instance's own keeps `name` now. */
    private readonly ownHold: (name: string) => boolean = () => false,
  ) {
    setMaxListeners(0, this.shutdown.signal); // one listener per call waiting out a kept hold
  }

  get closing(): boolean {
    return this.shuttingDown;
  }

  /** Aborts when shutdown begins: for waits of the locker's own (a kept hold's end). */
  get closingSignal(): AbortSignal {
    return this.shutdown.signal;
  }

  /**
   * Shutdown began: every call that would take a lock from now on is refused at once (skip
   * calls skip), and waits that fail say so. Only calls already under way may still hold.
   */
  close(): void {
    this.shuttingDown = true;
    this.shutdown.abort();
  }

  /**
   * Called right before a call asks the backend for a lock: once shutdown began, it throws
   * the `LockClientClosedError` that says so, and no node is created. Reentrant calls
   * (joining a grant the call chain holds) do not come here: they take nothing new.
   */
  refuseIfClosing(name: string): void {
    if (!this.shuttingDown) return;
    const refusal = new LockClientClosedError(lockMessages.refusedClosing(name));
    this.refusals.add(refusal);
    throw refusal;
  }

  get reportsLoss(): boolean {
    return this.events.lost !== undefined;
  }

  /** What `take` grants, or `undefined` when `ifLocked: 'skip'` lets the call go without it. */
  async granted<G>(name: string, call: ResolvedWithLockOptions, take: () => Promise<G>): Promise<G | undefined> {
    const { mode, timeoutMs } = call;
    if (call.ifLocked === 'skip' && this.shuttingDown) return this.skip(name, mode, 'closing');
    try {
      return await this.acquiring(name, take());
    } catch (error) {
      if (call.ifLocked !== 'skip') throw error;
      if (error instanceof LockTimeoutError)
        return this.skip(name, mode, this.ownHold(name) ? 'own-hold' : timeoutMs === 0 ? 'held' : 'timeout');
      if (error instanceof LockClientClosedError) return this.skip(name, mode, 'closing');
      if (error instanceof LockUnavailableError) return this.skip(name, mode, 'unavailable', error);
      throw error;
    }
  }

  /** `pending` (an acquire), with the error of a wait cut short by shutdown saying so. */
  async acquiring<T>(name: string, pending: Promise<T>): Promise<T> {
    try {
      return await pending;
    } catch (error) {
      if (this.shuttingDown && error instanceof LockClientClosedError && !this.refusals.has(error)) {
        throw new LockClientClosedError(lockMessages.shuttingDown(name), { cause: error });
      }
      throw error;
    }
  }

  lost(name: string, call: ResolvedWithLockOptions, grantedAt: number, error: LockLostError): void {
    try {
      this.events.lost?.({
        name,
        mode: call.mode,
        heldMs: Math.round(performance.now() - grantedAt),
        error,
        ignored: call.onLockLost === 'ignore',
      });
    } catch {
      // a listener's failure must not change the call's outcome
    }
  }

  private skip(name: string, mode: LockMode, reason: SkipReason, error?: LockUnavailableError): undefined {
    try {
      this.events.skipped?.(error ? { name, mode, reason, error } : { name, mode, reason });
    } catch {
      // a listener's failure must not turn a quiet skip into an error
    }
    return undefined;
  }
}
