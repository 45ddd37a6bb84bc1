import type { ZkSession } from '../session/zk-session.js';
import { PendingWork } from '../../util/pending-work.js';
import { isZkCode } from '../session/zk-error-code.js';
import type { DirectorySweeper } from './directory-sweeper.js';
import { listChildren } from './directory.js';
import { nodesWithPrefix } from '../../port/lock-queue.js';

/** Which node to delete: its name when known, else every node the guid prefix of its create names. */
export interface ReapTarget {
  readonly node?: string;
  readonly prefix: string;
  /** Finds the prefix's nodes among the children when `node` is unknown; default: lock nodes. */
  readonly find?: (children: readonly string[], prefix: string) => string[];
}

/**
 * Guaranteed deletes of our own lock nodes: a node we created must go, also when the
 * delete meets a connection loss (Kazoo #732 leaks it) and when the create's reply never
 * arrived (the node is then found by its guid, after a barrier so that a server lagging
 * behind the leader cannot hide it). A delete the server refuses for any other reason
 * (say, an operator changed the directory's ACL) would leave the node, and the lock held,
 * for the session's life: the session is ended instead, which deletes every node it owns.
 * When the session object is lost, goes on through the one that re-attached to the same
 * server session (`ZkSession.successor`), which kept the node; stops when the server
 * session ended, since the node died with it. The directory is left to the `DirectorySweeper`.
 */
export class NodeReaper {
  private readonly work = new PendingWork();
  /** Set while `diverting` runs: takes the deletes of known nodes instead. */
  private divert: ((session: ZkSession, dir: string, node: string) => Promise<void>) | undefined;

  constructor(
    private readonly sweeper: DirectorySweeper,
    /** The client's session of the moment (none once it is closed): where an ended session's node is seen go. */
    private readonly currentSession: () => ZkSession | undefined,
  ) {}

  remove(session: ZkSession, dir: string, target: ReapTarget): Promise<void> {
    if (this.divert && target.node !== undefined) return this.work.track(this.divert(session, dir, target.node));
    return this.work.track(this.run(session, dir, target));
  }

  /**
   * Runs `start`, handing every delete of a known node it asks for to `divert` (which must
   * guarantee it, as `remove` does): a multi-lock's release sends them as one transaction.
   */
  diverting<T>(divert: (session: ZkSession, dir: string, node: string) => Promise<void>, start: () => T): T {
    this.divert = divert;
    try {
      return start();
    } finally {
      this.divert = undefined;
    }
  }

  /** Waits for every removal under way (they end at the latest when their session does). */
  drain(): Promise<void> {
    return this.work.drain();
  }

  private async run(first: ZkSession, dir: string, target: ReapTarget): Promise<void> {
    for (let session: ZkSession | undefined = first; session;) {
      if (session.isLost) {
        // Only presumed lost, and re-attached: the node lives on in the same server session.
        session = await session.successor;
        continue;
      }
      try {
        await this.removeOnce(session, dir, target);
        return;
      } catch (error) {
        if (session.isLost) continue;
        if (!isZkCode(error, 'CONNECTION_LOSS')) return this.endSession(session, dir, target, error);
        await session.whenConnected().catch(() => undefined);
      }
    }
  }

  private async removeOnce(session: ZkSession, dir: string, target: ReapTarget): Promise<void> {
    const nodes = target.node !== undefined ? [target.node] : await this.lookUp(session, dir, target);
    if (nodes.length === 0) return;
    const removed = nodes.map((node) =>
      session.remove(`${dir}/${node}`).catch((error: unknown) => {
        if (!isZkCode(error, 'NO_NODE')) throw error;
      }),
    );
    // Per-session FIFO order: a directory delete sent from now on sees ours done.
    const swept = this.sweeper.released(session, dir);
    await Promise.all(removed);
    await swept;
  }

  private async lookUp(
    session: ZkSession,
    dir: string,
    { prefix, find = nodesWithPrefix }: ReapTarget,
  ): Promise<string[]> {
    await session.barrier();
    const nodes = find((await listChildren(session, dir))?.children ?? [], prefix);
    if (nodes.length === 0) session.noneCreated(`${dir}/${prefix}`);
    return nodes;
  }

  /**
   * Ends `session` to free a node whose delete the server refused, and resolves once the node
   * is gone as the server sees it: a close the server did not answer (the connection dropped
   * under it) leaves the session, and the node, alive until the server expires it.
   */
  private async endSession(session: ZkSession, dir: string, target: ReapTarget, error: unknown): Promise<void> {
    const code = (error as { zkCode?: string }).zkCode ?? String(error);
    await session.close(`a lock node in ${dir} could not be deleted (${code}), so the session was ended to free it`);
    if (target.node !== undefined) await this.whenGone(`${dir}/${target.node}`);
  }

  /**
   * Resolves once `path` does not exist, read (and watched) on the client's session of the
   * moment, going on through connection losses and new sessions; at once when the client
   * is closed.
   */
  private async whenGone(path: string): Promise<void> {
    for (let session = this.currentSession(); session; session = this.currentSession()) {
      let listener!: () => void;
      // Told when the node changes or goes, or when this session is lost (then read again on the next).
      const changed = new Promise<void>((resolve) => (listener = resolve));
      session.signal.addEventListener('abort', listener, { once: true });
      try {
        if (!(await session.watchData(path, listener))) return;
        await changed;
      } catch (error) {
        if (!session.isLost && isZkCode(error, 'CONNECTION_LOSS')) await session.whenConnected().catch(() => undefined);
        else if (!session.isLost) throw error;
      } finally {
        session.signal.removeEventListener('abort', listener);
        session.unwatch(path, listener);
      }
    }
  }
}
