import { ensurePath } from './directory.js';
import type { ZkSession, ZkStat } from '../session/zk-session.js';
import { isZkCode } from '../session/zk-error-code.js';
import { changeIdleDirectory, kindRefusal, readDirectory, type DirectoryRead } from './directory-kind-change.js';
import type { ChangeIo, Retrying } from './acquisition.js';
import { directoryKindOf, leaseDirectoryData, type DirectoryKind } from './directory-marker.js';
import { leaseMessages } from '../../errors/messages.js';
import { isKazooLeaseNode } from '../../port/lease-node.js';
import { LockKindMismatchError } from '../../errors/errors.js';

export interface SemaphoreRef {
  readonly name: string;
  readonly dir: string;
  readonly maxLeases: number;
}

interface Verified {
  readonly czxid: bigint;
  readonly mzxid: bigint | undefined;
  readonly maxLeases: number;
}

/** Directories remembered as checked; a client uses few semaphores, this only bounds a misuse. */
const MAX_REMEMBERED = 1024;

/**
 * Makes sure a semaphore's directory is one, with the caller's number of leases, before
 * and after its node is created. A directory once checked is remembered by its creation
 * and data zxids, which every children read returns: so a hot semaphore's acquire pays no
 * extra request for the check, and one re-created or rewritten is read again. A directory
 * of our other kind, or another count, is changed when idle (see `changeIdleDirectory`).
 */
export class LeaseDirectories {
  private readonly verified = new Map<string, Verified>();

  /**
   * Before our node is created: the directory exists (created now, with our number, if it
   * did not; changed to it if idle and a lock's, or another count's) and is a semaphore of
   * `maxLeases`, or this throws and nothing of ours is in it.
   */
  async prepare(session: ZkSession, ref: SemaphoreRef, io: ChangeIo): Promise<void> {
    if (this.verified.get(ref.dir)?.maxLeases === ref.maxLeases) return;
    for (;;) {
      const read =
        (await io.retrying(() => readDirectory(session, ref.dir))) ??
        (await io.retrying(() => this.createAndRead(session, ref)));
      if (!read) continue;
      if (this.accepts(ref, read)) return;
      await changeIdleDirectory(session, ref, { kind: 'lease', maxLeases: ref.maxLeases }, read, io);
    }
  }

  /**
   * With the first listing that holds our node: if the directory is not the one checked
   * (created anew meanwhile, or its data rewritten), it is read and checked again. `false`:
   * it was made anew as a lock's, or with another count, since we checked; the caller
   * withdraws its node and prepares again. Throws for a directory not ours to change.
   */
  async confirm(session: ZkSession, ref: SemaphoreRef, stat: ZkStat, retrying: Retrying): Promise<boolean> {
    const known = this.verified.get(ref.dir);
    if (known && known.czxid === stat.czxid && known.mzxid === stat.mzxid && known.maxLeases === ref.maxLeases)
      return true;
    const read = await retrying(() => readDirectory(session, ref.dir));
    if (!read || this.accepts(ref, read)) return true; // gone: so is our node, which the next listing shows
    this.verified.delete(ref.dir);
    const kind = directoryKindOf(read.data);
    if (kind.kind === 'lock' || kind.kind === 'lease') return false;
    throw kindRefusal(ref.name, { kind: 'lease', maxLeases: ref.maxLeases }, kind, leaseMessages.inZooKeeper(ref.dir));
  }

  /** The directory vanished under a create (emptied and removed): it is made again, with our number. */
  async recreate(session: ZkSession, ref: SemaphoreRef, retrying: Retrying): Promise<void> {
    await retrying(() => createDirectory(session, ref));
  }

  private async createAndRead(session: ZkSession, ref: SemaphoreRef): Promise<DirectoryRead | null> {
    const creating = createDirectory(session, ref);
    const reading = readDirectory(session, ref.dir); // sent behind the create: sees it
    try {
      await creating;
    } catch (error) {
      reading.catch(() => undefined);
      throw error;
    }
    return reading;
  }

  /** Remembers the directory read if it is a semaphore of `ref.maxLeases`. */
  private accepts(ref: SemaphoreRef, { data, stat }: DirectoryRead): boolean {
    const kind = directoryKindOf(data);
    if (kind.kind !== 'lease' || kind.maxLeases !== ref.maxLeases) return false;
    if (this.verified.size >= MAX_REMEMBERED) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(ref.dir, { czxid: stat.czxid, mzxid: stat.mzxid, maxLeases: ref.maxLeases });
    return true;
  }
}

/** Throws unless `kind` is a semaphore of `ref.maxLeases`. */
export function checkLeaseDirectory(ref: Omit<SemaphoreRef, 'dir'>, kind: DirectoryKind, where: string): void {
  if (kind.kind !== 'lease' || kind.maxLeases !== ref.maxLeases)
    throw kindRefusal(ref.name, { kind: 'lease', maxLeases: ref.maxLeases }, kind, where);
}

/** The semaphore's number of leases; throws `LockKindMismatchError` unless `kind` is one of ours. */
export function leaseCountOf(name: string, kind: DirectoryKind, where: string): number {
  if (kind.kind === 'lease') return kind.maxLeases;
  const maxLeases = kind.kind === 'kazoo-semaphore' ? kind.maxLeases : undefined;
  throw new LockKindMismatchError(name, 'lease', kind.kind, where, maxLeases);
}

/** Throws if a semaphore directory's children include Kazoo's unsequenced lease nodes. */
export function checkNoKazooLeases(name: string, dir: string, children: readonly string[]): void {
  if (children.some(isKazooLeaseNode))
    throw new LockKindMismatchError(name, 'lease', 'kazoo-semaphore', leaseMessages.inZooKeeper(dir));
}

/**
 * What a lock call does in the directory it queued in: `lock` (a lock's, or data no recipe
 * wrote, left to locks), `lease` (our semaphore's: withdraw, then `settleLockDirectory`),
 * or it throws for Kazoo's semaphore. Free for a lock directory: it has no data, which the
 * children read's stat already tells; only a directory with data costs one read.
 */
export async function lockDirectoryKind(
  session: ZkSession,
  dir: string,
  name: string,
  stat: ZkStat | undefined,
): Promise<'lock' | 'lease'> {
  const kind = await kindWithData(session, dir, stat);
  if (kind.kind === 'kazoo-semaphore') throw kindRefusal(name, LOCK, kind, leaseMessages.inZooKeeper(dir));
  return kind.kind === 'lease' ? 'lease' : 'lock';
}

/**
 * A lock call that met our semaphore's directory, its node withdrawn: the directory is
 * made a lock's if nobody holds or awaits a lease there (then the caller queues again),
 * or this throws `LockKindMismatchError`.
 */
export async function settleLockDirectory(session: ZkSession, dir: string, name: string, io: ChangeIo): Promise<void> {
  for (;;) {
    const read = await io.retrying(() => readDirectory(session, dir));
    const kind = directoryKindOf(read?.data);
    if (!read || kind.kind === 'lock' || kind.kind === 'unknown') return;
    await changeIdleDirectory(session, { name, dir }, LOCK, read, io);
  }
}

/**
 * For the read-only lock calls (`contenders`, `requestRevocation`): a semaphore's
 * directory (or Kazoo's) in use is refused; an idle one says nothing, as the name may
 * become a lock's with the next acquire.
 */
export async function assertLockDirectory(
  session: ZkSession,
  dir: string,
  name: string,
  listing: { readonly children: readonly string[]; readonly stat: ZkStat } | null | undefined,
): Promise<void> {
  if (!listing?.children.length) return;
  const kind = await kindWithData(session, dir, listing.stat);
  if (kind.kind === 'lease' || kind.kind === 'kazoo-semaphore')
    throw kindRefusal(name, LOCK, kind, leaseMessages.inZooKeeper(dir));
}

/** The directory's kind; read only when `stat` says it has data (a lock's directory has none). */
async function kindWithData(session: ZkSession, dir: string, stat: ZkStat | undefined): Promise<DirectoryKind> {
  if (!stat?.dataLength) return LOCK;
  return directoryKindOf((await readDirectory(session, dir))?.data);
}

const LOCK = { kind: 'lock' } as const;

/** Creates the directory with our number of leases; one that exists already is left as it is. */
async function createDirectory(session: ZkSession, ref: SemaphoreRef): Promise<void> {
  try {
    await session.create(ref.dir, leaseDirectoryData(ref.maxLeases), 'persistent');
  } catch (error) {
    if (isZkCode(error, 'NODE_EXISTS')) return;
    if (!isZkCode(error, 'NO_NODE')) throw error;
    await ensurePath(session, ref.dir.slice(0, ref.dir.lastIndexOf('/'))); // the root path is missing
    await createDirectory(session, ref);
  }
}
