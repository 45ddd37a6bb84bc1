import { type LockLostError, LockKindMismatchError } from '../errors/errors.js';
import type { InMemoryLockStore } from './in-memory-lock-store.js';
import { encodeLockName } from '../naming/lock-name-codec.js';
import { InMemoryLeaseAcquisition, type MemoryLeaseContext } from './in-memory-lease-acquisition.js';
import { InMemoryLeaseHandle } from './in-memory-lease-handle.js';
import type { LeaseEntry } from './in-memory-lease-queue.js';
import { leaseStoreOf, type InMemoryLeaseStore } from './in-memory-lease-store.js';
import { checkLeaseDirectory } from '../zookeeper/queue/directory-kind.js';
import type { AcquireLeaseOptions, LeaseContender } from '../port/lock-backend.js';
import { leaseMessages } from '../errors/messages.js';
import { resolveLeaseOptions } from '../port/options.js';

/**
 * `InMemoryLockBackend`'s leases, with the ZooKeeper recipe's semantics: FIFO, at most
 * `maxLeases` holders, the number stored with the semaphore, a name either a lock or a
 * semaphore. Its waits and holds follow the backend's test controls and `close()`.
 */
export class InMemoryLeaseRecipe {
  private readonly leases: InMemoryLeaseStore;
  private readonly waits = new Map<InMemoryLeaseAcquisition, Promise<unknown>>();
  private readonly held = new Map<InMemoryLeaseHandle, LeaseEntry>();
  private readonly context: MemoryLeaseContext;

  constructor(
    private readonly locks: InMemoryLockStore,
    identity: string,
  ) {
    this.leases = leaseStoreOf(locks);
    this.context = { leases: this.leases, identity, grant: this.grant };
  }

  /** `assertOpen` throws if the backend is closed; called once the arguments are checked. */
  async acquire(name: string, options: AcquireLeaseOptions, assertOpen: () => void): Promise<InMemoryLeaseHandle> {
    const resolved = resolveLeaseOptions(options, Infinity);
    encodeLockName(name);
    assertOpen();
    if (this.locks.contenders(name).length > 0)
      throw new LockKindMismatchError(name, 'lease', 'lock', leaseMessages.inMemory);
    const stored = this.leases.maxLeasesOf(name);
    if (stored !== undefined)
      checkLeaseDirectory(
        { name, maxLeases: resolved.maxLeases },
        { kind: 'lease', maxLeases: stored },
        leaseMessages.inMemory,
      );
    const acquisition = new InMemoryLeaseAcquisition(this.context, { name, ...resolved });
    const running = acquisition.run();
    this.waits.set(acquisition, running);
    try {
      return await running;
    } finally {
      this.waits.delete(acquisition);
    }
  }

  contenders(name: string): LeaseContender[] {
    if (this.locks.contenders(name).length > 0)
      throw new LockKindMismatchError(name, 'lease', 'lock', leaseMessages.inMemory);
    return this.leases.contenders(name);
  }

  /** For the backend's lock calls: a name that is a semaphore is refused. */
  assertNotLease(name: string): void {
    const maxLeases = this.leases.maxLeasesOf(name);
    if (maxLeases !== undefined)
      throw new LockKindMismatchError(name, 'lock', 'lease', leaseMessages.inMemory, maxLeases);
  }

  /** Every lease this backend holds on `name` is lost: signals abort first, then the entries go. */
  lose(name: string, reason: (name: string) => LockLostError): void {
    this.takeAway(
      [...this.held.keys()].filter((handle) => handle.name === name),
      [],
      reason,
    );
  }

  /**
   * The session expired: holds are lost, and every wait queues again at the back, in the
   * order it stood. Who holds and who waits is taken now; the returned function does the
   * rest, so the backend can take its locks' state too before any signal aborts (an abort
   * listener may start new waits, which belong to the new session).
   */
  expire(reason: (name: string) => LockLostError): () => void {
    const held = [...this.held.keys()];
    const waiting = [...this.waits.keys()].flatMap((wait) =>
      wait.waitingEntry ? [{ wait, entry: wait.waitingEntry }] : [],
    );
    waiting.sort((a, b) => a.entry.sequence - b.entry.sequence);
    return () => {
      this.takeAway(
        held,
        waiting.map(({ entry }) => entry),
        reason,
      );
      for (const { wait } of waiting) wait.queueAgain();
    };
  }

  async cancelWaits(reason: unknown): Promise<void> {
    for (const wait of this.waits.keys()) wait.cancel(reason);
    await Promise.allSettled(this.waits.values());
  }

  /** At close: every lease still held is lost (its signal aborts), then released. */
  async releaseAll(reason: (name: string) => LockLostError): Promise<void> {
    const held = [...this.held.keys()];
    for (const handle of held) handle.revoke(reason(handle.name));
    await Promise.allSettled(held.map((handle) => handle.release()));
  }

  private takeAway(
    handles: InMemoryLeaseHandle[],
    alsoRemove: LeaseEntry[],
    reason: (name: string) => LockLostError,
  ): void {
    const entries = handles.map((handle) => this.held.get(handle)!);
    for (const handle of handles) this.held.delete(handle);
    for (const handle of handles) handle.revoke(reason(handle.name)); // holders hear before anything moves
    this.leases.remove([...entries, ...alsoRemove]);
  }

  private readonly grant = (entry: LeaseEntry, maxLeases: number): InMemoryLeaseHandle => {
    const handle = new InMemoryLeaseHandle({
      name: entry.name,
      maxLeases,
      node: entry.node,
      onReleased: this.onReleased,
    });
    this.held.set(handle, entry);
    return handle;
  };

  private readonly onReleased = (handle: InMemoryLeaseHandle): void => {
    const entry = this.held.get(handle);
    if (!entry) return; // lost before: its entry went then
    this.held.delete(handle);
    this.leases.remove([entry]);
  };
}
