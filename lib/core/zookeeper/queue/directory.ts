import { ZkOperationError } from '../../errors/errors.js';
import { MULTI_READ_OPS, type ZkReadOp, type ZkReadResult, type ZkSession } from '../session/zk-session.js';
import { isZkCode } from '../session/zk-error-code.js';

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
 * gone re-creates it (see `QueueAcquisition`).
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

/**
 * The children of each directory of `dirs` (`null` for one that does not exist), read
 * together: as one `multiRead` when the server takes it (each directory's children, then
 * its stat: the children read carries none in a `multiRead`; several when over
 * `MAX_REQUEST_BYTES`, all sent at once), otherwise one read each,
 * sent at once. Either way each directory's read fails or succeeds on its own.
 */
export function listChildrenTogether(session: ZkSession, dirs: readonly string[]): Array<Promise<Listing | null>> {
  if (dirs.length < 2 || !session.canReadTogether()) return dirs.map((dir) => listChildren(session, dir));
  const readsOf = (path: string): ZkReadOp[] => [
    { op: 'getChildren', path },
    { op: 'getData', path },
  ];
  // As many multiReads as their bytes take (MAX_REQUEST_BYTES), all sent at once.
  return session.inRequests(dirs, readsOf, MULTI_READ_OPS).flatMap((run) => {
    const reading = session.multiRead(run.flatMap(readsOf));
    return run.map((dir, i) => reading.then((results) => listingOf(dir, results[2 * i], results[2 * i + 1])));
  });
}

/** One directory's listing from its children read and its data read, both of one `multiRead`. */
function listingOf(dir: string, children: ZkReadResult, data: ZkReadResult): Listing | null {
  const listed = presentOrGone(children, 'getChildren', dir);
  if (!listed) return null;
  const read = presentOrGone(data, 'getData', dir);
  if (!read) return null;
  if (!('children' in listed) || !('stat' in read)) throw new Error(`multiRead of ${dir}: results out of order`);
  return { children: listed.children, stat: read.stat };
}

/**
 * A read's result when it found its node; `undefined` when the node is gone (NO_NODE, as
 * when released between two reads); any other error thrown as a `ZkOperationError`.
 */
export function presentOrGone(
  result: ZkReadResult,
  op: string,
  path: string,
): Exclude<ZkReadResult, { readonly error: string }> | undefined {
  if (!('error' in result)) return result;
  if (result.error === 'NO_NODE') return undefined;
  throw new ZkOperationError(op, path, result.error);
}
