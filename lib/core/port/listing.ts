import type { LockContender } from './lock-backend.js';

/** A node in a listed lock's queue: a contender, and since when it queued. */
export interface ListedContender extends LockContender {
  /**
   * When its node was created (ZooKeeper: the node's `ctime`, by the clock of the leader
   * that committed the create). A holder has held the lock for at most `now - since`;
   * it may have waited part of that time.
   */
  readonly since: Date;
  /** The ZooKeeper session that owns the node, `0x…` as ZooKeeper's logs and four-letter words show it (ZooKeeper only). */
  readonly sessionId?: string;
}

/** A lock with at least one node, as `locks()` lists it. */
export interface LockListing {
  readonly kind: 'lock';
  /** The lock's name, decoded from its directory's name. */
  readonly name: string;
  /** Who holds it now: one writer, or one or more readers. */
  readonly holders: ListedContender[];
  /** Who waits, in queue order. */
  readonly waiters: ListedContender[];
}

/** A lease node (`<guid>__lease__<seq>`) of a semaphore directory. */
export type ListedLease = Omit<ListedContender, 'mode' | 'format'>;

/**
 * A semaphore's directory (lease nodes; its data holds the number of leases). Holders are
 * the `maxLeases` lowest-numbered nodes; when the directory's data gives no number, none
 * is reported as holding.
 */
export interface LeaseListing {
  readonly kind: 'lease';
  readonly name: string;
  /** The number of leases read from the directory's data, or `null` if it holds none. */
  readonly maxLeases: number | null;
  readonly holders: ListedLease[];
  readonly waiters: ListedLease[];
}

/** One entry of `locks()`: a lock, or (ZooKeeper only) a semaphore's leases. */
export type ListedLock = LockListing | LeaseListing;
