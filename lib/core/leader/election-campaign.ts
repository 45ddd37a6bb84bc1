import { setTimeout as sleep } from 'node:timers/promises';

import { LockLostError } from '../errors/errors.js';
import type { LockBackend, LockHandle } from '../port/lock-backend.js';
import { leaderMessages } from '../errors/messages.js';
import { LeadershipTerm } from './leadership-term.js';

export interface CampaignContext {
  readonly backend: LockBackend;
  readonly group: string;
  readonly lockName: string;
  readonly retryDelayMs: number;
  /** Told of every change, synchronously, as it happens. */
  readonly notify: (leading: boolean, reason?: Error) => void;
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
    } else {
      void term.end(handle.signal.reason as Error); // born lost: released, never led
    }
    await term.finished;
  }

  private ended(term: LeadershipTerm, reason: Error): void {
    if (this.current !== term) return; // never led, so nobody was told it began
    this.current = undefined;
    this.ctx.notify(false, reason);
  }
}
