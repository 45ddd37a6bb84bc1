import type { ZkSession } from '../session/zk-session.js';
import { isZkCode } from '../util/zk-error-code.js';
import { listChildren, removeIfEmpty } from './lock-directory.js';
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
 * node dies with it. Then removes the lock directory if it fell empty.
 */
export class NodeReaper {
  private readonly pending = new Set<Promise<void>>();

  /** `removeEmptyDirectories`: whether a lock directory goes with its last node. */
  constructor(private readonly removeEmptyDirectories = true) {}

  remove(session: ZkSession, dir: string, target: ReapTarget): Promise<void> {
    const removal = this.run(session, dir, target).finally(() => this.pending.delete(removal));
    this.pending.add(removal);
    return removal;
  }

  /** Waits for every removal under way (they end at the latest when their session does). */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
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
    // Sent back to back: per-session FIFO order means the directory delete sees ours done.
    const removed = session.remove(`${dir}/${node}`);
    if (this.removeEmptyDirectories) {
      const dirRemoved = removeIfEmpty(session, dir);
      this.pending.add(dirRemoved);
      void dirRemoved.finally(() => this.pending.delete(dirRemoved));
    }
    try {
      await removed;
    } catch (error) {
      if (!isZkCode(error, 'NO_NODE')) throw error;
    }
  }
}
