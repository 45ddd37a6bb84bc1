import type { AcquireLeaseOptions, LeaseHandle, LockBackend } from '../port/lock-backend.js';
import { resolveLeaseOptions } from '../port/options.js';
import type { PendingWork } from '../util/pending-work.js';
import { refuseLost } from './loss-watch.js';

/** `acquireLease` with an optional `timeoutMs` (the locker's default applies). */
export type LeaseCallOptions = AcquireLeaseOptions;

/**
 * Leases through a `ReentrantLocker`: its default timeout, its shutdown (bodies tracked
 * for `drain`). Leases are not reentrant: each call takes one more, in any call chain.
 */
export class LeaseRunner {
  constructor(
    private readonly backend: LockBackend,
    private readonly defaultTimeoutMs: number,
    private readonly bodies: PendingWork,
    /** The locker's treatment of an acquire (its shutdown message). */
    private readonly acquiring: <T>(name: string, pending: Promise<T>) => Promise<T>,
  ) {}

  async acquireLease(name: string, options: LeaseCallOptions): Promise<LeaseHandle> {
    const { maxLeases, timeoutMs, signal } = resolveLeaseOptions(options, this.defaultTimeoutMs);
    return this.acquiring(name, this.backend.acquireLease(name, { maxLeases, timeoutMs, signal }));
  }

  /**
   * Runs `fn(lease)` holding one lease; releases it when `fn` settles; rejects with
   * `LockLostError` if the lease was lost meanwhile, or already when `fn` would start
   * (then `fn` never starts).
   */
  async withLease<T>(name: string, fn: (lease: LeaseHandle) => T | Promise<T>, options: LeaseCallOptions): Promise<T> {
    const lease = await this.acquireLease(name, options);
    if (!lease.isHeld()) return refuseLost(lease);
    const body = (async () => fn(lease))();
    void this.bodies.track(body.catch(() => undefined));
    try {
      const result = await body;
      lease.assertHeld(); // lost while fn ran: its work was not done under the lease
      return result;
    } finally {
      await lease.release().catch(() => undefined); // a failed release loses to fn's outcome
    }
  }
}
