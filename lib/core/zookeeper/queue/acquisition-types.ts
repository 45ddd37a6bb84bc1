import type { NodeFormat, LockMode } from '../../port/lock-backend.js';
import type { ZkClient } from '../session/zk-client.js';
import type { ZkSession } from '../session/zk-session.js';
import type { DirectorySweeper } from './directory-sweeper.js';
import type { Listing } from './directory.js';
import type { NodeReaper } from './node-reaper.js';

/** What every acquisition of one backend shares. */
export interface AcquisitionContext {
  readonly client: ZkClient;
  readonly reaper: NodeReaper;
  readonly sweeper: DirectorySweeper;
  /** Written into every lock node, so `contenders()` can say who is who. */
  readonly identity: Buffer;
}

export interface AcquisitionRequest {
  readonly name: string;
  /** The lock's directory: `<rootPath>/<encoded name>`. */
  readonly dir: string;
  readonly mode: LockMode;
  /** How our node is named (resolved: the call's, else the client's). */
  readonly nodeFormat: NodeFormat;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  /** The first create, sent already by the caller (a multi-lock sends those of all names as one transaction). */
  readonly sent?: SentCreate;
}

/**
 * A create of this call's node sent by someone else on `session`, its name starting with
 * `prefix`. `created` resolves with the node's path, or `undefined` when it certainly was
 * not created (the call then creates it itself); it rejects like the create itself would
 * (a connection loss: the guid lookup then tells whether it happened).
 */
export interface SentCreate {
  readonly session: ZkSession;
  readonly prefix: string;
  readonly created: Promise<string | undefined>;
  /** The directory's children read, sent right behind the create (`null` if it failed). */
  readonly listed: Promise<Listing | null>;
  /** Called by the attempt that takes this create as its own (a sender may send only what is taken). */
  readonly claim?: () => void;
}

export interface Grant {
  readonly session: ZkSession;
  readonly node: string;
  readonly fencingToken: bigint;
}
