import * as zookeeper from 'node-zookeeper-client';

import { zkErrorName } from './zk-error-code.js';
import type { MultiResult } from './wire/multi-read.js';
import type { ZkReadResult, ZkStat } from './zk-session-types.js';

/** A `Stat` as node-zookeeper-client decodes it: its longs as 8-byte buffers. */
export interface RawStat {
  pzxid: Buffer;
  czxid: Buffer;
  mzxid: Buffer;
  ctime: Buffer;
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
