import { setTimeout as sleep } from 'node:timers/promises';
import { LockLostError } from '../errors/errors.js';
import type { LockBackend, LockHandle } from '../port/lock-backend.js';
import { leaderMessages } from '../errors/messages.js';
import { LeadershipTerm, type LeaderTerm } from './leadership-term.js';
import { LeaderDirectory, type JsonValue, type LeaderObserver } from './leader-directory.js';
import { leaderLockName, resolveGraceMs, resolveRetryDelay, type LeaderElectionOptions } from './leader-group.js';
import { LeaderWork, resolveLeaderWorkOptions, termInScope, type LeaderWorkOptions } from './leader-work.js';

export interface CampaignContext {
  readonly backend: LockBackend;
  readonly group: string;
  readonly lockName: string;
  readonly retryDelayMs: number;
  /** Told of every change, synchronously, as it happens. */
  readonly notify: (leading: boolean, reason?: Error) => void;
  /** Told once a term began leading, after `notify`: the term's record is written then. */
  readonly began: (term: LeadershipTerm) => void;
}

/**
 * One run of an election, from `start()` to `stop()`: queue for the leader lock, lead
 * while it is held, queue again (a new node, at the end) when it is lost. Ends when
 * stopped, or quietly when the backend is closed.
 */
export class ElectionCampaign {
  private readonly halter = new AbortController();
  private current: LeadershipTerm | undefined;
  private stopping: Promise<void> | undefined;
  private readonly done: Promise<void>;

  constructor(private readonly ctx: CampaignContext) {
    this.done = this.run();
  }

  /** The term under way, if this instance leads. */
  get term(): LeadershipTerm | undefined {
    return this.current;
  }

  get isHalted(): boolean {
    return this.halter.signal.aborted;
  }

  /**
   * Stops queueing (the wait and any retry timer are cancelled); a leader first waits for
   * `beforeStepDown` (its leader-only work), then steps down: its signal aborts and
   * listeners are told, then the lock is released so that the next candidate leads at
   * once. Resolves when nothing of the run is left.
   */
  stop(beforeStepDown?: () => Promise<unknown>): Promise<void> {
    return (this.stopping ??= this.halt(beforeStepDown));
  }

  private async halt(beforeStepDown: (() => Promise<unknown>) | undefined): Promise<void> {
    const reason = new LockLostError(this.ctx.lockName, leaderMessages.steppedDown(this.ctx.group));
    // Halted first, so that no new leader-only work starts, and a term lost meanwhile is
    // not followed by a new one.
    this.halter.abort(reason);
    if (this.current && beforeStepDown) await beforeStepDown();
    await this.current?.end(reason);
    await this.done;
  }

  private async run(): Promise<void> {
    while (!this.isHalted) {
      const handle = await this.attempt();
      if (handle) await this.lead(handle);
    }
  }

  /** Queues for the lock; `undefined` after a failure (and the retry delay) or a stop. */
  private async attempt(): Promise<LockHandle | undefined> {
    const { backend, lockName, retryDelayMs } = this.ctx;
    try {
      return await backend.acquire(lockName, { timeoutMs: Infinity, signal: this.halter.signal });
    } catch (error) {
      // Compared by code, not class: the backend may come from another copy of the package.
      if ((error as { code?: unknown } | null)?.code === 'CLIENT_CLOSED') this.halter.abort(error);
      else if (!this.isHalted)
        await sleep(retryDelayMs, undefined, { signal: this.halter.signal }).catch(() => undefined);
      return undefined;
    }
  }

  /** Leads until the term ends (lost, or stepped down), and its lock is released. */
  private async lead(handle: LockHandle): Promise<void> {
    // Granted while stopping: nobody was told of it, so nobody is told of its end.
    if (this.isHalted) return handle.release().catch(() => undefined);
    const term: LeadershipTerm = new LeadershipTerm(this.ctx.group, handle, (reason) => this.ended(term, reason));
    if (term.isLeading) {
      this.current = term;
      this.ctx.notify(true);
      this.ctx.began(term);
    } else {
      void term.end(handle.signal.reason as Error); // born lost: released, never led
    }
    // Queues again once told, not once released: a lost term's lock goes only when the work
    // started under it settled, and the new node waits behind it meanwhile.
    await term.told;
  }

  private ended(term: LeadershipTerm, reason: Error): void {
    if (this.current !== term) return; // never led, so nobody was told it began
    this.current = undefined;
    this.ctx.notify(false, reason);
  }
}

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
  /** The term records this instance writes, and what observers read. */
  private readonly directory: LeaderDirectory;
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
    this.directory = new LeaderDirectory(backend, group, this.lockName);
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
      began: (term) => this.directory.termBegan(term),
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

  /**
   * Tells `listener` who leads the group (`LeaderInfo`: the leader's identity, the term's
   * fencing token, what it proclaimed), or `null` while nobody leads, now and at every
   * change, until the returned function is called. For candidates and for instances that
   * never `start()` alike. A new leader is told once it has written its term's record (one
   * write as its term begins); a record of an earlier term is never shown as the current
   * leader's. Watches and reads only: nothing is written, and nothing sent at idle. A
   * listener that throws is reported as a process warning.
   */
  observe(listener: LeaderObserver): () => void {
    return this.directory.observe(listener, this.retryDelayMs);
  }

  /**
   * Says `value` (any JSON value, up to `MAX_PROCLAIMED_BYTES`) as this leader, for every
   * observer; said again at each later term this instance wins. Resolves once written.
   * Rejects with `NotLeaderError` when this instance does not lead now (nothing written),
   * `InvalidOptionError` for a value that is not JSON or too large.
   */
  proclaim(value: JsonValue): Promise<void> {
    return this.directory.proclaim(this.campaign?.term, value);
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
