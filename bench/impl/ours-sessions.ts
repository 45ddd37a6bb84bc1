import type { ZkLockBackend } from '../../lib/core/zookeeper/zk-lock-backend.js';
import type { Counts } from '../workers/impl.protocol.js';

/** How an op of ours opens and closes its sessions: each tracked, so the worker's close ends any left open. */
export interface OursSessions {
  open(): Promise<ZkLockBackend>;
  close(backend: ZkLockBackend): Promise<void>;
}

/** The library's own request counter (notifications included). */
export function counts(backend: ZkLockBackend): Counts {
  return backend.client.counter.snapshot();
}
