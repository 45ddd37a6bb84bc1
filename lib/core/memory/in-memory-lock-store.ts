import { LeaseLimitMismatchError, LockKindMismatchError } from '../errors/errors.js';
import { leaseMessages } from '../errors/messages.js';
import {
  type LeaseContender,
  type LeaseListing,
  type ListedLock,
  type LockContender,
  type LockListing,
  type RecordData,
  type StoredRecord,
} from '../port/lock-backend.js';
import type { ResolvedWriteRecord } from '../port/options.js';
import { jobNameOf, withLastRuns } from '../port/job-record.js';
import { REVOKE_REQUEST } from '../port/lock-node.js';
import { longTimeout, type LongTimeout } from '../util/long-timeout.js';
import {
  InMemoryQueue,
  LeaseRule,
  lockRule,
  type LeaseEntry,
  type LockEntry,
  type NewEntry,
  type QueueEntry,
  type QueueRule,
} from './in-memory-queue.js';

import { InMemoryGroups } from './in-memory-groups.js';
import { InMemoryWatches } from './in-memory-watches.js';
/**
 * The lock service that `InMemoryLockBackend`s are clients of: every lock's and every
 * semaphore's queue, and the change counter that fencing tokens come from. Give one store
 * to several backends to have them contend like application instances on one ZooKeeper;
 * one process only.
 *
 * ```ts
 * const store = new InMemoryLockStore();
 * const [a, b] = [new InMemoryLockBackend({ store }), new InMemoryLockBackend({ store })];
 * ```
 *
 * Its methods are for the backends; use the backends' API.
 */
export class InMemoryLockStore {
  // A name is a lock or a semaphore, never both; its queue lives while anyone holds or
  // waits (a ZooKeeper directory lives a little longer: its grace period).
  private readonly lockQueues = new Map<string, InMemoryQueue<LockEntry>>();
  private readonly leaseQueues = new Map<string, InMemoryQueue<LeaseEntry, LeaseRule>>();
  /**
   * Numbers every change to any queue, as ZooKeeper's zxid does; a grant's fencing token
   * is the number of the change that let it in, as the ZooKeeper backend's is the lock
   * directory's pzxid. So tokens rise with every grant, are never reused (even for a name
   * whose queue emptied and started again), and readers let in by one change share one.
   */
  private lastChange = 0n;
  /** Revocable holders' listeners; weak, as an entry that left the queue is never asked again. */
  private readonly revocationListeners = new WeakMap<QueueEntry, () => void>();
  /** Holders asked to release: their identity reads `__REVOKE__`, as their node's data would. */
  private readonly revocationRequested = new WeakSet<QueueEntry>();

  /** @internal Who waits for a change of a lock's queue, a record, a group (`LockBackend.watch`). */
  readonly watches = new InMemoryWatches();
  /** @internal The groups joined (`LockBackend.joinGroup`). */
  readonly groups = new InMemoryGroups(this.watches);

  /** Records by name, as `JSON.stringify` left them (so a reader never shares the writer's object), with their version. */
  private readonly records = new Map<
    string,
    { readonly json: string; readonly version: number; readonly writtenAt: number }
  >();

  /** @internal The record under `name`, a copy, or `null`. */
  readRecord(name: string): StoredRecord | null {
    const record = this.records.get(name);
    if (!record) return null;
    return { data: JSON.parse(record.json) as RecordData, version: record.version, writtenAt: record.writtenAt };
  }

  /** @internal Writes the record under `name` if `expectedVersion` allows it, as ZooKeeper's create and versioned setData do. */
  writeRecord(name: string, { json, expectedVersion }: ResolvedWriteRecord): boolean {
    const record = this.records.get(name);
    if (expectedVersion === null ? record : expectedVersion !== undefined && record?.version !== expectedVersion)
      return false;
    // The store's clock is this process's: Date.now(), the time `serverTime()` tells.
    this.records.set(name, { json, version: record ? record.version + 1 : 0, writtenAt: Date.now() });
    this.watches.changed(`record:${name}`);
    return true;
  }

  /** @internal Throws `LockKindMismatchError` if `name` is a semaphore. */
  assertLock(name: string): void {
    const semaphore = this.leaseQueues.get(name);
    if (semaphore)
      throw new LockKindMismatchError(name, 'lock', 'lease', leaseMessages.inMemory, semaphore.rule.maxLeases);
  }

  /** @internal Throws if `name` is a lock, or a semaphore of other than `maxLeases` (when given). */
  assertLease(name: string, maxLeases?: number): void {
    if (this.lockQueues.has(name)) throw new LockKindMismatchError(name, 'lease', 'lock', leaseMessages.inMemory);
    const stored = this.leaseQueues.get(name)?.rule.maxLeases;
    if (maxLeases !== undefined && stored !== undefined && stored !== maxLeases)
      throw new LeaseLimitMismatchError(name, maxLeases, stored, leaseMessages.inMemory);
  }

  /** @internal Queues an entry at the back of its lock's line; it may be granted at once. */
  enqueueLock(entry: NewEntry<LockEntry>): LockEntry {
    return this.enqueue(this.lockQueues, entry, () => new InMemoryQueue(lockRule));
  }

  /** @internal Queues an entry at the back of its semaphore's line (made with `maxLeases`); it may be granted at once. */
  enqueueLease(entry: NewEntry<LeaseEntry>, maxLeases: number): LeaseEntry {
    return this.enqueue(this.leaseQueues, entry, () => new InMemoryQueue(new LeaseRule(maxLeases)));
  }

  /**
   * @internal Takes entries out of their lines, all at once (as a session's nodes go with
   * it), then grants whoever that lets in. Entries already gone are skipped.
   */
  remove(entries: Iterable<QueueEntry>): void {
    const changed = new Set<InMemoryQueue<QueueEntry>>();
    let removed = false;
    for (const entry of entries) {
      const queues = this.lockQueues.has(entry.name) ? this.lockQueues : this.leaseQueues;
      const queue = queues.get(entry.name);
      if (!queue?.remove(entry)) continue;
      removed = true;
      if (queues === this.lockQueues) this.watches.changed(`lock:${entry.name}`);
      if (queue.isEmpty) queues.delete(entry.name);
      else changed.add(queue);
    }
    if (!removed) return;
    this.lastChange++; // one change for the batch, as a session's close is one transaction
    this.admit(changed);
  }

  /**
   * @internal A kept hold on the lock `name` (whose holder is still in its queue) for
   * `holdMs`: nobody new holds until it ends, by its timer or by `end()` (its backend's
   * session ends), as a ZooKeeper marker goes (see core/port/kept-hold).
   */
  keepHold(name: string, holdMs: number, onEnd: () => void): { end(): void } {
    const queue = this.lockQueues.get(name)!;
    queue.keep(true);
    let timer: LongTimeout | undefined;
    const end = (): void => {
      if (!timer) return;
      timer.clear();
      timer = undefined;
      queue.keep(false);
      onEnd();
      this.watches.changed(`lock:${name}`);
      if (queue.isEmpty) this.lockQueues.delete(name);
      else if (this.lockQueues.get(name) === queue) {
        this.lastChange++;
        this.admit([queue]);
      }
    };
    timer = longTimeout(end, holdMs, { unref: true }); // nobody is left to honour it once the process would exit
    return { end };
  }

  /** @internal Holders and waiters of the lock `name`, in queue order. */
  contenders(name: string): LockContender[] {
    const line = this.lockQueues.get(name)?.line() ?? [];
    return line.map(({ entry, holding }) => this.lockContender(entry, holding));
  }

  /** @internal Holders and waiters of the semaphore `name`, in queue order. */
  leaseContenders(name: string): LeaseContender[] {
    const line = this.leaseQueues.get(name)?.line() ?? [];
    return line.map(({ entry, holding }) => leaseContender(entry, holding));
  }

  /** @internal Every lock and semaphore whose name starts with `prefix` (queues are never empty), in name order. */
  locks(prefix: string): ListedLock[] {
    const named = ([name]: [string, unknown]): boolean => name.startsWith(prefix);
    const locks = [...this.lockQueues]
      .filter(named)
      .map(([name, queue]): LockListing => ({ kind: 'lock', name, ...listed(queue.line(), this.lockContender) }));
    const leases = [...this.leaseQueues].filter(named).map(([name, queue]): LeaseListing => ({
      kind: 'lease',
      name,
      maxLeases: queue.rule.maxLeases,
      ...listed(queue.line(), leaseContender),
    }));
    const jobs = [...this.records.keys()].flatMap((recordName): Array<[string, StoredRecord]> => {
      const name = jobNameOf(recordName);
      return name !== null && name.startsWith(prefix) ? [[name, this.readRecord(recordName)!]] : [];
    });
    return withLastRuns([...locks, ...leases], jobs);
  }

  /** @internal Calls `listener` when `entry`, a holder, is asked to release (it is revocable). */
  onRevocationRequested(entry: QueueEntry, listener: () => void): void {
    this.revocationListeners.set(entry, listener);
  }

  /** @internal Asks every holder of the lock `name` to release; returns how many were asked. */
  requestRevocation(name: string): number {
    const line = this.lockQueues.get(name)?.line() ?? [];
    const holders = line.filter(({ holding }) => holding).map(({ entry }) => entry);
    for (const holder of holders) this.revocationRequested.add(holder);
    for (const holder of holders) this.revocationListeners.get(holder)?.();
    return holders.length;
  }

  private enqueue<E extends QueueEntry, R extends QueueRule<E>>(
    queues: Map<string, InMemoryQueue<E, R>>,
    entry: NewEntry<E>,
    make: () => InMemoryQueue<E, R>,
  ): E {
    let queue = queues.get(entry.name);
    if (!queue) queues.set(entry.name, (queue = make()));
    const queued = queue.append(entry);
    if ((queues as Map<string, unknown>) === this.lockQueues) this.watches.changed(`lock:${entry.name}`);
    this.lastChange++;
    this.admit([queue]);
    return queued;
  }

  /** Finds every grant the last change allows, then tells the grantees, so none sees a half-done change. */
  private admit(queues: Iterable<InMemoryQueue<QueueEntry>>): void {
    const token = this.lastChange;
    const granted = [...queues].flatMap((queue) => queue.admit());
    for (const entry of granted) entry.onGrant(entry, token);
  }

  private readonly lockContender = (entry: LockEntry, holding: boolean): LockContender => {
    const { node, mode, sequence, format } = entry;
    const identity = this.revocationRequested.has(entry) ? REVOKE_REQUEST : entry.identity;
    return { node, mode, sequence, format, identity, holding };
  };
}

function leaseContender({ node, sequence, identity }: LeaseEntry, holding: boolean): LeaseContender {
  return { node, sequence, identity, holding };
}

/** A line as `locks()` lists it: holders and waiters, each with since when it queued. */
function listed<E extends QueueEntry, C extends { readonly holding: boolean }>(
  line: ReadonlyArray<{ readonly entry: E; readonly holding: boolean }>,
  contender: (entry: E, holding: boolean) => C,
): { holders: Array<C & { since: Date }>; waiters: Array<C & { since: Date }> } {
  const all = line.map(({ entry, holding }) => ({ ...contender(entry, holding), since: entry.since }));
  return { holders: all.filter((c) => c.holding), waiters: all.filter((c) => !c.holding) };
}
