import { LockLostError } from '../errors/errors.js';
import type { LockBackend, LockHandle, RecordData } from '../port/lock-backend.js';

/**
 * Writes the record `name` while `handle` holds its lock (`writeRecord` with
 * `whileHolding`: one transaction with a check that the lock's node exists, so the write
 * cannot land once that node is gone). Tried again while the backend cannot be reached and
 * `holding()` is still true. Resolves `true` once written, `false` when the lock was lost
 * or `holding()` turned false first (nothing written then); rejects with any other error.
 */
export async function writeWhileHolding(
  backend: LockBackend,
  name: string,
  data: RecordData,
  handle: LockHandle,
  holding: () => boolean,
): Promise<boolean> {
  for (;;) {
    if (!holding()) return false;
    try {
      await backend.writeRecord(name, data, { whileHolding: handle });
      return true;
    } catch (error) {
      // Compared by code too: the backend may come from another copy of the package.
      const code = (error as { code?: unknown } | null)?.code;
      if (error instanceof LockLostError || code === 'LOCK_LOST') return false;
      if (code !== 'LOCK_UNAVAILABLE') throw error;
    }
  }
}
