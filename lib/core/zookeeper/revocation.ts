import { assertLockDirectory } from './queue/directory-kind.js';
import { listChildren } from './queue/directory.js';
import { blockerAt, orderQueue } from '../port/lock-queue.js';
import type { ZkSession } from './session/zk-session.js';
import { isZkCode } from './session/zk-error-code.js';
import { revokeRequestData } from './revocation-wire.js';

/**
 * Asks every current holder of the lock in `dir` to release it, as Curator's
 * `Revoker.attemptRevoke` does for one node: `__REVOKE__` written into the holder's node.
 * Waiters are not asked (they hold nothing yet). Resolves with how many holders were asked;
 * one that released meanwhile (its node is gone) is not counted. Costs one children read
 * and one `setData` per holder, sent together: two round trips.
 *
 * A lease semaphore's name is refused (`LockKindMismatchError`), as by `contenders()`.
 * A holder that did not make its lock revocable is not told; its node's data (the identity
 * `contenders()` shows) reads `__REVOKE__` from then on.
 */
export async function requestRevocation(session: ZkSession, dir: string, name: string): Promise<number> {
  const listing = await throughConnectionLoss(session, () => listChildren(session, dir));
  await assertLockDirectory(session, dir, name, listing); // a semaphore's leases are not locks: refused, as contenders() does
  const queue = orderQueue(listing?.children ?? []);
  const holders = queue.filter((_, index) => blockerAt(queue, index) === null);
  const asked = await Promise.all(holders.map((holder) => ask(session, `${dir}/${holder.node}`)));
  return asked.filter(Boolean).length;
}

async function ask(session: ZkSession, path: string): Promise<boolean> {
  try {
    await throughConnectionLoss(session, () => session.setData(path, revokeRequestData()));
    return true;
  } catch (error) {
    if (isZkCode(error, 'NO_NODE')) return false; // released meanwhile, as Curator's Revoker ignores it
    throw error;
  }
}

/**
 * Runs an idempotent request again after a lost connection (the session survives it);
 * rejects with the session's loss if it ends first.
 */
async function throughConnectionLoss<T>(session: ZkSession, request: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await request();
    } catch (error) {
      if (!isZkCode(error, 'CONNECTION_LOSS')) throw error;
      await session.whenConnected();
    }
  }
}
