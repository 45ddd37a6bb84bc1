import * as zookeeper from 'node-zookeeper-client';

import { zkErrorName } from './zk-error-code.js';
import type { MultiResult } from './wire/multi-read.js';

export interface ZkStat {
  /** zxid of the last change to this node's children, as ZooKeeper's signed 64-bit long. */
  readonly pzxid: bigint;
  readonly czxid: bigint;
  /** zxid of the last change to this node's data (its creation, or a later `setData`). */
  readonly mzxid?: bigint;
  /** Bytes of data the node holds (a lease directory's marker, for one). */
  readonly dataLength?: number;
  /** How many times the node's data was set since its creation (the version a conditional write names). */
  readonly version?: number;
  /** When the node was created: ms since the epoch, by the clock of the ZooKeeper leader that committed it. */
  readonly ctimeMs?: number;
  /** When the node's data was last written (or created): ms since the epoch, by the clock of the leader that committed it. */
  readonly mtimeMs?: number;
  /** The session owning an ephemeral node, `0x…` in hex as ZooKeeper's logs show it; `undefined` for a persistent node. */
  readonly owner?: string;
}

/**
 * One read of a `multiRead` (or `readAll`): the children, or the data (`undefined` for a
 * node created without any) and stat, or the ZooKeeper error it met (e.g. `NO_NODE`).
 */
export type ZkReadResult =
  | { readonly children: string[] }
  | { readonly data: Buffer | undefined; readonly stat: ZkStat }
  | { readonly error: string };

/** A `Stat` as node-zookeeper-client decodes it: its longs as 8-byte buffers. */
export interface RawStat {
  pzxid: Buffer;
  czxid: Buffer;
  mzxid: Buffer;
  ctime: Buffer;
  mtime: Buffer;
  ephemeralOwner: Buffer;
  dataLength: number;
  version: number;
}

export function toStat(raw: RawStat): ZkStat {
  const owner = raw.ephemeralOwner.readBigUInt64BE(0);
  return {
    pzxid: raw.pzxid.readBigInt64BE(0),
    czxid: raw.czxid.readBigInt64BE(0),
    mzxid: raw.mzxid.readBigInt64BE(0),
    dataLength: raw.dataLength,
    version: raw.version,
    ctimeMs: Number(raw.ctime.readBigInt64BE(0)),
    mtimeMs: Number(raw.mtime.readBigInt64BE(0)),
    owner: owner === 0n ? undefined : `0x${owner.toString(16).padStart(16, '0')}`,
  };
}

/** One op's answer in a `multiRead` reply, as `readAll` returns it. */
export function readResultOf(result: MultiResult): ZkReadResult {
  if (result.children) return { children: result.children };
  if (result.stat) return { data: result.data, stat: toStat(result.stat as RawStat) };
  const { create } = zookeeper.Exception as unknown as { create(code: number): Error };
  return { error: zkErrorName(create(result.err ?? 0)) };
}
