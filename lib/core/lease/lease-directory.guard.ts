import { ensurePath } from '../recipe/lock-directory.js';
import type { ZkSession, ZkStat } from '../session/zk-session.js';
import { isZkCode } from '../util/zk-error-code.js';
import { directoryKindOf, leaseDirectoryData, type DirectoryKind } from './lease-directory.marker.js';
import { LeaseLimitMismatchError } from './lease-limit-mismatch.error.js';
import { leaseMessages } from './lease.messages.js';
import { isKazooLeaseNode } from './lease-node.naming.js';
import { LockKindMismatchError } from './lock-kind-mismatch.error.js';

export interface SemaphoreRef {
  readonly name: string;
  readonly dir: string;
  readonly maxLeases: number;
}

/** Runs a request again through connection losses (the caller's `retrying`). */
export type Retrying = <T>(request: () => Promise<T>) => Promise<T>;

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
 * extra request for the check, and one re-created or rewritten is read again.
 */
export class LeaseDirectories {
  private readonly verified = new Map<string, Verified>();

  /**
   * Before our node is created: the directory exists (created now, with our number, if it
   * did not) and is a semaphore of `maxLeases`, or this throws and nothing was created.
   */
  async prepare(session: ZkSession, ref: SemaphoreRef, retrying: Retrying): Promise<void> {
    if (this.verified.get(ref.dir)?.maxLeases === ref.maxLeases) return;
    for (;;) {
      const read =
        (await retrying(() => readDirectory(session, ref.dir))) ??
        (await retrying(() => this.createAndRead(session, ref)));
      if (read) return this.accept(ref, read);
    }
  }

  /**
   * With the first listing that holds our node: if the directory is not the one checked
   * (created anew meanwhile, or its data rewritten), it is read and checked again.
   */
  async confirm(session: ZkSession, ref: SemaphoreRef, stat: ZkStat, retrying: Retrying): Promise<void> {
    const known = this.verified.get(ref.dir);
    if (known && known.czxid === stat.czxid && known.mzxid === stat.mzxid && known.maxLeases === ref.maxLeases) return;
    const read = await retrying(() => readDirectory(session, ref.dir));
    if (read) this.accept(ref, read);
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

  private accept(ref: SemaphoreRef, { data, stat }: DirectoryRead): void {
    const kind = directoryKindOf(data);
    checkLeaseDirectory(ref, kind, leaseMessages.inZooKeeper(ref.dir));
    if (this.verified.size >= MAX_REMEMBERED) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(ref.dir, { czxid: stat.czxid, mzxid: stat.mzxid, maxLeases: ref.maxLeases });
  }
}

/** Throws unless `kind` is a semaphore of `ref.maxLeases`. */
export function checkLeaseDirectory(ref: Omit<SemaphoreRef, 'dir'>, kind: DirectoryKind, where: string): void {
  const stored = leaseCountOf(ref.name, kind, where);
  if (stored !== ref.maxLeases) throw new LeaseLimitMismatchError(ref.name, ref.maxLeases, stored, where);
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
 * The lock recipe's side: a lock call that meets a lease semaphore's directory (or Kazoo's)
 * fails at once. Free for a lock directory: it has no data, which the children read's stat
 * already tells; only a directory with data costs one read.
 */
export async function assertLockDirectory(
  session: ZkSession,
  dir: string,
  name: string,
  stat: ZkStat | undefined,
): Promise<void> {
  if (!stat?.dataLength) return;
  let data: Buffer | undefined;
  try {
    data = await session.getData(dir);
  } catch (error) {
    if (isZkCode(error, 'NO_NODE')) return;
    throw error;
  }
  const kind = directoryKindOf(data);
  if (kind.kind === 'lease' || kind.kind === 'kazoo-semaphore') {
    throw new LockKindMismatchError(name, 'lock', kind.kind, leaseMessages.inZooKeeper(dir), kind.maxLeases);
  }
}

interface DirectoryRead {
  readonly data: Buffer;
  readonly stat: ZkStat;
}

async function readDirectory(session: ZkSession, dir: string): Promise<DirectoryRead | null> {
  try {
    return await session.getDataAndStat(dir);
  } catch (error) {
    if (isZkCode(error, 'NO_NODE')) return null;
    throw error;
  }
}

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
