import type { LockHandle } from '../port/lock-backend.js';
import { PendingWork } from '../util/pending-work.js';

/**
 * What a leader reads of one term of its leadership, to pass to its I/O: one object per
 * term, which never turns into the next term's (see `LeaderElection.term`).
 */
export interface LeaderTerm {
  readonly group: string;
  /**
   * The leader lock's fencing token (see `LockHandle.fencingToken`): it rises with every
   * term, across instances. Pass it with every write, and have the resource refuse a
   * token lower than the highest it has seen.
   */
  readonly fencingToken: bigint;
  /**
   * Aborts, with a `LockLostError`, when the term ends: the lock lost, or the instance
   * stepped down. Each read checks the lock against the clock first.
   */
  readonly signal: AbortSignal;
  /** Not ended, and the lock held at this moment. */
  readonly isLeading: boolean;
  /** Throws the term's `LockLostError` if it has ended (checked against the clock). */
  assertLeading(): void;
}

/**
 * One term of leadership: the held leader lock, and a signal of its own that aborts when
 * the term ends, either because the lock was lost (with the lock's `LockLostError`) or
 * because the instance stepped down. A signal of its own, because stepping down must
 * tell the leader before its lock is released, and a lock handle's signal cannot be
 * aborted by its holder.
 */
export class LeadershipTerm {
  private readonly ended = new AbortController();
  private releasing: Promise<void> | undefined;
  /** The leader-only work started under this term (`runAsLeader`), until it settles. */
  private readonly work = new PendingWork();
  private resolveFinished!: () => void;
  /** Resolves once the term has ended and its lock has been released. */
  readonly finished = new Promise<void>((resolve) => (this.resolveFinished = resolve));
  private resolveTold!: () => void;
  /** Resolves once the term has ended (its signal aborted), its lock released or not yet. */
  readonly told = new Promise<void>((resolve) => (this.resolveTold = resolve));
  /** What users may read of the term: not the handle, nor `end()`. */
  readonly view: LeaderTerm;

  /** `onEnd` runs once, synchronously, when a term that began leading ends. */
  constructor(
    readonly group: string,
    readonly handle: LockHandle,
    private readonly onEnd: (reason: Error) => void,
  ) {
    const lost = handle.signal;
    // A grant can be born lost (an event loop blocked past the session's deadline): then
    // the term never leads, and nobody is told of an end.
    if (lost.aborted) {
      this.ended.abort(lost.reason);
      this.resolveTold();
    } else lost.addEventListener('abort', () => void this.end(lost.reason as Error, true), { once: true });
    this.view = termView(this);
  }

  /**
   * Aborts when the term ends. Each read checks the lock against the clock first (see
   * `LockHandle.signal`), so a lock that is lost by now ends the term before this returns.
   */
  get signal(): AbortSignal {
    this.handle.isHeld();
    return this.ended.signal;
  }

  /** Not ended, and the lock held at this moment. */
  get isLeading(): boolean {
    return !this.ended.signal.aborted && this.handle.isHeld();
  }

  /** Tracks leader-only work started under this term: a lost term's lock waits for it. */
  track(work: Promise<unknown>): void {
    void this.work.track(work);
  }

  /**
   * Ends the term (idempotent): the signal aborts with `reason` and `onEnd` runs first,
   * then the lock is released, so the next candidate leads only after this one was told.
   * `lost` (the lock's session at risk): released once the work started under the term
   * settled, so that no other candidate leads while it still runs.
   */
  end(reason: Error, lost = false): Promise<void> {
    if (!this.ended.signal.aborted) {
      this.ended.abort(reason);
      this.onEnd(reason);
      this.resolveTold();
    }
    // A lost lock is released too: after a short partition its session may live on, and
    // its node would then block every other candidate for as long as the session lasts.
    this.releasing ??= (lost ? this.work.drain() : Promise.resolve())
      .then(() => this.handle.release())
      .then(this.resolveFinished, this.resolveFinished);
    return this.releasing;
  }
}

function termView(term: LeadershipTerm): LeaderTerm {
  return Object.freeze({
    group: term.group,
    fencingToken: term.handle.fencingToken,
    get signal() {
      return term.signal;
    },
    get isLeading() {
      return term.isLeading;
    },
    assertLeading() {
      const { signal } = term;
      if (signal.aborted) throw signal.reason;
    },
  });
}
