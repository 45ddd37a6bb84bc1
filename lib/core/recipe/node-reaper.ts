import type { ZkSession } from '../session/zk-session.js';
import { PendingWork } from '../util/pending-work.js';
import { isZkCode } from '../util/zk-error-code.js';
import type { DirectorySweeper } from './directory-sweeper.js';
import { listChildren } from './lock-directory.js';
import { findByPrefix } from './lock-queue.js';

/** Which node to delete: its name when known, else the guid prefix its create carried. */
export interface ReapTarget {
  readonly node?: string;
  readonly prefix: string;
}

/**
 * Guaranteed deletes of our own lock nodes: a node we created must go, also when the
 * delete meets a connection loss (Kazoo #732 leaks it) and when the create's reply never
 * arrived (the node is then found by its guid). Stops when the session is lost, since the
 * node dies with it. The directory is left to the `DirectorySweeper`.
 */
export class NodeReaper {
  private readonly work = new PendingWork();

  constructor(private readonly sweeper: DirectorySweeper) {}

  remove(session: ZkSession, dir: string, target: ReapTarget): Promise<void> {
    return this.work.track(this.run(session, dir, target));
  }

  /** Waits for every removal under way (they end at the latest when their session does). */
  drain(): Promise<void> {
    return this.work.drain();
  }

  private async run(session: ZkSession, dir: string, target: ReapTarget): Promise<void> {
    for (;;) {
      if (session.isLost) return;
      try {
        await this.removeOnce(session, dir, target);
        return;
      } catch (error) {
        if (session.isLost) return;
        if (!isZkCode(error, 'CONNECTION_LOSS')) throw error;
        await session.whenConnected().catch(() => undefined);
      }
    }
  }

  private async removeOnce(session: ZkSession, dir: string, target: ReapTarget): Promise<void> {
    const node = target.node ?? findByPrefix((await listChildren(session, dir))?.children ?? [], target.prefix);
    if (node === undefined) return;
    const removed = session.remove(`${dir}/${node}`);
    // Per-session FIFO order: a directory delete sent from now on sees ours done.
    const swept = this.sweeper.released(session, dir);
    try {
      await removed;
    } catch (error) {
      if (!isZkCode(error, 'NO_NODE')) throw error;
    }
    await swept;
  }
}
