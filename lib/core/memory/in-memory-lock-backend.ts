import type {
  MultiAcquireOptions,
  LockList,
  MultiLockHandle,
  ListedLock,
  AcquireOptions,
  LockBackend,
  LockContender,
  ReadOptions,
  AcquireLeaseOptions,
  LeaseContender,
} from '../port/lock-backend.js';
import { byName } from '../port/lock-backend.js';
import { randomBytes } from 'node:crypto';

import { LockClientClosedError, LockLostError, LockTimeoutError, ZkSessionLostError } from '../errors/errors.js';
import { lockMessages, inMemoryLockMessages as messages } from '../errors/messages.js';
import { acquireAll as acquireAllThrough } from '../multi/acquire-all.js';
import {
  resolveAcquireOptions,
  resolveListingPrefix,
  resolveReadTimeout,
  type ResolvedAcquireOptions,
} from '../port/options.js';
import { leaseStoreOf } from './in-memory-lease-store.js';
import { encodeLockName } from '../naming/lock-name-codec.js';
import { nodeFormatFor } from '../port/node-format.js';
import { InMemoryLockAcquisition, type MemoryAcquisitionContext } from './in-memory-lock-acquisition.js';
import { InMemoryLockHandle } from './in-memory-lock-handle.js';
import { resolveInMemoryLockOptions, type InMemoryLockBackendOptions } from './in-memory-lock-options.js';
import type { QueueEntry } from './in-memory-lock-queue.js';
import type { InMemoryLockStore } from './in-memory-lock-store.js';
import type { InMemoryLeaseHandle } from './in-memory-lease-handle.js';
import { InMemoryLeaseRecipe } from './in-memory-lease-recipe.js';
import type { ZkSessionStatus } from '../zookeeper/session/session-status.js';

/**
 * The `LockBackend` port in memory, with the ZooKeeper backend's semantics (FIFO queue
 * per name, shared readers, exclusive writers, fencing tokens, typed errors), for unit
 * tests of code that takes locks. One process only: it coordinates nothing across processes.
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
  private readonly waits = new Map<InMemoryLockAcquisition, Promise<unknown>>();
  private readonly held = new Map<InMemoryLockHandle, QueueEntry>();
  private readonly context: MemoryAcquisitionContext;
  private readonly leases: InMemoryLeaseRecipe;
  private sessionId = newSessionId();
  private closed = false;
  private closing: Promise<void> | undefined;

  /** Validates the options: a wrong value or an unknown key throws `InvalidOptionError`. */
  constructor(options?: InMemoryLockBackendOptions) {
    const { store, identity, nodeFormat } = resolveInMemoryLockOptions(options);
    [this.store, this.identity] = [store, identity];
    this.context = { store, identity, nodeFormat, grant: this.grant };
    this.leases = new InMemoryLeaseRecipe(this.store, this.identity);
  }

  /** Nothing to connect: resolves at once. */
  async start(): Promise<void> {}

  async acquire(name: string, options?: AcquireOptions): Promise<InMemoryLockHandle> {
    const resolved = resolveAcquireOptions(options, Infinity);
    const handle = await this.run(name, resolved);
    if (!handle) throw new LockTimeoutError(name, resolved.mode, 0);
    return handle;
  }

  async tryAcquire(name: string, options?: Omit<AcquireOptions, 'timeoutMs'>): Promise<InMemoryLockHandle | null> {
    return this.run(name, { ...resolveAcquireOptions(options, 0), timeoutMs: 0 });
  }

  /** Every lock of `locks` at once, all or nothing, deadlock-free: see `acquireAll` in core/multi. */
  acquireAll(locks: LockList, options?: MultiAcquireOptions): Promise<MultiLockHandle> {
    return acquireAllThrough(this, locks, options);
  }

  /** `options` are checked as the ZooKeeper backend checks them; the store is never unavailable. */
  async contenders(name: string, options?: ReadOptions): Promise<LockContender[]> {
    encodeLockName(name);
    resolveReadTimeout(options, 'contenders');
    this.assertOpen();
    this.leases.assertNotLease(name);
    return this.store.contenders(name);
  }

  /** As `ZkLockBackend.status()`: `connected` until closed (a health check in unit tests reads it). */
  status(): ZkSessionStatus {
    return { state: this.closed ? 'closed' : 'connected' };
  }

  /** One of `maxLeases` leases on `name`, with `ZkLockBackend.acquireLease`'s semantics; the test controls cover leases too. */
  acquireLease(name: string, options: AcquireLeaseOptions): Promise<InMemoryLeaseHandle> {
    return this.leases.acquire(name, options, () => this.assertOpen());
  }

  /** Holders and waiters of the lease semaphore `name`, in queue order. */
  async leaseContenders(name: string, options?: ReadOptions): Promise<LeaseContender[]> {
    encodeLockName(name);
    resolveReadTimeout(options, 'leaseContenders');
    this.assertOpen();
    return this.leases.contenders(name);
  }

  /**
   * Asks every holder of `name` to release it, as the ZooKeeper backend does: revocable
   * holders' `revocation` aborts, and every holder's identity reads `__REVOKE__`.
   */
  async requestRevocation(name: string, options?: ReadOptions): Promise<number> {
    encodeLockName(name);
    resolveReadTimeout(options, 'requestRevocation');
    this.assertOpen();
    this.leases.assertNotLease(name);
    return this.store.requestRevocation(name);
  }

  /** Every lock of the store whose name starts with `prefix`, with holders and waiters, in name order. */
  async locks(prefix?: string, options?: ReadOptions): Promise<ListedLock[]> {
    const start = resolveListingPrefix(prefix);
    resolveReadTimeout(options, 'locks');
    this.assertOpen();
    return [...this.store.locks(start), ...leaseStoreOf(this.store).listings(start)].sort(byName);
  }

  /** Fails every wait of this backend with `LockClientClosedError`; held locks stay held. */
  async cancelWaits(): Promise<void> {
    const closing = new LockClientClosedError();
    for (const wait of this.waits.keys()) wait.cancel(closing);
    await Promise.allSettled([...this.waits.values(), this.leases.cancelWaits(closing)]);
  }

  /**
   * Cancels waits, aborts the signal of every lock still held (a `LockLostError`) and
   * releases it; later calls reject with `LockClientClosedError`. Safe to call again.
   */
  close(): Promise<void> {
    if (!this.closing) {
      this.closed = true; // before anything runs: nothing new may start meanwhile
      this.closing = this.shutdown();
    }
    return this.closing;
  }

  /**
   * Test-only: every lock this backend holds on `name` is lost, as when its holder's
   * process dies: the signals abort with a `LockLostError` saying the test did it, then
   * the entries leave the queue and whoever waited behind them proceeds.
   */
  loseLock(name: string): void {
    encodeLockName(name);
    const lost = [...this.held.keys()].filter((handle) => handle.name === name);
    this.takeAway(lost, [], () => new LockLostError(name, messages.lostByTest(name)));
    this.leases.lose(name, () => new LockLostError(name, messages.lostByTest(name)));
  }

  /**
   * Test-only: this backend's session expires, as ZooKeeper expires one: every lock it
   * holds is lost (signals abort first, with a `LockLostError` caused by a
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
    const entries = waiting.map(({ entry }) => entry);
    const expireLeases = this.leases.expire((lease) => new LockLostError(lease, messages.sessionExpiredByTest, cause));
    this.takeAway(
      [...this.held.keys()],
      entries,
      (handle) => new LockLostError(handle.name, messages.sessionExpiredByTest, cause),
    );
    expireLeases();
    for (const { wait } of waiting) wait.queueAgain();
  }

  /** Aborts the handles' signals, then takes their entries and `alsoRemove` out of the queues at once. */
  private takeAway(
    handles: InMemoryLockHandle[],
    alsoRemove: QueueEntry[],
    reason: (handle: InMemoryLockHandle) => LockLostError,
  ): void {
    const entries = handles.map((handle) => this.held.get(handle)!);
    for (const handle of handles) this.held.delete(handle);
    // The signals abort before anything leaves the queue: a holder hears first.
    for (const handle of handles) handle.revoke(reason(handle));
    this.store.remove([...entries, ...alsoRemove]);
  }

  private async shutdown(): Promise<void> {
    await this.cancelWaits();
    const held = [...this.held.keys()];
    for (const handle of held) handle.revoke(new LockLostError(handle.name, lockMessages.closingUnderHolder));
    await Promise.allSettled(held.map((handle) => handle.release()));
    await this.leases.releaseAll((lease) => new LockLostError(lease, lockMessages.closingUnderHolder));
  }

  private async run(name: string, options: ResolvedAcquireOptions): Promise<InMemoryLockHandle | null> {
    encodeLockName(name);
    this.assertOpen();
    this.leases.assertNotLease(name);
    const nodeFormat = nodeFormatFor(options.mode, options.nodeFormat, this.context.nodeFormat);
    const acquisition = new InMemoryLockAcquisition(this.context, { name, ...options, nodeFormat });
    const running = acquisition.run();
    this.waits.set(acquisition, running);
    try {
      return await running;
    } finally {
      this.waits.delete(acquisition);
    }
  }

  private readonly grant = (entry: QueueEntry, fencingToken: bigint, revocable: boolean): InMemoryLockHandle => {
    const handle = new InMemoryLockHandle({
      name: entry.name,
      mode: entry.mode,
      fencingToken,
      node: entry.node,
      onReleased: this.onReleased,
      revocable,
    });
    if (revocable) this.store.onRevocationRequested(entry, () => handle.revocationRequested());
    this.held.set(handle, entry);
    return handle;
  };

  private readonly onReleased = (handle: InMemoryLockHandle): void => {
    const entry = this.held.get(handle);
    if (!entry) return; // lost before: its entry went then
    this.held.delete(handle);
    this.store.remove([entry]);
  };

  private assertOpen(): void {
    if (this.closed) throw new LockClientClosedError();
  }
}

/** A ZooKeeper-like session id: 16 hex digits. */
function newSessionId(): string {
  return randomBytes(8).toString('hex');
}
