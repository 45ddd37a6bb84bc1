import type { MultiAcquireOptions, LockList, LockBackend, MultiLockHandle } from '../port/lock-backend.js';
import { LockGroupHandle } from './lock-group-handle.js';
import type { LockGroupRequests } from './lock-group-requests.js';
import { MultiLockAcquisition } from './multi-lock-acquisition.js';
import { resolveMultiAcquireOptions } from '../port/options.js';
import { planLocks } from './multi-lock-plan.js';
import { nodeFormatFor } from '../port/node-format.js';

/**
 * Takes every lock of `locks` through `backend`, all or nothing, and never deadlocks
 * whatever order callers list the names in: see `MultiLockAcquisition`. Resolves with a
 * `MultiLockHandle`, or rejects with `LockTimeoutError` / `LockAbortedError` (naming the
 * lock it was waiting for) or the backend's error, holding nothing. Checks the options,
 * then the list (`InvalidOptionError`, `InvalidLockListError`, `InvalidLockNameError`),
 * before anything is sent. `timeoutMs` defaults to `Infinity`. A backend that can send
 * several locks' requests together passes `together` (`ZkLockGroupRequests`).
 *
 * ```ts
 * const locks = await acquireAll(backend, ['stock/7', { name: 'orders/42', mode: 'read' }], { timeoutMs: 5_000 });
 * try { await work(locks.signal); } finally { await locks.release(); }
 * ```
 */
export async function acquireAll(
  backend: LockBackend,
  locks: LockList,
  options?: MultiAcquireOptions,
  together?: LockGroupRequests,
): Promise<MultiLockHandle> {
  const resolved = resolveMultiAcquireOptions(options, Infinity);
  const plan = planLocks(locks);
  // A call's own format is checked against every mode before anything is sent; the client's default, by the backend.
  for (const { mode } of plan) if (resolved.nodeFormat) nodeFormatFor(mode, resolved.nodeFormat, resolved.nodeFormat);
  return new LockGroupHandle(await new MultiLockAcquisition(backend, plan, resolved, together).run(), together);
}
