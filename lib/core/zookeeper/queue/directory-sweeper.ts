import type { ZkSession } from '../session/zk-session.js';
import { ZkOperationError } from '../../errors/errors.js';
import { longTimeout, type LongTimeout } from '../../util/long-timeout.js';
import { PendingWork } from '../../util/pending-work.js';
import { isZkCode } from '../session/zk-error-code.js';
import { removeIfEmpty } from './directory.js';

/**
 * Removes lock directories that fell empty. Not at once by default: a lock released and
 * taken again soon after (the common case for a hot lock) would otherwise pay a directory
 * delete and a re-create, two more writes, on every cycle. A directory is removed once it
 * has gone `graceMs` without use by this client; ZooKeeper refuses the delete if anyone
 * queued meanwhile, and an acquire that finds its directory gone re-creates it. One
 * timer serves every directory, so a busy lock costs no timer work per cycle.
 */
export class DirectorySweeper {
  /** Directories this client released and has not used since, with when. */
  private readonly idle = new Map<string, number>();
  private timer: LongTimeout | undefined;
  private readonly work = new PendingWork();
  private flushed = false;

  /**
   * `graceMs`: idle time before removal (0: with the release); `false`: never remove.
   * `currentSession`: the client's session at the time of a later removal. That need not be
   * the one the release was sent on, which may have expired since: any session may delete
   * an empty directory (ZooKeeper refuses if it is not empty), and one left behind would
   * keep what it stores (a semaphore's count) for good.
   */
  constructor(
    private readonly graceMs: number | false,
    private readonly currentSession: () => ZkSession | undefined,
  ) {}

  /** This client is about to use `dir`: keep it. */
  claim(dir: string): void {
    this.idle.delete(dir);
  }

  /**
   * This client's node in `dir` is being deleted (the delete already sent on `session`).
   * With no grace the directory delete goes right behind it, and the returned promise
   * settles with it (one round trip for both, by per-session FIFO order).
   */
  released(session: ZkSession, dir: string): Promise<void> | undefined {
    if (this.graceMs === false) return undefined;
    if (this.graceMs === 0) return this.sweep(session, dir);
    this.idle.delete(dir); // re-inserted last: the map stays in release order
    this.idle.set(dir, performance.now());
    this.timer ??= this.arm(this.graceMs);
    return undefined;
  }

  /** Removes every idle directory now (at shutdown), and waits for all removals. */
  async flush(): Promise<void> {
    this.flushed = true;
    this.timer?.clear();
    this.timer = undefined;
    const session = this.currentSession();
    if (session) for (const dir of this.idle.keys()) void this.sweep(session, dir);
    this.idle.clear();
    await this.work.drain();
  }

  private arm(delayMs: number): LongTimeout {
    // unref: never keeps a process alive by itself; long: any grace the options accept
    return longTimeout(() => this.onTimer(), delayMs, { unref: true });
  }

  private onTimer(): void {
    this.timer = undefined;
    if (this.idle.size === 0) return;
    const session = this.currentSession();
    if (!session || session.isLost || !session.isConnected) {
      // No session to delete with now (one expired, the next not open yet): try again later.
      this.timer = this.arm(this.graceMs as number);
      return;
    }
    const now = performance.now();
    for (const [dir, since] of this.idle) {
      const wait = since + (this.graceMs as number) - now;
      if (wait > 0) {
        this.timer = this.arm(wait); // the rest were released later
        return;
      }
      this.idle.delete(dir);
      this.sweepOrRetry(session, dir);
    }
  }

  /**
   * A later removal: if it fails for want of a session (the connection dropped, or the
   * session expired before this client knew), the directory waits for the next turn. Not
   * after `flush()`: a closing client does not come back.
   */
  private sweepOrRetry(session: ZkSession, dir: string): void {
    void this.work.track(this.removeOrRequeue(session, dir));
  }

  private async removeOrRequeue(session: ZkSession, dir: string): Promise<void> {
    try {
      await session.remove(dir);
    } catch (error) {
      // ZooKeeper's answer (NOT_EMPTY: in use again; NO_NODE: removed; or a refusal) stands.
      const answered = error instanceof ZkOperationError && !isZkCode(error, 'CONNECTION_LOSS');
      if (answered || this.flushed) return;
      if (!this.idle.has(dir)) this.idle.set(dir, performance.now());
      this.timer ??= this.arm(this.graceMs as number);
    }
  }

  private sweep(session: ZkSession, dir: string): Promise<void> | undefined {
    return session.isLost ? undefined : this.work.track(removeIfEmpty(session, dir));
  }
}
