import { ZkOperationError } from '../../errors/errors.js';
import { connectedServer, queueRequest } from './zk-client-internals.js';
import { chrootOf } from './chroot.js';
import { aclBytes, inRequests, type ZkOp } from './request-batches.js';
import { newMultiReadRequest } from './wire/jute-codec.js';
import type { MultiResult, ZkReadOp } from './wire/multi-read.js';
import { ZkSessionLifecycle } from './zk-session-lifecycle.js';
import type { ZkReadResult, ZkStat } from './zk-session-types.js';
import { readResultOf, toStat, type RawStat } from './zk-stat.js';

/** The most ops `readAll` puts in one `multiRead` (and at most `MAX_REQUEST_BYTES` of them): its reply of lock nodes' data stays well below 1 MB too. */
export const MULTI_READ_OPS = 500;

/**
 * A session's reads without a watch: single reads, and many reads sent together as
 * `multiRead`s where the server takes them. `ZkSession` adds writes and watched reads.
 */
export abstract class ZkSessionReads extends ZkSessionLifecycle {
  private requestSizes: { chrootBytes: number; aclBytes: number } | undefined;

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

  /** `getData` with the node's stat (without a watch). */
  async getDataAndStat(path: string): Promise<{ data: Buffer; stat: ZkStat }> {
    const [data, stat] = await this.call<[Buffer | undefined, RawStat]>('getData', path, (cb) =>
      this.client.getData(path, cb as never),
    );
    return { data: data ?? Buffer.alloc(0), stat: toStat(stat) };
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
   * Reads, all sent at once: as `multiRead`s of up to `MULTI_READ_OPS` ops (and
   * `MAX_REQUEST_BYTES`) when the server takes them, otherwise one request each. Per op,
   * in order, its result or the ZooKeeper error it met. Rejects when a `multiRead` fails
   * whole (a lost connection) or the session is lost.
   */
  async readAll(ops: readonly ZkReadOp[]): Promise<ZkReadResult[]> {
    if (ops.length < 2 || !this.canReadTogether()) return Promise.all(ops.map((op) => this.readOne(op)));
    const runs = this.inRequests(ops, (op) => [op], MULTI_READ_OPS);
    return (await Promise.all(runs.map((run) => this.multiRead(run)))).flat();
  }

  /**
   * `items` in consecutive runs, each run's ops (`opsOf`) small enough for one `multi` or
   * `multiRead` (`MAX_REQUEST_BYTES`, at most `maxOps`): a longer request would make
   * ZooKeeper drop the connection.
   */
  inRequests<T>(items: readonly T[], opsOf: (item: T) => readonly ZkOp[], maxOps = Infinity): T[][] {
    this.requestSizes ??= {
      chrootBytes: Buffer.byteLength(chrootOf(this.connectionString) ?? '', 'utf8'),
      aclBytes: aclBytes(this.acl),
    };
    return inRequests(items, opsOf, this.requestSizes, maxOps);
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
