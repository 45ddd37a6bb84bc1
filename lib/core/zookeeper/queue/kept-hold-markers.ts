import type { ZkOperationError } from '../../errors/errors.js';
import { keptHoldData, keptHoldMsOf, newKeptHoldNode } from '../../port/kept-hold.js';
import { deadline } from '../../util/deadline.js';
import { longTimeout, type LongTimeout } from '../../util/long-timeout.js';
import type { ZkSession } from '../session/zk-session.js';
import { isZkCode } from '../session/zk-error-code.js';
import type { QueueIo } from './acquisition.js';
import type { NodeReaper } from './node-reaper.js';

/**
 * Kept holds' markers in lock directories (see core/port/kept-hold): the ones this client
 * puts, and the ones its acquirers find.
 *
 * A marker of ours is deleted by a timer of its own once its hold ended by this process's
 * monotonic clock, where the hold was measured; the delete is guaranteed as a lock node's is
 * (the reaper retries it through connection losses, and through the session object that
 * re-attached when this one was presumed lost: a re-attach keeps it, as it keeps held lock
 * nodes); a session that ends takes its markers with it. A marker whose holder died stays until ZooKeeper ends that session: an
 * acquirer judges it on ZooKeeper's own clock instead (`holdLeft`), and deletes it once past
 * its end, so the hold never outlasts `holdAtLeastMs` for our clients.
 */
export class KeptHoldMarkers {
  /** Our markers until their holds end, each with its delete's timer. */
  private readonly pending = new Map<LongTimeout, Mark>();

  constructor(
    private readonly reaper: NodeReaper,
    /** Written into each marker: who keeps the hold. */
    private readonly identity: Buffer,
    /** ZooKeeper's time, read by a write (see `LockBackend.serverTime`): never ahead of its clock. */
    private readonly serverTime: (session: ZkSession) => Promise<number>,
  ) {}

  /**
   * For a try (`timeoutMs: 0`) that found `marker` in `dir`: whether its hold has ended, the
   * marker then deleted (the queue is to be read again). Costs two reads and a write, only
   * when a marker is there.
   */
  async ended(io: QueueIo, dir: string, marker: string): Promise<boolean> {
    return (await this.judge(io, `${dir}/${marker}`)) <= 0;
  }

  /**
   * For a waiter that found `marker` in `dir`, first in line: waits until the marker goes
   * (watched) or its hold's end by ZooKeeper's clock passes, deleting it then. Resolves when
   * the queue is to be read again; rejects as the call's stop does.
   */
  async waitOut(io: QueueIo, dir: string, marker: string): Promise<void> {
    let listener!: () => void;
    const gone = new Promise<void>((resolve) => (listener = resolve));
    const path = `${dir}/${marker}`;
    try {
      const left = await this.judge(io, path, listener);
      if (left <= 0) return;
      const timer = deadline(left, () => undefined);
      const ended = new Promise<void>((resolve) => timer.signal.addEventListener('abort', () => resolve()));
      try {
        await io.stop.race(Promise.race([gone, ended]));
      } finally {
        timer.clear();
      }
    } finally {
      io.session.unwatch(path, listener);
    }
  }

  /**
   * How long the hold of the marker at `path` lasts from now, in ms: its creation time
   * (ZooKeeper's, stamped no earlier than its holder measured `holdMs`) plus `holdMs`,
   * less ZooKeeper's now (read by a write, so never ahead of it). `0` for a marker gone, or
   * past its end (then deleted here); `Infinity` for one whose data gives no end. With a
   * `listener`, a watch on the marker is set first.
   */
  private async judge(io: QueueIo, path: string, listener?: () => void): Promise<number> {
    const { session } = io;
    // Sent together; awaited together, so that neither is left to reject unheard when the call stops.
    const [watched, read] = await Promise.all([
      listener ? io.retrying(() => session.watchData(path, listener)) : true,
      io.retrying(() => session.getDataAndStat(path).catch(goneAsNull)),
    ]);
    if (!watched || !read) return 0;
    const holdMs = keptHoldMsOf(read.data);
    if (holdMs === null) return Infinity;
    const serverNow = await io.retrying(() => this.serverTime(session));
    const answeredAt = performance.now();
    const left = read.stat.ctimeMs! + holdMs - serverNow;
    if (left > 0) return left - (performance.now() - answeredAt);
    // Past its end: its holder died (its session not ended yet), or is about to delete it.
    try {
      await io.retrying(() => session.remove(path));
    } catch (error) {
      if (!isZkCode(error, 'NO_NODE')) return Infinity; // refused (an ACL): it goes with its session
    }
    return 0;
  }

  /**
   * Puts a marker of `holdMs` (from now) in `dir` on `session`, the session of the lock node
   * that still holds there. Resolves whether it is certainly in place; whatever the answer
   * (a create whose reply was lost may have happened), its delete is set for the hold's end.
   */
  async keep(session: ZkSession, dir: string, holdMs: number): Promise<boolean> {
    const endsAt = performance.now() + holdMs;
    const node = newKeptHoldNode();
    const data = keptHoldData(holdMs, this.identity.toString('utf8'));
    // Like a held lock node, it outlives a re-attach of its session: its holder still lives
    // and deletes it at the hold's end (through the session object that re-attached).
    session.holding(`${dir}/${node}`);
    try {
      await session.create(`${dir}/${node}`, data, 'ephemeral');
      return true;
    } catch {
      return false; // refused, or unknown: the caller keeps its lock node instead
    } finally {
      this.removeAt(endsAt, session, dir, node);
    }
  }

  /**
   * At close, before the session ends: each hold still running is left behind as a
   * persistent marker for the time it has left (see core/port/kept-hold), so that our
   * clients honour it to its end; then the timers go. The persistent marker replaces the
   * ephemeral one in one transaction, so the directory never holds both, whatever becomes of
   * the session: a close that cannot end it (the connection dropped meanwhile) would
   * otherwise leave the ephemeral one to Curator's and Kazoo's waiters until ZooKeeper
   * expires the session. A marker that cannot be written (no connection) is not retried: the
   * hold then ends with the session for plain calls (job calls still read their record).
   */
  async persist(session: ZkSession): Promise<void> {
    const marks = [...this.pending.values()];
    for (const timer of this.pending.keys()) timer.clear();
    this.pending.clear();
    const by = this.identity.toString('utf8');
    await Promise.allSettled(marks.map((mark) => this.replace(session, mark, by)));
  }

  /** One hold's persistent marker in place of its ephemeral one (see `persist`). */
  private async replace(session: ZkSession, { dir, node, endsAt }: Mark, by: string): Promise<void> {
    const holdMs = endsAt - performance.now(); // measured before the write is sent
    if (holdMs <= 0) return; // its timer was due: it goes with the session
    const ephemeral = `${dir}/${node}`;
    session.letGo(ephemeral);
    const create = {
      op: 'create',
      path: `${dir}/${newKeptHoldNode(true)}`,
      data: keptHoldData(holdMs, by),
      mode: 'persistent',
    } as const;
    try {
      await session.multi([create, { op: 'remove', path: ephemeral }]);
    } catch (error) {
      // Its own create was refused or lost (its holder kept the lock node instead): the persistent one alone.
      if (isZkCode(error, 'NO_NODE') && (error as ZkOperationError).path === ephemeral)
        await session.create(create.path, create.data, create.mode);
    }
  }

  private removeAt(endsAt: number, session: ZkSession, dir: string, node: string): void {
    // A timer may fire a fraction of a millisecond before its delay by performance.now(): checked, and armed again.
    const timer = longTimeout(
      () => {
        this.pending.delete(timer);
        if (performance.now() < endsAt) this.removeAt(endsAt, session, dir, node);
        else {
          session.letGo(`${dir}/${node}`);
          void this.reaper.remove(session, dir, { node, prefix: node });
        }
      },
      Math.ceil(endsAt - performance.now()),
      { unref: true },
    );
    this.pending.set(timer, { dir, node, endsAt });
  }
}

function goneAsNull(error: unknown): null {
  if (isZkCode(error, 'NO_NODE')) return null;
  throw error;
}

/** One of our markers: where, and when its hold ends by `performance.now()`. */
interface Mark {
  readonly dir: string;
  /** The ephemeral marker's name. */
  readonly node: string;
  readonly endsAt: number;
}
