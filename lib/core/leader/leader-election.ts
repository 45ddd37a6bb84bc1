import type { LockBackend } from '../port/lock-backend.js';
import { ElectionCampaign } from './election-campaign.js';
import { leaderLockName, resolveGraceMs, resolveRetryDelay, type LeaderElectionOptions } from './leader-group.js';
import { leaderMessages } from '../errors/messages.js';
import { LeaderWork, resolveLeaderWorkOptions, termInScope, type LeaderWorkOptions } from './leader-work.js';
import type { LeaderTerm } from './leadership-term.js';

/** What a leadership listener is told. */
export interface LeadershipChange {
  readonly group: string;
  /** `true` when this instance became the leader, `false` when it stopped leading. */
  readonly leading: boolean;
  /** Why leadership ended: a `LockLostError` (lost, or stepped down). */
  readonly reason?: Error;
}

export type LeadershipListener = (change: LeadershipChange) => void;

/**
 * Leader election over any `LockBackend`, like Curator's LeaderLatch: leading `group`
 * means holding the write lock `leader:<group>`. Candidates queue in FIFO order, each
 * watching only the one before it; a crashed leader's node goes with its session; and a
 * leader is told it lost leadership (its `signal` aborts, listeners hear `leading: false`)
 * before any other candidate can lead.
 *
 * ```ts
 * const election = new LeaderElection(backend, 'nightly-report');
 * election.onChange(({ leading }) => console.log(leading ? 'leading' : 'following'));
 * election.start();
 * // … if (election.isLeader) await runReport(election.signal);
 * await election.stop();
 * ```
 */
export class LeaderElection {
  /** The lock that leadership is: `leader:<group>`. */
  readonly lockName: string;
  private readonly retryDelayMs: number;
  private readonly listeners = new Set<LeadershipListener>();
  private campaign: ElectionCampaign | undefined;
  private readonly work = new LeaderWork(this);
  /** Changes not told yet: one made while the listeners hear another waits for its turn. */
  private readonly untold: LeadershipChange[] = [];
  private telling = false;

  /** Throws `InvalidLeaderGroupError` or `InvalidOptionError` before anything is sent. */
  constructor(
    private readonly backend: LockBackend,
    readonly group: string,
    options?: LeaderElectionOptions,
  ) {
    this.lockName = leaderLockName(group);
    this.retryDelayMs = resolveRetryDelay(options);
  }

  /**
   * Joins the election (idempotent): queues for leadership, and queues again whenever it
   * is lost, until `stop()`. A failed attempt (say, the backend is not connected yet) is
   * retried after `retryDelayMs`; a closed backend ends the election quietly.
   */
  start(): void {
    if (this.campaign && !this.campaign.isHalted) return;
    const { backend, group, lockName, retryDelayMs } = this;
    this.campaign = new ElectionCampaign({
      backend,
      group,
      lockName,
      retryDelayMs,
      notify: (leading, reason) => this.notify(leading, reason),
    });
  }

  /** Whether this instance leads now: its lock is held, checked against the clock at this moment. */
  get isLeader(): boolean {
    return this.campaign?.term?.isLeading ?? false;
  }

  /**
   * The term of leadership to pass to I/O (its `signal`, `fencingToken`): inside work
   * started with `runAsLeader`, the term that work started under, even after it ended and
   * another began (its signal is then aborted); elsewhere the current term, `undefined`
   * when not leading. One object per term.
   */
  get term(): LeaderTerm | undefined {
    return termInScope(this) ?? this.campaign?.term?.view;
  }

  /** The signal of `term`: aborts (with a `LockLostError`) when that term ends. */
  get signal(): AbortSignal | undefined {
    return this.term?.signal;
  }

  /** The fencing token of `term` (see `LockHandle.fencingToken`). */
  get fencingToken(): bigint | undefined {
    return this.term?.fencingToken;
  }

  /**
   * Runs `fn(term)` if this instance leads now (checked against the clock), and returns
   * its promise; returns `undefined` without running it otherwise, and once `stop()` was
   * called. The call is tracked until it settles, so that `stop({ graceMs })` waits for it
   * before stepping down. If the term ends while `fn` runs (the lock lost, or stepped
   * down), the promise rejects with the term's `LockLostError` once `fn` settles, whatever
   * it returned, unless `onLockLost: 'ignore'`. Throws `InvalidOptionError` for bad options.
   */
  runAsLeader<T>(fn: (term: LeaderTerm) => T | Promise<T>, options?: LeaderWorkOptions): Promise<T> | undefined {
    const resolved = resolveLeaderWorkOptions(options);
    const campaign = this.campaign;
    const term = campaign?.term;
    if (!term || campaign.isHalted || !term.isLeading) return undefined;
    return this.work.run(term, fn, resolved);
  }

  /**
   * Calls `listener` on every change of leadership, synchronously: `leading: false` comes
   * before any other candidate can lead. Every listener hears the changes in the order they
   * happened, `leading: true` and `false` in turn: a change made while the listeners hear
   * another (a listener calls `stop()`, or finds the term lost) is told to each of them
   * after that one, in the same tick. Returns the unsubscribe function. A listener that
   * throws is reported as a process warning and does not stop the election.
   */
  onChange(listener: LeadershipListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The identity the current leader wrote into its lock node, or `null` when nobody leads. */
  async leader(): Promise<string | null> {
    const contenders = await this.backend.contenders(this.lockName);
    return contenders.find((contender) => contender.holding)?.identity ?? null;
  }

  /**
   * Leaves the election (idempotent): stops queueing, and no new `runAsLeader` work
   * starts. A leader waits up to `graceMs` (default 0) for its `runAsLeader` work under
   * way to settle, then steps down: its signal aborts, listeners are told, then the lock
   * is released so the next candidate leads at once. `start()` may join again afterwards.
   */
  stop(options?: { readonly graceMs?: number }): Promise<void> {
    const graceMs = resolveGraceMs(options);
    return this.campaign?.stop(graceMs > 0 ? () => this.work.drain(graceMs) : undefined) ?? Promise.resolve();
  }

  private notify(leading: boolean, reason?: Error): void {
    this.untold.push(reason ? { group: this.group, leading, reason } : { group: this.group, leading });
    if (this.telling) return; // the loop below tells it once the change under way is told to all
    this.telling = true;
    try {
      for (let change = this.untold.shift(); change; change = this.untold.shift()) this.tell(change);
    } finally {
      this.telling = false;
    }
  }

  private tell(change: LeadershipChange): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (error) {
        process.emitWarning(leaderMessages.listenerThrew(this.group, error), { code: 'NESTJS_ZK_LOCK_LISTENER' });
      }
    }
  }
}
