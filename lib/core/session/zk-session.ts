import * as zookeeper from 'node-zookeeper-client';

import { ZkOperationError } from '../errors/zk-operation.error.js';
import { zkErrorName } from '../util/zk-error-code.js';
import { connectedServer, queueRequest, sendingTogether } from './zk-client.internals.js';
import { newMultiReadRequest } from './wire/jute-codec.install.js';
import type { MultiResult, ZkReadOp } from './wire/multi-read.wire.js';
import { ZkSessionLifecycle } from './zk-session.lifecycle.js';
import type { ZkMultiOp, ZkNodeMode, ZkReadResult, ZkStat, ZkWatchListener } from './zk-session.types.js';

export type {
  ZkMultiOp,
  ZkNodeMode,
  ZkReadOp,
  ZkReadResult,
  ZkSessionConfig,
  ZkStat,
  ZkWatchListener,
} from './zk-session.types.js';

/** The most ops `readAll` puts in one `multiRead`: its request and reply stay far below ZooKeeper's 1 MB `jute.maxbuffer`. */
export const MULTI_READ_OPS = 500;

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
export class ZkSession extends ZkSessionLifecycle {
  async create(path: string, data: Buffer, mode: ZkNodeMode): Promise<string> {
    const [created] = await this.call<[string]>('create', path, (cb) =>
      this.client.create(path, data, this.acl, CREATE_MODES[mode], cb as never),
    );
    return created;
  }

  /** Whether `path` exists (without a watch). */
  async exists(path: string): Promise<boolean> {
    const [stat] = await this.call<[unknown]>('exists', path, (cb) => this.client.exists(path, cb as never));
    return Boolean(stat);
  }

  async getChildren(path: string): Promise<{ children: string[]; stat: ZkStat }> {
    const [children, stat] = await this.call<[string[], RawStat]>('getChildren', path, (cb) =>
      this.client.getChildren(path, cb as never),
    );
    return { children, stat: toStat(stat) };
  }

  async getData(path: string): Promise<Buffer | undefined> {
    const [data] = await this.call<[Buffer | undefined]>('getData', path, (cb) =>
      this.client.getData(path, cb as never),
    );
    return data;
  }

  /**
   * Reads `path` with a one-shot data watch (not `exists`: on a node that just vanished
   * that leaves a creation watch that never fires). `listener` gets the watch's event
   * (or, rarely, the event of an earlier watch on the same path: a harmless early wake);
   * `false` means the node does not exist and nothing is watched. One ZooKeeper watch
   * serves every listener of a path; `unwatch` drops ours.
   */
  async watchData(path: string, listener: ZkWatchListener): Promise<boolean> {
    // Listen before asking: the reply and the notification can arrive in one TCP chunk,
    // and the client emits the notification before our promise for the reply resolves.
    this.watchers.add(path, listener);
    try {
      await this.call('getData', path, (cb) => this.client.getData(path, this.dispatch, cb as never));
      return true;
    } catch (error) {
      this.unwatch(path, listener);
      if (error instanceof ZkOperationError && error.zkCode === 'NO_NODE') return false;
      throw error;
    }
  }

  /**
   * `watchData` that also returns what it read: the node's data (empty when it has none),
   * or `null` when the node does not exist (then nothing is watched).
   */
  async watchDataValue(path: string, listener: ZkWatchListener): Promise<Buffer | null> {
    this.watchers.add(path, listener); // before asking, as in watchData
    try {
      const [data] = await this.call<[Buffer | undefined]>('getData', path, (cb) =>
        this.client.getData(path, this.dispatch, cb as never),
      );
      return data ?? Buffer.alloc(0);
    } catch (error) {
      this.unwatch(path, listener);
      if (error instanceof ZkOperationError && error.zkCode === 'NO_NODE') return null;
      throw error;
    }
  }

  /** Data, creation time and (for an ephemeral node) its owner session id, in hex: what `locks()` lists. */
  async getDataAndCtime(
    path: string,
  ): Promise<{ data: Buffer | undefined; ctimeMs: number; owner: string | undefined }> {
    const [data, raw] = await this.call<[Buffer | undefined, RawStat]>('getData', path, (cb) =>
      this.client.getData(path, cb as never),
    );
    const { ctimeMs, owner } = toStat(raw);
    return { data, ctimeMs: ctimeMs!, owner };
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
    this.watchers.add(path, listener);
    try {
      const [children, stat] = await this.call<[string[], RawStat]>('getChildren', path, (cb) =>
        this.client.getChildren(path, this.dispatch, cb as never),
      );
      return { children, stat: toStat(stat) };
    } catch (error) {
      this.unwatch(path, listener);
      if (error instanceof ZkOperationError && error.zkCode === 'NO_NODE') return null;
      throw error;
    }
  }

  /**
   * `watchData` answering the node's data version (how many times its data was set), or
   * `null` when the node does not exist (then nothing is watched).
   */
  async watchDataVersion(path: string, listener: ZkWatchListener): Promise<number | null> {
    this.watchers.add(path, listener);
    try {
      const [, stat] = await this.call<[unknown, { version: number }]>('getData', path, (cb) =>
        this.client.getData(path, this.dispatch, cb as never),
      );
      return stat.version;
    } catch (error) {
      this.unwatch(path, listener);
      if (error instanceof ZkOperationError && error.zkCode === 'NO_NODE') return null;
      throw error;
    }
  }

  /** `getData` with the node's stat (without a watch). */
  async getDataAndStat(path: string): Promise<{ data: Buffer; stat: ZkStat }> {
    const [data, stat] = await this.call<[Buffer | undefined, RawStat]>('getData', path, (cb) =>
      this.client.getData(path, cb as never),
    );
    return { data: data ?? Buffer.alloc(0), stat: toStat(stat) };
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

  async remove(path: string): Promise<void> {
    await this.call('remove', path, (cb) => this.client.remove(path, -1, cb as never));
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
      else transaction.remove(op.path, -1);
    }
    let failed = 0; // the index of the op that failed the transaction
    try {
      const [results] = await this.call<[Array<{ path?: string }>]>('multi', ops[0].path, (cb) =>
        transaction.commit((error, results?: Array<{ err?: number }>) => {
          failed = Math.max(0, results?.findIndex((result) => result.err !== undefined && result.err !== 0) ?? 0);
          cb(error as Error | null, results);
        }),
      );
      return results.map((result) => result.path);
    } catch (error) {
      if (!(error instanceof ZkOperationError) || failed === 0) throw error;
      throw new ZkOperationError('multi', ops[failed].path, error.zkCode, error.cause);
    }
  }

  /**
   * Several reads as one request (ZooKeeper's `multiRead`, 3.6 and later), answered
   * together: per op, in order, its result or the ZooKeeper error it met (the other ops
   * are read all the same). Send one only when `canReadTogether()` says the server takes
   * it; a server that refuses it (UNIMPLEMENTED) is sent no other.
   */
  async multiRead(ops: readonly ZkReadOp[]): Promise<ZkReadResult[]> {
    const server = connectedServer(this.client);
    try {
      const [results] = await this.call<[MultiResult[]]>('multiRead', ops[0].path, (cb) =>
        queueRequest(this.client, newMultiReadRequest(ops), (error, payload) =>
          cb(error, (payload as { results: MultiResult[] } | undefined)?.results),
        ),
      );
      return results.map(readResultOf);
    } catch (error) {
      if (error instanceof ZkOperationError && error.zkCode === 'UNIMPLEMENTED') this.readsTogether.refused(server);
      throw error;
    }
  }

  /**
   * Reads, all sent at once: as `multiRead`s of up to `MULTI_READ_OPS` ops when the server
   * takes them, otherwise one request each. Per op, in order, its result or the ZooKeeper
   * error it met. Rejects when a `multiRead` fails whole (a lost connection) or the
   * session is lost.
   */
  async readAll(ops: readonly ZkReadOp[]): Promise<ZkReadResult[]> {
    if (ops.length < 2 || !this.canReadTogether()) return Promise.all(ops.map((op) => this.readOne(op)));
    const chunks: Array<Promise<ZkReadResult[]>> = [];
    for (let at = 0; at < ops.length; at += MULTI_READ_OPS)
      chunks.push(this.multiRead(ops.slice(at, at + MULTI_READ_OPS)));
    return (await Promise.all(chunks)).flat();
  }

  /** One read of `readAll`, as a request of its own. */
  private async readOne({ op, path }: ZkReadOp): Promise<ZkReadResult> {
    try {
      if (op === 'getChildren') return { children: (await this.getChildren(path)).children };
      const [data, stat] = await this.call<[Buffer | undefined, RawStat]>('getData', path, (cb) =>
        this.client.getData(path, cb as never),
      );
      return { data, stat: toStat(stat) };
    } catch (error) {
      if (error instanceof ZkOperationError) return { error: error.zkCode };
      throw error;
    }
  }

  /**
   * True when a `multiRead` can be sent now: the server connected now said it takes one.
   * Asked about a server for the first time, it asks it in the background (and says no).
   */
  canReadTogether(): boolean {
    return this.readsTogether.usable();
  }

  /**
   * Settles once `canReadTogether()` knows for the server connected now (each server is
   * asked once); `undefined` when it knows already.
   */
  readyToReadTogether(): Promise<void> | undefined {
    return this.readsTogether.ready();
  }
}

interface RawStat {
  pzxid: Buffer;
  czxid: Buffer;
  mzxid: Buffer;
  ctime: Buffer;
  ephemeralOwner: Buffer;
  dataLength: number;
}

function toStat(raw: RawStat): ZkStat {
  const owner = raw.ephemeralOwner.readBigUInt64BE(0);
  return {
    pzxid: raw.pzxid.readBigInt64BE(0),
    czxid: raw.czxid.readBigInt64BE(0),
    mzxid: raw.mzxid.readBigInt64BE(0),
    dataLength: raw.dataLength,
    ctimeMs: Number(raw.ctime.readBigInt64BE(0)),
    owner: owner === 0n ? undefined : `0x${owner.toString(16).padStart(16, '0')}`,
  };
}

function readResultOf(result: MultiResult): ZkReadResult {
  if (result.children) return { children: result.children };
  if (result.stat) return { data: result.data, stat: toStat(result.stat as RawStat) };
  const { create } = zookeeper.Exception as unknown as { create(code: number): Error };
  return { error: zkErrorName(create(result.err ?? 0)) };
}
