import type { LockMode, NodeFormat } from '../port/lock-backend.js';
import { leaseNodePrefix } from '../port/lease-node.js';
import { blockerAt } from '../port/lock-queue.js';
import { newAttemptGuid, newLockNodePrefix } from '../port/node-format.js';

/** One contender in a queue: what a lock node or a lease node is in ZooKeeper. */
export interface QueueEntry {
  readonly name: string;
  readonly identity: string;
  /** Its name in the queue, as `contenders()` lists it: the node name ZooKeeper would give it. */
  readonly node: string;
  /** Its place in the line: the queue's counter, as a sequential node's suffix. */
  readonly sequence: number;
  /** When it queued, as a node's `ctime`: `locks()` lists it as `since`. */
  readonly since: Date;
  /** Called once, when the entry comes to hold, with the number of the change that let it in. */
  onGrant(entry: this, fencingToken: bigint): void;
}

/** An entry in a lock's queue. */
export interface LockEntry extends QueueEntry {
  readonly mode: LockMode;
  readonly format: NodeFormat;
  /** Acquired with `revocable: true`: its name says so, as the ZooKeeper backend's does. */
  readonly revocable?: boolean;
}

/** An entry in a semaphore's queue: one lease. */
export type LeaseEntry = QueueEntry;

/** What a caller queues; the queue numbers and names it. */
export type NewEntry<E extends QueueEntry> = Omit<E, 'node' | 'sequence' | 'since'>;

/**
 * A recipe's rule, as Curator's lock driver is: how its entries are named and who holds.
 * The same rules as the ZooKeeper recipes', read from the port.
 */
export interface QueueRule<E extends QueueEntry> {
  /** The name a sequential create would be given for `entry` (the sequence is appended). */
  nodePrefix(entry: NewEntry<E>): string;
  /**
   * Whether the entry at `index` holds, going by the entries ahead of it. An entry that does
   * not hold keeps every entry behind it from holding, which `admit` relies on.
   */
  holds(entries: readonly E[], index: number): boolean;
}

/** A lock's rule (`blockerAt`): readers share, a writer holds alone, in queue order. */
export const lockRule: QueueRule<LockEntry> = {
  nodePrefix: ({ mode, format, revocable }) => newLockNodePrefix(mode, format, revocable),
  holds: (entries, index) => blockerAt(entries, index) === null,
};

/** A semaphore's rule (as `leasePositionOf`): the `maxLeases` lowest entries hold. */
export class LeaseRule implements QueueRule<LeaseEntry> {
  constructor(readonly maxLeases: number) {}

  nodePrefix(): string {
    return leaseNodePrefix(newAttemptGuid());
  }

  holds(_entries: readonly LeaseEntry[], index: number): boolean {
    return index < this.maxLeases;
  }
}

/**
 * One name's line of contenders, in the order they queued, numbered and named like the
 * sequential nodes of a ZooKeeper directory; who holds is `rule`'s to say.
 */
export class InMemoryQueue<E extends QueueEntry, R extends QueueRule<E> = QueueRule<E>> {
  private readonly entries: E[] = [];
  private readonly holders = new Set<QueueEntry>();
  // Like a directory's counter: it starts again when the queue empties (the directory is
  // removed) and is made anew.
  private nextSequence = 0;
  /** Kept holds in force (a lock's, see core/port/kept-hold): while any lasts, nobody new holds. */
  private keptHolds = 0;

  // `& QueueRule<E>` lets TypeScript infer the entry type from the rule.
  constructor(readonly rule: R & QueueRule<E>) {}

  get isEmpty(): boolean {
    return this.entries.length === 0 && this.keptHolds === 0;
  }

  /** A kept hold begins (`true`) or ends (`false`). */
  keep(begins: boolean): void {
    this.keptHolds += begins ? 1 : -1;
  }

  append(entry: NewEntry<E>): E {
    const sequence = this.nextSequence++;
    const node = this.rule.nodePrefix(entry) + String(sequence).padStart(10, '0');
    const queued = { ...entry, node, sequence, since: new Date() } as E;
    this.entries.push(queued);
    return queued;
  }

  /** Whether `entry` was in this queue (it is not any more). */
  remove(entry: QueueEntry): boolean {
    const index = (this.entries as readonly QueueEntry[]).indexOf(entry);
    if (index < 0) return false;
    this.entries.splice(index, 1);
    this.holders.delete(entry);
    return true;
  }

  /** Entries that may hold now and did not before, in queue order; they hold from now on. */
  admit(): E[] {
    const admitted: E[] = [];
    if (this.keptHolds > 0) return admitted;
    for (let i = 0; i < this.entries.length && this.rule.holds(this.entries, i); i++) {
      const entry = this.entries[i];
      if (this.holders.has(entry)) continue;
      this.holders.add(entry);
      admitted.push(entry);
    }
    return admitted;
  }

  /** The line in queue order, each entry with whether it holds. */
  line(): Array<{ readonly entry: E; readonly holding: boolean }> {
    return this.entries.map((entry) => ({ entry, holding: this.holders.has(entry) }));
  }
}
