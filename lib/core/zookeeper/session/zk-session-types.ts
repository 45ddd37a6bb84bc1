import type { OwnNodes } from './own-nodes.js';
import type { ZkCredentials } from './zk-credentials.js';
import type { ZkRequestCounter } from './session-call.js';

export interface ZkSessionConfig {
  readonly connectionString: string;
  readonly sessionTimeoutMs: number;
  readonly spinDelayMs: number;
  readonly counter: ZkRequestCounter;
  /** Digest credentials: sent on every connect, and the ACL of every node created. */
  readonly credentials?: ZkCredentials;
  /** Ask the server for this session back (it was declared lost by the client alone), and delete `nodes` first. */
  readonly reattach?: ZkReattach;
}

/** A server session to ask back: its id and password, and the nodes its last session object left. */
export interface ZkReattach {
  readonly sessionId: Buffer;
  readonly sessionPassword: Buffer;
  readonly nodes: OwnNodes;
}

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
  /** The session owning an ephemeral node, `0x…` in hex as ZooKeeper's logs show it; `undefined` for a persistent node. */
  readonly owner?: string;
}

export type ZkWatchListener = (event: { readonly type: string; readonly path: string }) => void;

export type ZkNodeMode = 'persistent' | 'ephemeral-sequential';

export type { ZkReadOp } from './wire/multi-read.js';

/**
 * One read of a `multiRead` (or `readAll`): the children, or the data (`undefined` for a
 * node created without any) and stat, or the ZooKeeper error it met (e.g. `NO_NODE`).
 */
export type ZkReadResult =
  | { readonly children: string[] }
  | { readonly data: Buffer | undefined; readonly stat: ZkStat }
  | { readonly error: string };

/** One write of a `multi` transaction. */
export type ZkMultiOp =
  | { readonly op: 'create'; readonly path: string; readonly data: Buffer; readonly mode: ZkNodeMode }
  /** `version`: only if the node's data version is still this one (BAD_VERSION otherwise); any when absent. */
  | { readonly op: 'remove'; readonly path: string; readonly version?: number };
