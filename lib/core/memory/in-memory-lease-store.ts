import type { InMemoryLockStore } from './in-memory-lock-store.js';
import type { LeaseListing, LeaseContender } from '../port/lock-backend.js';
import { InMemoryLeaseQueue, type LeaseEntry, type NewLeaseEntry } from './in-memory-lease-queue.js';

/**
 * The semaphores of one `InMemoryLockStore`: backends that share a store share its
 * semaphores too. A semaphore, and the number of leases stored with it, lives while anyone
 * holds or waits (a ZooKeeper directory lives a little longer: its grace period).
 */
export class InMemoryLeaseStore {
  private readonly queues = new Map<string, InMemoryLeaseQueue>();

  /** The number of leases of the semaphore `name`, if it exists. */
  maxLeasesOf(name: string): number | undefined {
    return this.queues.get(name)?.maxLeases;
  }

  /** Queues an entry at the back of its semaphore's line (made with `maxLeases`); it may be granted at once. */
  enqueue(entry: NewLeaseEntry, maxLeases: number): LeaseEntry {
    let queue = this.queues.get(entry.name);
    if (!queue) this.queues.set(entry.name, (queue = new InMemoryLeaseQueue(maxLeases)));
    const queued = queue.append(entry);
    this.admit([queue]);
    return queued;
  }

  /** Takes entries out of their lines, all at once (as a session's nodes go with it), then grants. */
  remove(entries: Iterable<LeaseEntry>): void {
    const changed = new Set<InMemoryLeaseQueue>();
    for (const entry of entries) {
      const queue = this.queues.get(entry.name);
      if (!queue?.remove(entry)) continue;
      if (queue.isEmpty) this.queues.delete(entry.name);
      else changed.add(queue);
    }
    this.admit(changed);
  }

  contenders(name: string): LeaseContender[] {
    return this.queues.get(name)?.contenders() ?? [];
  }

  /** Every semaphore whose name starts with `prefix`, as `locks()` lists it. */
  listings(prefix: string): LeaseListing[] {
    return [...this.queues]
      .filter(([name]) => name.startsWith(prefix))
      .map(([name, queue]) => {
        const entries = queue.listed();
        return {
          kind: 'lease' as const,
          name,
          maxLeases: queue.maxLeases,
          holders: entries.filter((e) => e.holding),
          waiters: entries.filter((e) => !e.holding),
        };
      });
  }

  /** Finds every grant first, then tells the grantees, so none sees a half-done change. */
  private admit(queues: Iterable<InMemoryLeaseQueue>): void {
    const granted = [...queues].flatMap((queue) => queue.admit());
    for (const entry of granted) entry.onGrant(entry);
  }
}

const stores = new WeakMap<InMemoryLockStore, InMemoryLeaseStore>();

/** The semaphores that go with a lock store (made on first use). */
export function leaseStoreOf(store: InMemoryLockStore): InMemoryLeaseStore {
  let leases = stores.get(store);
  if (!leases) stores.set(store, (leases = new InMemoryLeaseStore()));
  return leases;
}
