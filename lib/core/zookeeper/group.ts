import { setTimeout as sleep } from 'node:timers/promises';

import { MemberReplacedError, ZkOperationError } from '../errors/errors.js';
import { byMemberId, type GroupEntry, type GroupMember, type MemberData, type Unwatch } from '../port/group.js';
import { decodeLockName } from '../naming/lock-name-codec.js';
import { abortable } from '../util/abortable.js';
import { ensurePath, listChildren } from './queue/directory.js';
import { onConnectedSession } from './session/client-outage.js';
import type { ZkClient } from './session/zk-client.js';
import { isZkCode } from './session/zk-error-code.js';
import type { ZkSession, ZkWatchListener } from './session/zk-session.js';

/**
 * Groups live beside the lock directories, not inside them (`<rootPath>-groups/<group>/<id>`,
 * each name encoded as lock names are), so no lock queue reads a member as a contender,
 * `locks()` never lists one and the directory sweeper never waits on one.
 */
export function groupsRoot(rootPath: string): string {
  return `${rootPath}-groups`;
}

/** The members of the group whose directory is `dir`, in id order: one children read, then every entry's data read together. */
export async function readGroupMembers(session: ZkSession, dir: string): Promise<GroupMember[]> {
  const listing = await listChildren(session, dir);
  const children = listing?.children ?? [];
  const reads = await session.readAll(children.map((child) => ({ op: 'getData' as const, path: `${dir}/${child}` })));
  const members = children.flatMap((child, i): GroupMember[] => {
    const read = reads[i];
    if ('error' in read) {
      if (read.error === 'NO_NODE') return []; // left between the reads
      throw new ZkOperationError('getData', `${dir}/${child}`, read.error);
    }
    if (!('stat' in read)) return [];
    const { data, stat } = read;
    return [
      { id: decodeLockName(child), data: memberData(data), since: new Date(stat.ctimeMs!), sessionId: stat.owner },
    ];
  });
  return members.sort(byMemberId);
}

/** An entry's data as its member wrote it; `{}` for bytes that are not a JSON object (written by another tool). */
function memberData(bytes: Buffer | undefined): MemberData {
  try {
    const data: unknown = JSON.parse(bytes?.toString('utf8') ?? '');
    return data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as MemberData) : {};
  } catch {
    return {};
  }
}

/**
 * One ZooKeeper watch on `path` for `onChange` (see `LockBackend.watch`): on its children
 * (`children`) or its data (`data`); where the node does not exist, a creation watch. A
 * lost session wakes it too (see `ZkWatchRegistry.fireAll`).
 */
export async function watchNode(
  session: ZkSession,
  path: string,
  kind: 'children' | 'data',
  onChange: () => void,
): Promise<Unwatch> {
  let fired = false;
  const once: ZkWatchListener = () => {
    if (fired) return;
    fired = true;
    onChange();
  };
  const unwatch: Unwatch = () => {
    fired = true;
    session.unwatch(path, once);
  };
  for (;;) {
    const found = kind === 'children' ? await session.watchChildren(path, once) : await session.watchData(path, once);
    if (found) return unwatch;
    if (!(await session.watchExists(path, once))) return unwatch; // fires when the node is made
    // Made between the two reads: the exists watch would miss a child; watch again.
    session.unwatch(path, once);
  }
}

/** How long a member waits before watching its node again after an error of ZooKeeper's (not a lost connection). */
const RETRY_DELAY_MS = 1000;

export interface ZkGroupEntryInit {
  readonly client: ZkClient;
  readonly group: string;
  readonly id: string;
  /** The entry's node: `<groupsRoot>/<group>/<id>`. */
  readonly path: string;
  readonly data: Buffer;
  /** Told once the entry ended (left, replaced, or the backend closed). */
  readonly onEnd: (entry: ZkGroupEntry) => void;
}

/**
 * This client's entry in a group: an ephemeral node, kept while the client lives. It
 * watches its own node (a read, no write): deleted while the session lives means another
 * client took the id over (or deleted it), and the entry ends with `MemberReplacedError`;
 * a lost session means the entry is made again on the next session (a session given back
 * keeps the node: it is marked held, see `OwnNodes`), unless another client has the id by
 * then.
 */
export class ZkGroupEntry implements GroupEntry {
  private readonly ended = new AbortController();
  private readonly stopping = new AbortController();
  private kept: Promise<void> = Promise.resolve();
  private leaving: Promise<void> | undefined;

  private constructor(private readonly init: ZkGroupEntryInit) {}

  /** Makes the entry (taking the id over from another client), then keeps it. */
  static async join(init: ZkGroupEntryInit, timeoutMs: number): Promise<ZkGroupEntry> {
    const entry = new ZkGroupEntry(init);
    const subject = `joinGroup("${init.group}", "${init.id}")`;
    const session = await onConnectedSession(init.client, timeoutMs, subject, async (session) => {
      await entry.place(session, true);
      return session;
    });
    entry.kept = entry.keep(session);
    return entry;
  }

  get group(): string {
    return this.init.group;
  }

  get id(): string {
    return this.init.id;
  }

  get signal(): AbortSignal {
    return this.ended.signal;
  }

  leave(): Promise<void> {
    return (this.leaving ??= this.remove());
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.leave();
  }

  /**
   * Makes the node on `session`, or finds it there already (a create answered late, a
   * session given back). Held by another session: taken over when `takeOver` (a join),
   * else `false` (the id was taken while this client was cut off).
   */
  private async place(session: ZkSession, takeOver: boolean): Promise<boolean> {
    const { path, data } = this.init;
    session.holding(path); // a session given back keeps it (see OwnNodes)
    for (;;) {
      try {
        await session.create(path, data, 'ephemeral');
        return true;
      } catch (error) {
        if (isZkCode(error, 'NO_NODE')) {
          await ensurePath(session, path.slice(0, path.lastIndexOf('/')));
          continue;
        }
        if (!isZkCode(error, 'NODE_EXISTS')) throw error;
      }
      const stat = await session.getDataAndStat(path).then(
        ({ stat }) => stat,
        (error: unknown) => {
          if (isZkCode(error, 'NO_NODE')) return undefined;
          throw error;
        },
      );
      if (!stat) continue; // gone meanwhile: create again
      if (stat.owner === `0x${session.id}`) return true;
      if (!takeOver) return false;
      try {
        // One transaction: nobody sees the id vacant, and a newer owner is never deleted.
        await session.multi([
          { op: 'remove', path, version: stat.version },
          { op: 'create', path, data, mode: 'ephemeral' },
        ]);
        return true;
      } catch (error) {
        if (!isZkCode(error, 'BAD_VERSION') && !isZkCode(error, 'NO_NODE') && !isZkCode(error, 'NODE_EXISTS'))
          throw error;
      }
    }
  }

  /** Watches the node on each session in turn until the entry ends. */
  private async keep(placedOn: ZkSession): Promise<void> {
    const { client } = this.init;
    const stop = this.stopping.signal;
    let session = placedOn;
    while (!stop.aborted) {
      try {
        // The session is gone: the entry comes back on the next one, unless the id was taken meanwhile.
        if (session.isLost) session = await this.placeAgain();
        const present = await this.watchOwn(session);
        if (stop.aborted || session.isLost || present) continue; // a spurious wake, or its data set: watch again
        return this.finish(new MemberReplacedError(this.group, this.id));
      } catch (error) {
        if (stop.aborted || client.isClosed) return;
        if (error instanceof MemberReplacedError) return this.finish(error);
        // Not a lost connection or session (watched again at once): an error of ZooKeeper's, tried again later.
        if (!session.isLost && !isZkCode(error, 'CONNECTION_LOSS'))
          await sleep(RETRY_DELAY_MS, undefined, { signal: stop }).catch(() => undefined);
      }
    }
  }

  /** Makes the entry again on the next connected session; `MemberReplacedError` if another client has the id. */
  private async placeAgain(): Promise<ZkSession> {
    const stop = this.stopping.signal;
    const placing = onConnectedSession(this.init.client, Infinity, `the entry of member "${this.id}"`, async (next) => {
      if (!(await this.place(next, false))) throw new MemberReplacedError(this.group, this.id);
      return next;
    });
    // A leave while cut off does not wait for the connection; an entry made after it is deleted then.
    placing.then(
      async (made) => {
        if (stop.aborted && !this.ended.signal.aborted) await this.deleteOwn(made).catch(() => undefined);
      },
      () => undefined,
    );
    return abortable(placing, [stop]);
  }

  /** Resolves once the node's watch fires (or we stop): whether the node existed when watched. */
  private async watchOwn(session: ZkSession): Promise<boolean> {
    await session.whenConnected(this.stopping.signal);
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    const listener: ZkWatchListener = () => wake();
    const present = await session.watchData(this.init.path, listener);
    if (!present) return false;
    try {
      await abortable(woken, [this.stopping.signal]);
    } catch {
      // stopping
    } finally {
      session.unwatch(this.init.path, listener);
    }
    return !(await this.gone(session));
  }

  /** Whether the node is gone (or not ours) now, read after a wake; a lost session counts as gone. */
  private async gone(session: ZkSession): Promise<boolean> {
    if (this.stopping.signal.aborted || session.isLost) return true;
    try {
      const { stat } = await session.getDataAndStat(this.init.path);
      return stat.owner !== `0x${session.id}`;
    } catch (error) {
      if (isZkCode(error, 'NO_NODE')) return true;
      throw error;
    }
  }

  /** Stops keeping the entry; `replaced`: it was taken from us, and `signal` aborts with it. */
  private finish(replaced?: MemberReplacedError): void {
    if (this.stopping.signal.aborted) return;
    this.stopping.abort();
    if (replaced) this.ended.abort(replaced);
    this.init.client.session.letGo(this.init.path);
    this.init.onEnd(this);
  }

  /** Stops keeping the entry, then deletes its node if it is still ours. */
  private async remove(): Promise<void> {
    const { client } = this.init;
    this.finish();
    await this.kept;
    if (this.ended.signal.aborted || client.isClosed) return;
    // Cut off: deleted once connected again. Past the session timeout without a connection
    // the server has ended the session, and the node with it (a session given back deletes it first: let go).
    const subject = `the leave of member "${this.id}"`;
    await onConnectedSession(client, client.session.timeoutMs, subject, (session) => this.deleteOwn(session)).catch(
      () => undefined,
    );
  }

  /** Deletes the entry's node on `session` if it is ours (never another's that took the id over). */
  private async deleteOwn(session: ZkSession): Promise<void> {
    const { path } = this.init;
    session.letGo(path);
    try {
      const { stat } = await session.getDataAndStat(path);
      if (stat.owner === `0x${session.id}`) await session.multi([{ op: 'remove', path, version: stat.version }]);
    } catch (error) {
      if (!(error instanceof ZkOperationError) || error.zkCode === 'CONNECTION_LOSS') throw error;
      // NO_NODE: gone already; BAD_VERSION: taken over meanwhile.
    }
  }
}
