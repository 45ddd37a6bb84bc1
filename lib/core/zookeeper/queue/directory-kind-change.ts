import { waitForChange, type ChangeIo } from './acquisition.js';
import { listChildren } from './directory.js';
import type { ZkSession, ZkStat } from '../session/zk-session.js';
import { isZkCode } from '../session/zk-error-code.js';
import { directoryKindOf, leaseDirectoryData, type DirectoryKind } from './directory-marker.js';
import { LeaseLimitMismatchError, LockKindMismatchError } from '../../errors/errors.js';
import { leaseMessages } from '../../errors/messages.js';
import { isKazooLeaseNode, parseLeaseNode } from '../../port/lease-node.js';

/** What a call needs its name's directory to be. */
export type WantedKind = { readonly kind: 'lock' } | { readonly kind: 'lease'; readonly maxLeases: number };

/** A directory's data with the stat read along with it. */
export interface DirectoryRead {
  readonly data: Buffer;
  readonly stat: ZkStat;
}

const EMPTY = Buffer.alloc(0);

/** The directory data that makes a name `wanted`: none for a lock (as every lock recipe leaves it), the marker for a semaphore. */
function dataOf(wanted: WantedKind): Buffer {
  return wanted.kind === 'lock' ? EMPTY : leaseDirectoryData(wanted.maxLeases);
}

/** Whether a directory of `kind` is one of ours that an idle name may leave for the other kind, or another count. */
function changeable(kind: DirectoryKind): kind is Extract<DirectoryKind, { kind: 'lock' | 'lease' }> {
  return kind.kind === 'lock' || kind.kind === 'lease';
}

/** Whether `child` takes part in a directory of `kind`: a lease node in a semaphore's, any other node in a lock's. */
function belongsTo(kind: 'lock' | 'lease', child: string): boolean {
  const lease = parseLeaseNode(child) !== null || isKazooLeaseNode(child);
  return kind === 'lease' ? lease : !lease;
}

/**
 * The error for a call that wanted `wanted` and found `found`: one kind (or count) held
 * or awaited while the call asked for another, or a directory that is not ours to change.
 */
export function kindRefusal(name: string, wanted: WantedKind, found: DirectoryKind, where: string): Error {
  const maxLeases = found.kind === 'lease' || found.kind === 'kazoo-semaphore' ? found.maxLeases : undefined;
  if (wanted.kind === 'lease' && found.kind === 'lease')
    return new LeaseLimitMismatchError(name, wanted.maxLeases, found.maxLeases, where);
  return new LockKindMismatchError(name, wanted.kind, found.kind, where, maxLeases);
}

/**
 * One step towards making `dir` (read as `read`) the `wanted` kind, by a caller with no node
 * in it. Only our own two kinds change, and only while the name is idle: the change is one
 * transaction, [delete the directory at the data version read, create it with the wanted
 * data]. ZooKeeper deletes no directory that has a child, so it commits only while nobody
 * holds or awaits; nobody ever sees the name without its directory (Kazoo's recipes would
 * not make it again); and every acquirer checks, after its node is in, the directory it
 * is in (its creation and data zxids), which no change can replace while that node
 * stays. The data version turns away a marker rewritten in place (as Kazoo's Semaphore
 * writes its count after making its directory); a directory deleted and made again by a
 * racing change starts at the same version, but an idle one, so changing it again is
 * harmless.
 *
 * Resolves when the caller should read the directory again: changed (by us, or by someone
 * meanwhile), or a node of a caller of another kind (withdrawing, as ours did) has gone.
 * Throws the mismatch error for a directory that is not ours to change, or when someone
 * holds or awaits as the directory's kind.
 */
export async function changeIdleDirectory(
  session: ZkSession,
  ref: { readonly name: string; readonly dir: string },
  wanted: WantedKind,
  read: DirectoryRead,
  io: ChangeIo,
): Promise<void> {
  const found = directoryKindOf(read.data);
  const where = leaseMessages.inZooKeeper(ref.dir);
  if (!changeable(found)) throw kindRefusal(ref.name, wanted, found, where);
  let sent = false;
  // Sent once: after a lost reply the directory is read again, never changed a second time on a stale read.
  const busy = await io.retrying(() => {
    if (sent) return Promise.resolve(false);
    sent = true;
    return replaceIdle(session, ref.dir, read.stat.version ?? -1, dataOf(wanted));
  });
  if (!busy) return;
  const listing = await io.retrying(() => listChildren(session, ref.dir));
  // Made anew or rewritten since our read: read it again.
  if (!listing || listing.stat.czxid !== read.stat.czxid || listing.stat.mzxid !== read.stat.mzxid) return;
  if (listing.children.some((child) => belongsTo(found.kind, child))) throw kindRefusal(ref.name, wanted, found, where);
  const [passing] = listing.children; // a caller of another kind, withdrawing: it goes at once
  if (passing) await io.retrying(() => waitForChange(session, `${ref.dir}/${passing}`, io.stop));
}

/** The change's transaction; `true` when ZooKeeper refused it because the directory has children. */
async function replaceIdle(session: ZkSession, dir: string, version: number, data: Buffer): Promise<boolean> {
  try {
    await session.multi([
      { op: 'remove', path: dir, version },
      { op: 'create', path: dir, data, mode: 'persistent' },
    ]);
    return false;
  } catch (error) {
    if (isZkCode(error, 'NOT_EMPTY')) return true;
    // Rewritten or removed meanwhile: read again.
    if (isZkCode(error, 'BAD_VERSION') || isZkCode(error, 'NO_NODE')) return false;
    throw error;
  }
}

/** The directory's data and stat, or `null` when it does not exist. */
export async function readDirectory(session: ZkSession, dir: string): Promise<DirectoryRead | null> {
  try {
    return await session.getDataAndStat(dir);
  } catch (error) {
    if (isZkCode(error, 'NO_NODE')) return null;
    throw error;
  }
}
