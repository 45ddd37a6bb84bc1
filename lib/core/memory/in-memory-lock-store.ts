import { byName, type LockListing, type LockContender } from '../port/lock-backend.js';
import { splitLockListing } from '../zookeeper/listing-summary.js';
import { InMemoryLockQueue, type NewEntry, type QueueEntry } from './in-memory-lock-queue.js';

/**
 * The lock service that `InMemoryLockBackend`s are clients of: every lock's queue, and the
 * change counter that fencing tokens come from. Give one store to several backends to have them contend like
 * application instances on one ZooKeeper; one process only.
 *
 * ```ts
 * const store = new InMemoryLockStore();
 * const [a, b] = [new InMemoryLockBackend({ store }), new InMemoryLockBackend({ store })];
 * ```
 *
 * Its methods are for the backends; use the backends' API.
 */
export class InMemoryLockStore {
  private readonly queues = new Map<string, InMemoryLockQueue>();
  /**
   * Numbers every change to any queue, as ZooKeeper's zxid does; a grant's fencing token
   * is the number of the change that let it in, as the ZooKeeper backend's is the lock
   * directory's pzxid. So tokens rise with every grant, are never reused (even for a name
   * whose queue emptied and started again), and readers let in by one change share one.
   */
  private lastChange = 0n;
  /** Revocable holders' listeners; weak, as an entry that left the queue is never asked again. */
  private readonly revocationListeners = new WeakMap<QueueEntry, () => void>();

  /** @internal Queues an entry at the back of its lock's line; it may be granted at once. */
  enqueue(entry: NewEntry): QueueEntry {
    let queue = this.queues.get(entry.name);
    if (!queue) this.queues.set(entry.name, (queue = new InMemoryLockQueue()));
    const queued = queue.append(entry);
    this.lastChange++;
    this.admit([queue]);
    return queued;
  }

  /**
   * @internal Takes entries out of their lines, all at once (as a session's nodes go with
   * it), then grants whoever that lets in. Entries already gone are skipped.
   */
  remove(entries: Iterable<QueueEntry>): void {
    const changed = new Set<InMemoryLockQueue>();
    let removed = false;
    for (const entry of entries) {
      const queue = this.queues.get(entry.name);
      if (!queue?.remove(entry)) continue;
      removed = true;
      if (queue.isEmpty) this.queues.delete(entry.name);
      else changed.add(queue);
    }
    if (!removed) return;
    this.lastChange++; // one change for the batch, as a session's close is one transaction
    this.admit(changed);
  }

  /** @internal Holders and waiters of `name`, in queue order. */
  contenders(name: string): LockContender[] {
    return this.queues.get(name)?.contenders() ?? [];
  }

  /** @internal Every lock whose name starts with `prefix` (queues are never empty), in name order. */
  locks(prefix: string): LockListing[] {
    const listings = [...this.queues].filter(([name]) => name.startsWith(prefix));
    return listings.map(([name, queue]) => splitLockListing(name, queue.listed())).sort(byName);
  }

  /** @internal Calls `listener` when `entry`, a holder, is asked to release (it is revocable). */
  onRevocationRequested(entry: QueueEntry, listener: () => void): void {
    this.revocationListeners.set(entry, listener);
  }

  /** @internal Asks every holder of `name` to release; returns how many were asked. */
  requestRevocation(name: string): number {
    const holders = this.queues.get(name)?.requestRevocation() ?? [];
    for (const holder of holders) this.revocationListeners.get(holder)?.();
    return holders.length;
  }

  /** Finds every grant the last change allows, then tells the grantees, so none sees a half-done change. */
  private admit(queues: Iterable<InMemoryLockQueue>): void {
    const token = this.lastChange;
    const granted = [...queues].flatMap((queue) => queue.admit());
    for (const entry of granted) entry.onGrant(entry, token);
  }
}
