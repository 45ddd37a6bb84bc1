import { randomBytes } from 'node:crypto';

import {
  InvalidOptionError,
  LockClientClosedError,
  LockLostError,
  LockTimeoutError,
  ZkSessionLostError,
} from '../errors/errors.js';
import { leaseMessages, lockMessages, inMemoryLockMessages as messages } from '../errors/messages.js';
import { acquireAll as acquireAllThrough } from '../multi/acquire-all.js';
import { encodeLockName } from '../naming/lock-name-codec.js';
import type {
  AcquireLeaseOptions,
  AcquireOptions,
  LeaseContender,
  ListedLock,
  LockBackend,
  LockContender,
  LockList,
  MultiAcquireOptions,
  MultiLockHandle,
  NodeFormat,
  ReadOptions,
  RecordData,
  StoredRecord,
  WriteRecordOptions,
} from '../port/lock-backend.js';
import { nodeFormatFor } from '../port/node-format.js';
import {
  resolveMemberData,
  resolveWatchTarget,
  type GroupEntry,
  type GroupMember,
  type MemberData,
  type Unwatch,
  type WatchTarget,
} from '../port/group.js';
import { encodeGroupName } from '../naming/group-name.js';
import {
  resolveAcquireOptions,
  resolveLeaseOptions,
  resolveListingPrefix,
  resolveReadTimeout,
  resolveWriteRecord,
  type ResolvedAcquireOptions,
} from '../port/options.js';
import { InMemoryAcquisition, type Claim } from './in-memory-acquisition.js';
import { InMemoryHandle, InMemoryLeaseHandle, InMemoryLockHandle } from './in-memory-handle.js';
import { resolveInMemoryLockOptions, type InMemoryLockBackendOptions } from './in-memory-lock-options.js';
import type { InMemoryLockStore } from './in-memory-lock-store.js';
import type { LockEntry, QueueEntry } from './in-memory-queue.js';

/**
 * The `LockBackend` port in memory, with the ZooKeeper backend's semantics (FIFO queue
 * per name, shared readers, exclusive writers, leases, fencing tokens, typed errors), for
 * unit tests of code that takes locks. One process only: it coordinates nothing across processes.
 *
 * ```ts
 * const locks = new InMemoryLockBackend();
 * const lock = await locks.acquire('orders/42', { timeoutMs: 5_000 });
 * locks.loseLock('orders/42'); // test-only: lock.signal aborts with a LockLostError
 * ```
 */
export class InMemoryLockBackend implements LockBackend {
  /** The lock service this backend is a client of; pass it to others to share locks. */
  readonly store: InMemoryLockStore;
  /** Shown by `contenders()` for this backend's entries. */
  readonly identity: string;
  private readonly nodeFormat: NodeFormat;
  /** Waits for locks and leases alike; the test controls and `close()` treat them the same. */
  private readonly waits = new Map<Wait, Promise<unknown>>();
  private readonly held = new Map<InMemoryHandle, QueueEntry>();
  /** Kept holds this backend left (`releaseKeeping`), until they end: an expired session ends them, as ZooKeeper deletes its markers. */
  private readonly keptHolds = new Set<{ end(): void }>();
  /** This backend's entries in groups, until each ends: `close()` leaves them. */
  private readonly entries = new Set<GroupEntry>();
  private sessionId = newSessionId();
  private closed = false;
  private closing: Promise<void> | undefined;

  /** Validates the options: a wrong value or an unknown key throws `InvalidOptionError`. */
  constructor(options?: InMemoryLockBackendOptions) {
    ({ store: this.store, identity: this.identity, nodeFormat: this.nodeFormat } = resolveInMemoryLockOptions(options));
  }

  /** Nothing to connect: resolves at once. */
  async start(): Promise<void> {}

  async acquire(name: string, options?: AcquireOptions): Promise<InMemoryLockHandle> {
    const resolved = resolveAcquireOptions(options, Infinity);
    const handle = await this.lock(name, resolved);
    if (!handle) throw new LockTimeoutError(name, resolved.mode, 0);
    return handle;
  }

  async tryAcquire(name: string, options?: Omit<AcquireOptions, 'timeoutMs'>): Promise<InMemoryLockHandle | null> {
    return this.lock(name, { ...resolveAcquireOptions(options, 0), timeoutMs: 0 });
  }

  /** Every lock of `locks` at once, all or nothing, deadlock-free: see `acquireAll` in core/multi. */
  acquireAll(locks: LockList, options?: MultiAcquireOptions): Promise<MultiLockHandle> {
    return acquireAllThrough(this, locks, options);
  }

  /** `options` are checked as the ZooKeeper backend checks them; the store is never unavailable. */
  async contenders(name: string, options?: ReadOptions): Promise<LockContender[]> {
    this.checkRead(name, options, 'contenders', 'lock');
    return this.store.contenders(name);
  }

  /** As `ZkLockBackend.status()`: `connected` until closed (a health check in unit tests reads it). */
  status(): { readonly state: 'connected' | 'closed' } {
    return { state: this.closed ? 'closed' : 'connected' };
  }

  /**
   * One of `maxLeases` leases on `name`, with `ZkLockBackend.acquireLease`'s semantics (FIFO,
   * at most `maxLeases` holders, the number stored with the semaphore, a name either a lock
   * or a semaphore); the test controls cover leases too.
   */
  async acquireLease(name: string, options: AcquireLeaseOptions): Promise<InMemoryLeaseHandle> {
    const { maxLeases, timeoutMs, signal, maxHoldMs } = resolveLeaseOptions(options, Infinity);
    encodeLockName(name);
    this.assertOpen();
    this.store.assertLease(name, maxLeases);
    const handle = await this.wait({
      name,
      timeoutMs,
      signal,
      enqueue: (onGrant) => this.store.enqueueLease({ name, identity: this.identity, onGrant }, maxLeases),
      grant: (entry, fencingToken) =>
        this.hold(
          new InMemoryLeaseHandle(entry, maxLeases, fencingToken, this.onReleased, this.onHeldTooLong),
          entry,
          maxHoldMs,
        ),
      timedOut: (ms) => new LockTimeoutError(name, 'lease', ms, leaseMessages.timeout(name, maxLeases, ms)),
    });
    if (!handle) throw new LockTimeoutError(name, 'lease', 0, leaseMessages.timeout(name, maxLeases, 0));
    return handle;
  }

  /** Holders and waiters of the lease semaphore `name`, in queue order. */
  async leaseContenders(name: string, options?: ReadOptions): Promise<LeaseContender[]> {
    this.checkRead(name, options, 'leaseContenders', 'lease');
    return this.store.leaseContenders(name);
  }

  /**
   * Asks every holder of `name` to release it, as the ZooKeeper backend does: revocable
   * holders' `revocation` aborts, and every holder's identity reads `__REVOKE__`.
   */
  async requestRevocation(name: string, options?: ReadOptions): Promise<number> {
    this.checkRead(name, options, 'requestRevocation', 'lock');
    return this.store.requestRevocation(name);
  }

  /** Every lock and semaphore of the store whose name starts with `prefix`, with holders and waiters, in name order. */
  async locks(prefix?: string, options?: ReadOptions): Promise<ListedLock[]> {
    const start = resolveListingPrefix(prefix);
    resolveReadTimeout(options, 'locks');
    this.assertOpen();
    return this.store.locks(start);
  }

  /** The record kept under `name` in the store, or `null`; as `ZkLockBackend.readRecord`. */
  async readRecord(name: string, options?: ReadOptions): Promise<StoredRecord | null> {
    encodeLockName(name);
    resolveReadTimeout(options, 'readRecord');
    this.assertOpen();
    return this.store.readRecord(name);
  }

  /** Writes the record under `name` in the store, with a version check when asked; as `ZkLockBackend.writeRecord`. */
  async writeRecord(name: string, data: RecordData, options?: WriteRecordOptions): Promise<boolean> {
    encodeLockName(name);
    const write = resolveWriteRecord(data, options);
    const { whileHolding: handle } = write;
    if (handle !== undefined && !(handle instanceof InMemoryHandle))
      throw new InvalidOptionError('whileHolding', handle, lockMessages.notOwnHandle);
    this.assertOpen();
    handle?.assertHeld(); // the store answers at once: nothing can take the lock between this and the write
    return this.store.writeRecord(name, write);
  }

  /** Joins `group` as `id` in the store, taking the id over from any other entry (see `LockBackend.joinGroup`). */
  async joinGroup(group: string, id: string, data: MemberData, options?: ReadOptions): Promise<GroupEntry> {
    encodeGroupName('group', group);
    encodeGroupName('memberId', id);
    const json = resolveMemberData(data);
    resolveReadTimeout(options, 'joinGroup');
    this.assertOpen();
    const entry = this.store.groups.join(group, id, json, this.sessionId, (ended) => this.entries.delete(ended));
    this.entries.add(entry);
    return entry;
  }

  /** The members of `group` in the store, in id order. */
  async groupMembers(group: string, options?: ReadOptions): Promise<GroupMember[]> {
    encodeGroupName('group', group);
    resolveReadTimeout(options, 'groupMembers');
    this.assertOpen();
    return this.store.groups.members(group);
  }

  /** Calls `onChange` once at the next change of `target` in the store (see `LockBackend.watch`). */
  async watch(target: WatchTarget, onChange: () => void, options?: ReadOptions): Promise<Unwatch> {
    const { kind, name } = resolveWatchTarget(target);
    if (kind === 'group') encodeGroupName('group', name);
    else encodeLockName(name);
    resolveReadTimeout(options, 'watch');
    this.assertOpen();
    return this.store.watches.add(`${kind}:${name as string}`, onChange);
  }

  /** The store's clock, `Date.now()`, the one `writtenAt` is read from (see `LockBackend.serverTime`). */
  async serverTime(options?: ReadOptions): Promise<number> {
    resolveReadTimeout(options, 'serverTime');
    this.assertOpen();
    return Date.now();
  }

  /** At once: a release here takes effect as it resolves, with no answer to wait for. */
  async releasesConfirmed(options?: ReadOptions): Promise<void> {
    resolveReadTimeout(options, 'releasesConfirmed');
  }

  /** Fails every wait of this backend with `LockClientClosedError`; held locks stay held. */
  async cancelWaits(): Promise<void> {
    const closing = new LockClientClosedError();
    for (const wait of this.waits.keys()) wait.cancel(closing);
    await Promise.allSettled(this.waits.values());
  }

  /**
   * Cancels waits, aborts the signal of every lock and lease still held (a `LockLostError`)
   * and releases it; later calls reject with `LockClientClosedError`. Safe to call again.
   */
  close(): Promise<void> {
    if (!this.closing) {
      this.closed = true; // before anything runs: nothing new may start meanwhile
      this.closing = this.shutdown();
    }
    return this.closing;
  }

  /**
   * Test-only: every lock (or lease) this backend holds on `name` is lost, as when its
   * holder's process dies: the signals abort with a `LockLostError` saying the test did it,
   * then the entries leave the queue and whoever waited behind them proceeds.
   */
  loseLock(name: string): void {
    encodeLockName(name);
    const lost = [...this.held.keys()].filter((handle) => handle.name === name);
    this.takeAway(lost, [], () => new LockLostError(name, messages.lostByTest(name)));
  }

  /**
   * Test-only: this backend's session expires, as ZooKeeper expires one: every lock and
   * lease it holds is lost (signals abort first, with a `LockLostError` caused by a
   * `ZkSessionLostError`, then the entries go), and every wait queues again at the back in
   * a new session, as the ZooKeeper backend's waits do. The backend stays usable.
   */
  expireSession(): void {
    if (this.closed) return;
    const cause = new ZkSessionLostError(this.sessionId, messages.expiredByTest);
    this.sessionId = newSessionId();
    // Taken before any signal aborts: a holder's abort listener may start new waits, which
    // belong to the new session already.
    const waiting = [...this.waits.keys()].flatMap((wait) =>
      wait.waitingEntry ? [{ wait, entry: wait.waitingEntry }] : [],
    );
    waiting.sort((a, b) => a.entry.sequence - b.entry.sequence); // they queue again in the order they stood
    this.endKeptHolds();
    this.takeAway(
      [...this.held.keys()],
      waiting.map(({ entry }) => entry),
      (name) => new LockLostError(name, messages.sessionExpiredByTest, cause),
    );
    for (const { wait } of waiting) wait.queueAgain();
  }

  /** Aborts the handles' signals, then takes their entries and `alsoRemove` out of the queues at once. */
  private takeAway(handles: InMemoryHandle[], alsoRemove: QueueEntry[], reason: (name: string) => LockLostError): void {
    const entries = handles.map((handle) => this.held.get(handle)!);
    for (const handle of handles) this.held.delete(handle);
    // The signals abort before anything leaves the queue: a holder hears first.
    for (const handle of handles) handle.revoke(reason(handle.name));
    this.store.remove([...entries, ...alsoRemove]);
  }

  private async shutdown(): Promise<void> {
    await this.cancelWaits();
    const held = [...this.held.keys()];
    for (const handle of held) handle.revoke(new LockLostError(handle.name, lockMessages.closingUnderHolder));
    await Promise.allSettled(held.map((handle) => handle.release()));
    await Promise.allSettled([...this.entries].map((entry) => entry.leave()));
    // Kept holds stay to their end, as the ZooKeeper backend leaves a persistent marker at close.
  }

  private lock(name: string, options: ResolvedAcquireOptions): Promise<InMemoryLockHandle | null> {
    encodeLockName(name);
    this.assertOpen();
    this.store.assertLock(name);
    const { mode, timeoutMs, signal, revocable = false, maxHoldMs } = options;
    const format = nodeFormatFor(mode, options.nodeFormat, this.nodeFormat);
    return this.wait<LockEntry, InMemoryLockHandle>({
      name,
      timeoutMs,
      signal,
      enqueue: (onGrant) => this.store.enqueueLock({ name, mode, format, revocable, identity: this.identity, onGrant }),
      grant: (entry, fencingToken) => {
        const handle = new InMemoryLockHandle(
          entry,
          fencingToken,
          revocable,
          this.onReleased,
          this.onHeldTooLong,
          this.keepHold,
        );
        if (revocable) this.store.onRevocationRequested(entry, () => handle.revocationRequested());
        return this.hold(handle, entry, maxHoldMs);
      },
      timedOut: (ms) => new LockTimeoutError(name, mode, ms),
    });
  }

  /** Runs one acquisition, known to `cancelWaits`, `expireSession` and `close` until it settles. */
  private async wait<E extends QueueEntry, H extends InMemoryHandle>(claim: Claim<E, H>): Promise<H | null> {
    const acquisition = new InMemoryAcquisition(this.store, claim);
    const running = acquisition.run();
    this.waits.set(acquisition, running);
    try {
      return await running;
    } finally {
      this.waits.delete(acquisition);
    }
  }

  /** Knows `handle` as a holder; past `maxHoldMs` it is told, then its entry leaves the queue (`onHeldTooLong`). */
  private hold<H extends InMemoryHandle>(handle: H, entry: QueueEntry, maxHoldMs: number | undefined): H {
    this.held.set(handle, entry);
    if (maxHoldMs !== undefined) handle.limitHold(maxHoldMs);
    return handle;
  }

  private readonly onHeldTooLong = (handle: InMemoryHandle, maxHoldMs: number): void => {
    if (!this.held.has(handle)) return; // released or lost meanwhile: its entry went then
    this.takeAway([handle], [], (name) => new LockLostError(name, lockMessages.maxHold(maxHoldMs, this.identity)));
  };

  private readonly keepHold = (handle: InMemoryHandle, holdMs: number): void => {
    const kept = this.store.keepHold(handle.name, holdMs, () => this.keptHolds.delete(kept));
    this.keptHolds.add(kept);
  };

  /** The session expires: so do the kept holds it left. */
  private endKeptHolds(): void {
    for (const kept of [...this.keptHolds]) kept.end();
  }

  private readonly onReleased = (handle: InMemoryHandle): void => {
    const entry = this.held.get(handle);
    if (!entry) return; // lost before: its entry went then
    this.held.delete(handle);
    this.store.remove([entry]);
  };

  /** A read's checks (and `requestRevocation`'s), in the ZooKeeper backend's order; `owner` names the call. */
  private checkRead(name: string, options: ReadOptions | undefined, owner: string, kind: 'lock' | 'lease'): void {
    encodeLockName(name);
    resolveReadTimeout(options, owner);
    this.assertOpen();
    if (kind === 'lock') this.store.assertLock(name);
    else this.store.assertLease(name);
  }

  private assertOpen(): void {
    if (this.closed) throw new LockClientClosedError();
  }
}

/** A wait under way, for a lock or a lease: what `cancelWaits`, `expireSession` and `close` do with it. */
type Wait = Pick<InMemoryAcquisition<QueueEntry, unknown>, 'waitingEntry' | 'cancel' | 'queueAgain'>;

/** A ZooKeeper-like session id: 16 hex digits. */
function newSessionId(): string {
  return randomBytes(8).toString('hex');
}
