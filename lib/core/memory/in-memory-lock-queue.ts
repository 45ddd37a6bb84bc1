import { REVOKE_REQUEST, type ParsedLockNode } from '../port/lock-node.js';
import { newLockNodePrefix } from '../port/node-format.js';
import type { ListedContender, LockContender } from '../port/lock-backend.js';
import { blockerAt } from '../port/lock-queue.js';

/** One contender in a lock's queue: what a lock node is in ZooKeeper. */
export interface QueueEntry extends ParsedLockNode {
  readonly name: string;
  readonly identity: string;
  /** Called once, when the entry comes to hold the lock. */
  readonly onGrant: (entry: QueueEntry, fencingToken: bigint) => void;
  /** When it queued (`Date.now()`), as a lock node's `ctime`: `locks()` lists it as `since`. */
  readonly queuedAt: number;
}

export type NewEntry = Pick<QueueEntry, 'name' | 'mode' | 'format' | 'identity' | 'onGrant'>;

/**
 * One lock name's line of contenders, in the order they queued. Entries are numbered and
 * named like ZooKeeper's sequential nodes in the call's format; who holds follows the same
 * rule as the ZooKeeper recipe (`blockerAt` in lock-queue.ts).
 */
export class InMemoryLockQueue {
  private readonly entries: QueueEntry[] = [];
  private readonly holders = new Set<QueueEntry>();
  /** Holders asked to release; weak, as an entry that left is never listed again. */
  private readonly revocationRequested = new WeakSet<QueueEntry>();
  // Like a lock directory's counter: it starts again when the queue empties (the directory
  // is removed) and is recreated.
  private nextSequence = 0;

  get isEmpty(): boolean {
    return this.entries.length === 0;
  }

  append(entry: NewEntry): QueueEntry {
    const sequence = this.nextSequence++;
    const node = newLockNodePrefix(entry.mode, entry.format) + String(sequence).padStart(10, '0');
    const queued: QueueEntry = { ...entry, node, sequence, queuedAt: Date.now() };
    this.entries.push(queued);
    return queued;
  }

  /** Whether `entry` was in this queue (it is not any more). */
  remove(entry: QueueEntry): boolean {
    const index = this.entries.indexOf(entry);
    if (index < 0) return false;
    this.entries.splice(index, 1);
    this.holders.delete(entry);
    return true;
  }

  /** Entries that may hold now and did not before, in queue order; they hold from now on. */
  admit(): QueueEntry[] {
    const admitted: QueueEntry[] = [];
    for (let i = 0; i < this.entries.length; i++) {
      // Everything behind a blocked entry is blocked too: by the same writer, or by it.
      if (blockerAt(this.entries, i)) break;
      const entry = this.entries[i];
      if (this.holders.has(entry)) continue;
      this.holders.add(entry);
      admitted.push(entry);
    }
    return admitted;
  }

  contenders(): LockContender[] {
    return this.entries.map((entry) => {
      const { node, mode, sequence, format } = entry;
      const identity = this.revocationRequested.has(entry) ? REVOKE_REQUEST : entry.identity;
      return { node, mode, sequence, format, identity, holding: this.holders.has(entry) };
    });
  }

  /** `contenders()` with since when each queued, as `locks()` lists them. */
  listed(): ListedContender[] {
    return this.contenders().map((contender, i) => ({ ...contender, since: new Date(this.entries[i].queuedAt) }));
  }

  /**
   * Marks every holder as asked to release, as `__REVOKE__` written into its node would
   * (its identity reads so from now on), and returns them in queue order.
   */
  requestRevocation(): QueueEntry[] {
    const holders = this.entries.filter((entry) => this.holders.has(entry));
    for (const holder of holders) this.revocationRequested.add(holder);
    return holders;
  }
}
