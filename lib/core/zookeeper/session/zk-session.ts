import * as zookeeper from 'node-zookeeper-client';

import { ZkOperationError } from '../../errors/errors.js';
import { sendingTogether } from './zk-client-internals.js';
import { ZkSessionReads } from './zk-session-reads.js';
import { toStat, type RawStat } from './zk-stat.js';
import type { ZkMultiOp, ZkNodeMode, ZkStat, ZkWatchListener } from './zk-session-types.js';

export { MULTI_READ_OPS } from './zk-session-reads.js';
export type {
  ZkMultiOp,
  ZkNodeMode,
  ZkReadOp,
  ZkReadResult,
  ZkSessionConfig,
  ZkStat,
  ZkWatchListener,
} from './zk-session-types.js';

const CREATE_MODES: Record<ZkNodeMode, number> = {
  persistent: zookeeper.CreateMode.PERSISTENT,
  'ephemeral-sequential': zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL,
};

/**
 * One ZooKeeper session, over one node-zookeeper-client instance, as promises.
 *
 * It covers the client's gaps: no read timeout (a silent server is detected and the
 * connection dropped, see `SessionLiveness`), expiry reported only on the next contact
 * (the session is declared lost once the server may have expired it), and requests queued
 * while disconnected that the client never answers once the session dies (rejected).
 * `signal` aborts, with a `ZkSessionLostError`, the moment the session is known or
 * presumed gone; `onDistrust` listeners are told earlier, when the server *may* expire it
 * within the safety margin, which is when holders must stop trusting their locks.
 * Events: `connected`, `disconnected`, `at-risk`, `lost` (error); `tcp-accepted` and
 * `tcp-failed` (error) for each TCP connection attempt.
 */
export class ZkSession extends ZkSessionReads {
  async create(path: string, data: Buffer, mode: ZkNodeMode): Promise<string> {
    const ephemeral = mode === 'ephemeral-sequential';
    if (ephemeral) this.ownNodes.creating(path);
    try {
      const [created] = await this.call<[string]>('create', path, (cb) =>
        this.client.create(path, data, this.acl, CREATE_MODES[mode], cb as never),
      );
      if (ephemeral) this.ownNodes.answered(path, created);
      return created;
    } catch (error) {
      if (ephemeral && refused(error)) this.ownNodes.answered(path, undefined);
      throw error;
    }
  }

  /**
   * Reads `path` with a one-shot data watch (not `exists`: on a node that just vanished
   * that leaves a creation watch that never fires). `listener` gets the watch's event
   * (or, rarely, the event of an earlier watch on the same path: a harmless early wake);
   * `false` means the node does not exist and nothing is watched. One ZooKeeper watch
   * serves every listener of a path; `unwatch` drops ours.
   */
  async watchData(path: string, listener: ZkWatchListener): Promise<boolean> {
    return (await this.watchedRead(path, listener, 'getData', () => true)) ?? false;
  }

  /**
   * `watchData` that also returns what it read: the node's data (empty when it has none),
   * or `null` when the node does not exist (then nothing is watched).
   */
  async watchDataValue(path: string, listener: ZkWatchListener): Promise<Buffer | null> {
    return this.watchedRead(path, listener, 'getData', ([data]) => (data as Buffer | undefined) ?? Buffer.alloc(0));
  }

  /** Overwrites `path`'s data, whatever its version (a write: the leader commits it). */
  async setData(path: string, data: Buffer): Promise<void> {
    await this.call('setData', path, (cb) => this.client.setData(path, data, -1, cb as never));
  }

  /**
   * `getChildren` with a one-shot children watch (any child created or deleted fires it),
   * or `null` when `path` does not exist (then nothing is watched). As with `watchData`,
   * `listener` is registered before asking; `unwatch` drops it.
   */
  async watchChildren(path: string, listener: ZkWatchListener): Promise<{ children: string[]; stat: ZkStat } | null> {
    return this.watchedRead(path, listener, 'getChildren', ([children, stat]) => ({
      children: children as string[],
      stat: toStat(stat as RawStat),
    }));
  }

  /**
   * `watchData` answering the node's data version (how many times its data was set), or
   * `null` when the node does not exist (then nothing is watched).
   */
  async watchDataVersion(path: string, listener: ZkWatchListener): Promise<number | null> {
    return this.watchedRead(path, listener, 'getData', ([, stat]) => (stat as { version: number }).version);
  }

  /**
   * A read with a one-shot watch, `listener` registered before asking: the reply and the
   * notification can arrive in one TCP chunk, and the client emits the notification before
   * our promise for the reply resolves. `null` when the node does not exist (then nothing
   * is watched, and the listener is dropped).
   */
  private async watchedRead<T>(
    path: string,
    listener: ZkWatchListener,
    op: 'getData' | 'getChildren',
    result: (reply: unknown[]) => T,
  ): Promise<T | null> {
    this.watchers.add(path, listener);
    try {
      const reply = await this.call<unknown[]>(op, path, (cb) =>
        op === 'getData'
          ? this.client.getData(path, this.dispatch, cb as never)
          : this.client.getChildren(path, this.dispatch, cb as never),
      );
      return result(reply);
    } catch (error) {
      this.unwatch(path, listener);
      if (error instanceof ZkOperationError && error.zkCode === 'NO_NODE') return null;
      throw error;
    }
  }

  unwatch(path: string, listener: ZkWatchListener): void {
    this.watchers.remove(path, listener);
  }

  /** Listeners waiting on watches, for tests asserting that nothing is left behind. */
  watcherCount(): number {
    return this.watchers.count();
  }

  /** Runs `send`; the requests it makes synchronously leave in one socket write. */
  sendingTogether<T>(send: () => T): T {
    return sendingTogether(this.client, send);
  }

  /**
   * A lookup sent behind a barrier found no node of the ephemeral sequential create of
   * `requested` (whose reply was lost): it did not happen, or its node is gone. The session
   * stops listing it (see `OwnNodes`).
   */
  noneCreated(requested: string): void {
    this.ownNodes.answered(requested, undefined);
  }

  async remove(path: string): Promise<void> {
    try {
      await this.call('remove', path, (cb) => this.client.remove(path, -1, cb as never));
    } catch (error) {
      if (error instanceof ZkOperationError && error.zkCode === 'NO_NODE') this.ownNodes.removed(path);
      throw error;
    }
    this.ownNodes.removed(path);
  }

  /**
   * Several writes as one transaction (ZooKeeper's `multi`), one request and one commit:
   * all of them happen, or none. Resolves with each op's created path (`undefined` for a
   * delete), in order. A ZooKeeper error fails the whole transaction, nothing changed, as
   * a `ZkOperationError` naming the first op that failed. As with any write, a connection
   * loss leaves unknown whether it committed (all of it or nothing).
   */
  async multi(ops: readonly ZkMultiOp[]): Promise<Array<string | undefined>> {
    const transaction = this.client.transaction();
    for (const op of ops) {
      if (op.op === 'create') transaction.create(op.path, op.data, this.acl, CREATE_MODES[op.mode]);
      else removeAtVersion(transaction, op.path, op.version ?? -1);
    }
    let failed = 0; // the index of the op that failed the transaction
    const ephemeral = ops.filter((op) => op.op === 'create' && op.mode === 'ephemeral-sequential');
    for (const { path } of ephemeral) this.ownNodes.creating(path);
    try {
      const [results] = await this.call<[Array<{ path?: string }>]>('multi', ops[0].path, (cb) =>
        transaction.commit((error, results?: Array<{ err?: number }>) => {
          failed = Math.max(0, results?.findIndex((result) => result.err !== undefined && result.err !== 0) ?? 0);
          cb(error as Error | null, results);
        }),
      );
      ops.forEach((op, i) => {
        if (op.op === 'remove') this.ownNodes.removed(op.path);
        else if (op.mode === 'ephemeral-sequential') this.ownNodes.answered(op.path, results[i].path);
      });
      return results.map((result) => result.path);
    } catch (error) {
      // Refused whole: nothing of it happened.
      if (refused(error)) for (const { path } of ephemeral) this.ownNodes.answered(path, undefined);
      if (!(error instanceof ZkOperationError) || failed === 0) throw error;
      throw new ZkOperationError('multi', ops[failed].path, error.zkCode, error.cause);
    }
  }
}

/** A ZooKeeper error answered a write: it did not happen (a lost connection leaves that unknown). */
function refused(error: unknown): boolean {
  return error instanceof ZkOperationError && error.zkCode !== 'CONNECTION_LOSS';
}

/**
 * `transaction.remove(path, version)`, with version 0 kept: node-zookeeper-client turns a
 * version of 0 into -1 (`version || -1`), which would delete at any version.
 */
function removeAtVersion(transaction: zookeeper.Transaction, path: string, version: number): void {
  transaction.remove(path, version);
  const ops = (transaction as unknown as { ops: Array<{ version: number }> }).ops;
  ops[ops.length - 1].version = version;
}
