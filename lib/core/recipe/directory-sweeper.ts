import type { ZkSession } from '../session/zk-session.js';
import { PendingWork } from '../util/pending-work.js';
import { removeIfEmpty } from './lock-directory.js';

/**
 * Removes lock directories that fell empty. Not at once by default: a lock released and
 * taken again soon after (the common case for a hot lock) would otherwise pay a directory
 * delete and a re-create, two more writes, on every cycle. A directory is removed once it
 * has gone `graceMs` without use by this client; ZooKeeper refuses the delete if anyone
 * queued meanwhile, and an acquire that finds its directory gone re-creates it. One
 * timer serves every directory, so a busy lock costs no timer work per cycle.
 */
export class DirectorySweeper {
  /** Directories this client released and has not used since, with when and on which session. */
  private readonly idle = new Map<string, { session: ZkSession; since: number }>();
  private timer: NodeJS.Timeout | undefined;
  private readonly work = new PendingWork();

  /** `graceMs`: idle time before removal (0: with the release); `false`: never remove. */
  constructor(private readonly graceMs: number | false) {}

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
    this.idle.set(dir, { session, since: performance.now() });
    this.timer ??= this.arm(this.graceMs);
    return undefined;
  }

  /** Removes every idle directory now (at shutdown), and waits for all removals. */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const [dir, { session }] of this.idle) void this.sweep(session, dir);
    this.idle.clear();
    await this.work.drain();
  }

  private arm(delayMs: number): NodeJS.Timeout {
    const timer = setTimeout(() => this.onTimer(), delayMs);
    timer.unref(); // never keeps a process alive by itself
    return timer;
  }

  private onTimer(): void {
    this.timer = undefined;
    const now = performance.now();
    for (const [dir, { session, since }] of this.idle) {
      const wait = since + (this.graceMs as number) - now;
      if (wait > 0) {
        this.timer = this.arm(wait); // the rest were released later
        return;
      }
      this.idle.delete(dir);
      void this.sweep(session, dir);
    }
  }

  private sweep(session: ZkSession, dir: string): Promise<void> | undefined {
    return session.isLost ? undefined : this.work.track(removeIfEmpty(session, dir));
  }
}
