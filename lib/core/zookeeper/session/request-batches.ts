import type zookeeper from 'node-zookeeper-client';

import type { ZkReadOp } from './wire/multi-read.js';

/**
 * The most bytes of ops one `multi` or `multiRead` carries. ZooKeeper reads no request
 * longer than its `jute.maxbuffer` (by default 0xfffff, 1,048,575 bytes): it logs "Len
 * error" and drops the connection, failing every request in flight with it. Half of the
 * default leaves room for the frame and headers and for a server whose limit is set
 * somewhat lower; many ops go as several requests of at most this many bytes.
 */
export const MAX_REQUEST_BYTES = 512 * 1024;

/**
 * Each op's bytes besides its path, data and ACL: its multi header (type, done flag, error:
 * 9), the lengths of its path and data and its ACL count (12), and its create flags,
 * version or watch flag (4); rounded up.
 */
const OP_OVERHEAD_BYTES = 32;

export type ZkNodeMode = 'persistent' | 'ephemeral' | 'ephemeral-sequential';

/** One write of a `multi` transaction. */
export type ZkMultiOp =
  | { readonly op: 'create'; readonly path: string; readonly data: Buffer; readonly mode: ZkNodeMode }
  /** `version`: only if the node's data version is still this one (BAD_VERSION otherwise); any when absent. */
  | { readonly op: 'remove'; readonly path: string; readonly version?: number }
  /** Fails the transaction unless the node exists (and, with `version`, has that data version). */
  | { readonly op: 'check'; readonly path: string; readonly version?: number }
  /** `version` as for a remove. */
  | { readonly op: 'set'; readonly path: string; readonly data: Buffer; readonly version?: number };

export type ZkOp = ZkMultiOp | ZkReadOp;

/** The bytes a ZooKeeper ACL list takes on the wire: per entry, its permissions and its scheme and id with their lengths. */
export function aclBytes(acl: readonly zookeeper.ACL[]): number {
  return acl.reduce(
    (sum, { id }) => sum + 12 + Buffer.byteLength(id.scheme, 'utf8') + Buffer.byteLength(id.id, 'utf8'),
    4,
  );
}

/**
 * `items` in consecutive runs, in order, each run's ops (`opsOf`) one request's worth:
 * at most `MAX_REQUEST_BYTES` bytes and `maxOps` ops (an item over that alone is a run
 * of its own). `chrootBytes`: what the client prepends to every path; `acl`, each
 * create's ACL bytes.
 */
export function inRequests<T>(
  items: readonly T[],
  opsOf: (item: T) => readonly ZkOp[],
  sizes: { readonly chrootBytes: number; readonly aclBytes: number },
  maxOps = Infinity,
): T[][] {
  const runs: T[][] = [];
  let run: T[] = [];
  let bytes = 0;
  let count = 0;
  for (const item of items) {
    const ops = opsOf(item);
    const itemBytes = ops.reduce((sum, op) => sum + opBytes(op, sizes), 0);
    if (run.length > 0 && (bytes + itemBytes > MAX_REQUEST_BYTES || count + ops.length > maxOps)) {
      runs.push(run);
      run = [];
      bytes = 0;
      count = 0;
    }
    run.push(item);
    bytes += itemBytes;
    count += ops.length;
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

function opBytes(op: ZkOp, { chrootBytes, aclBytes }: { chrootBytes: number; aclBytes: number }): number {
  const path = OP_OVERHEAD_BYTES + chrootBytes + Buffer.byteLength(op.path, 'utf8');
  if (op.op === 'create') return path + op.data.length + aclBytes;
  return op.op === 'set' ? path + op.data.length : path;
}
