import type { ZkSession } from '../session/zk-session.js';
import { isZkCode } from '../util/zk-error-code.js';

const EMPTY = Buffer.alloc(0);

/** Creates `path` and any missing ancestors as persistent nodes; existing ones are fine. */
export async function ensurePath(session: ZkSession, path: string): Promise<void> {
  try {
    await session.create(path, EMPTY, 'persistent');
  } catch (error) {
    if (isZkCode(error, 'NODE_EXISTS')) return;
    const parent = path.slice(0, path.lastIndexOf('/'));
    // NO_NODE for a child of "/" means the chroot itself is missing: nothing to create.
    if (!isZkCode(error, 'NO_NODE') || parent === '') throw error;
    await ensurePath(session, parent);
    await ensurePath(session, path);
  }
}

/**
 * Deletes a lock directory if it is empty. Safe against a concurrent acquire: ZooKeeper
 * refuses to delete a directory with children, and a create that finds the directory
 * gone re-creates it (see `LockAcquisition`).
 */
export async function removeIfEmpty(session: ZkSession, dir: string): Promise<void> {
  try {
    await session.remove(dir);
  } catch {
    // NOT_EMPTY (someone queued), NO_NODE (someone else removed it), or a lost
    // connection: each leaves the directory to whoever releases last.
  }
}

/** The children of `dir`, or none if it does not exist. */
/** A directory's children and the stat its read returned. */
export type Listing = NonNullable<Awaited<ReturnType<typeof listChildren>>>;

export async function listChildren(
  session: ZkSession,
  dir: string,
): Promise<Awaited<ReturnType<ZkSession['getChildren']>> | null> {
  try {
    return await session.getChildren(dir);
  } catch (error) {
    if (isZkCode(error, 'NO_NODE')) return null;
    throw error;
  }
}
