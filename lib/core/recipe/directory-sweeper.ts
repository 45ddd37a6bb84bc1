import type { ZkSession } from '../session/zk-session.js';
import { PendingWork } from '../util/pending-work.js';
import { removeIfEmpty } from './lock-directory.js';

/**
 * Removes lock directories that fell empty. Not at once by default: a lock released and
 * taken again soon after (the common case for a hot lock) would otherwise pay a directory
 * delete and a re-create, two more writes, on every cycle. A directory is removed after
 * `graceMs` without use by this client; ZooKeeper refuses the delete if anyone queued
 * meanwhile, and an acquire that finds its directory gone re-creates it.
 */
export class DirectorySweeper {
  private readonly scheduled = new Map<string, { timer: NodeJS.Timeout; session: ZkSession }>();
  private readonly work = new PendingWork();

  /** `graceMs`: idle time before removal (0: with the release); `false`: never remove. */
  constructor(private readonly graceMs: number | false) {}

  /** This client is about to use `dir`: keep it. */
  claim(dir: string): void {
    const entry = this.scheduled.get(dir);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.scheduled.delete(dir);
  }

  /**
   * This client's node in `dir` is being deleted (the delete already sent on `session`).
   * With no grace the directory delete goes right behind it, and the returned promise
   * settles with it (one round trip for both, by per-session FIFO order).
   */
  released(session: ZkSession, dir: string): Promise<void> | undefined {
    if (this.graceMs === false) return undefined;
    if (this.graceMs === 0) return this.sweep(session, dir);
    this.claim(dir);
    const timer = setTimeout(() => {
      this.scheduled.delete(dir);
      this.sweep(session, dir);
    }, this.graceMs);
    timer.unref(); // never keeps a process alive by itself
    this.scheduled.set(dir, { timer, session });
    return undefined;
  }

  /** Removes every scheduled directory now (at shutdown), and waits for all removals. */
  async flush(): Promise<void> {
    for (const [dir, { timer, session }] of [...this.scheduled]) {
      clearTimeout(timer);
      this.scheduled.delete(dir);
      this.sweep(session, dir);
    }
    await this.work.drain();
  }

  private sweep(session: ZkSession, dir: string): Promise<void> | undefined {
    return session.isLost ? undefined : this.work.track(removeIfEmpty(session, dir));
  }
}
