import { newAttemptGuid } from '../port/lock-node.js';
import type { LeaseContender } from '../port/lock-backend.js';
import { leaseNodePrefix } from '../port/lease-node.js';

/** One contender in a semaphore's queue: what a lease node is in ZooKeeper. */
export interface LeaseEntry {
  readonly name: string;
  readonly node: string;
  readonly sequence: number;
  readonly identity: string;
  /** When it queued (a lease node's ctime). */
  readonly since: Date;
  /** Called once, when the entry comes to hold a lease. */
  readonly onGrant: (entry: LeaseEntry) => void;
}

export type NewLeaseEntry = Pick<LeaseEntry, 'name' | 'identity' | 'onGrant'>;

/**
 * One semaphore's line, in the order its entries queued: the first `maxLeases` hold, as
 * in the ZooKeeper recipe (`lease-queue.ts`). Entries are numbered and named like lease nodes.
 */
export class InMemoryLeaseQueue {
  private readonly entries: LeaseEntry[] = [];
  private readonly holders = new Set<LeaseEntry>();
  private nextSequence = 0; // starts again with a new queue, as a re-created directory's counter

  constructor(readonly maxLeases: number) {}

  get isEmpty(): boolean {
    return this.entries.length === 0;
  }

  append(entry: NewLeaseEntry): LeaseEntry {
    const sequence = this.nextSequence++;
    const queued: LeaseEntry = {
      ...entry,
      node: leaseNodePrefix(newAttemptGuid()) + String(sequence).padStart(10, '0'),
      sequence,
      since: new Date(),
    };
    this.entries.push(queued);
    return queued;
  }

  /** Whether `entry` was in this queue (it is not any more). */
  remove(entry: LeaseEntry): boolean {
    const index = this.entries.indexOf(entry);
    if (index < 0) return false;
    this.entries.splice(index, 1);
    this.holders.delete(entry);
    return true;
  }

  /** Entries among the first `maxLeases` that did not hold before, in queue order; they hold from now on. */
  admit(): LeaseEntry[] {
    const admitted = this.entries.slice(0, this.maxLeases).filter((entry) => !this.holders.has(entry));
    for (const entry of admitted) this.holders.add(entry);
    return admitted;
  }

  /** The line as `locks()` lists it: holders first, then waiters, each with since when it queued. */
  listed(): Array<LeaseContender & { readonly since: Date }> {
    return this.entries.map((entry) => ({
      node: entry.node,
      sequence: entry.sequence,
      identity: entry.identity,
      holding: this.holders.has(entry),
      since: entry.since,
    }));
  }

  contenders(): LeaseContender[] {
    return this.entries.map((entry) => {
      const { node, sequence, identity } = entry;
      return { node, sequence, identity, holding: this.holders.has(entry) };
    });
  }
}
