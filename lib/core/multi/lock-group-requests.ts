import type { NodeFormat, LockHandle } from '../port/lock-backend.js';
import type { PlannedLock } from './multi-lock-plan.js';

/**
 * How a backend sends the requests of several locks together (ZooKeeper: one transaction
 * for all the creates, one for all the deletes). Optional: without it, each lock is tried
 * and released on its own, all at the same time.
 */
export interface LockGroupRequests {
  /**
   * Tries every lock of `locks` at once, never waiting for a holder: per lock, its handle
   * or `null` (taken elsewhere). `signals`: one per lock, each try's own.
   */
  tryAll(
    locks: readonly PlannedLock[],
    signals: readonly AbortSignal[],
    nodeFormat: NodeFormat | undefined,
  ): Promise<Array<PromiseSettledResult<LockHandle | null>>>;
  /** Releases every handle of `handles`; settles once each release has. */
  releaseAll(handles: readonly LockHandle[]): Promise<Array<PromiseSettledResult<void>>>;
}
