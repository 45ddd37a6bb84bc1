import type { DirectorySweeper } from './directory-sweeper.js';
import type { NodeReaper } from './node-reaper.js';
import type { ZkClient } from '../session/zk-client.js';
import type { ZkSession } from '../session/zk-session.js';
import type { LeaseDirectories, SemaphoreRef } from './directory-kind.js';

/** What every lease acquisition of one backend shares. */
export interface LeaseContext {
  readonly client: ZkClient;
  readonly reaper: NodeReaper;
  readonly sweeper: DirectorySweeper;
  readonly directories: LeaseDirectories;
  /** Written into every lease node, so `leaseContenders()` can say who is who. */
  readonly identity: Buffer;
}

export interface LeaseRequest extends SemaphoreRef {
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
}

export interface LeaseGrant {
  readonly session: ZkSession;
  readonly node: string;
}
