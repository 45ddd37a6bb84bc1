import { LockAbortedError, LockTimeoutError } from '../errors/errors.js';
import { deadline } from '../util/deadline.js';
import type { InMemoryLeaseHandle } from './in-memory-lease-handle.js';
import type { LeaseEntry } from './in-memory-lease-queue.js';
import type { InMemoryLeaseStore } from './in-memory-lease-store.js';
import { leaseMessages } from '../errors/messages.js';
import type { ResolvedLeaseOptions } from '../port/options.js';

export interface MemoryLeaseContext {
  readonly leases: InMemoryLeaseStore;
  readonly identity: string;
  /** Makes the handle of a granted entry at once, so the backend knows every holder. */
  readonly grant: (entry: LeaseEntry, maxLeases: number) => InMemoryLeaseHandle;
}

export interface MemoryLeaseRequest extends ResolvedLeaseOptions {
  readonly name: string;
}

/**
 * One call to take a lease: an entry in the semaphore's queue and the wait for its grant.
 * Settles once: with a handle, or with why it stopped (`LockTimeoutError`, at once when
 * `timeoutMs` is 0 and no lease is free; `LockAbortedError`; `cancel`'s reason). Every
 * outcome but a grant takes the entry out in the same tick, so no grant slips in between.
 */
export class InMemoryLeaseAcquisition {
  private entry: LeaseEntry | undefined;
  private settled = false;
  private cleanup: (() => void) | undefined;
  private resolve!: (handle: InMemoryLeaseHandle) => void;
  private reject!: (reason: unknown) => void;
  private readonly outcome = new Promise<InMemoryLeaseHandle>((resolve, reject) => {
    this.resolve = resolve;
    this.reject = reject;
  });

  constructor(
    private readonly ctx: MemoryLeaseContext,
    private readonly req: MemoryLeaseRequest,
  ) {}

  /** The entry waiting in the queue, until the acquisition settles. */
  get waitingEntry(): LeaseEntry | undefined {
    return this.settled ? undefined : this.entry;
  }

  run(): Promise<InMemoryLeaseHandle> {
    const { name, timeoutMs, signal } = this.req;
    if (signal?.aborted) return Promise.reject(new LockAbortedError(name, signal.reason));
    this.queue();
    if (!this.settled && timeoutMs === 0) this.cancel(this.timedOut(0));
    if (!this.settled) this.watch(timeoutMs, signal);
    return this.outcome;
  }

  /** Stops the wait with `reason`; no-op once settled. */
  cancel(reason: unknown): void {
    if (this.settled) return;
    if (this.entry) this.ctx.leases.remove([this.entry]);
    this.settle(() => this.reject(reason));
  }

  /** Queues again at the back with a new entry, after the backend took the old one out (its session expired). */
  queueAgain(): void {
    if (!this.settled) this.queue();
  }

  private queue(): void {
    const { name, maxLeases } = this.req;
    this.entry = this.ctx.leases.enqueue({ name, identity: this.ctx.identity, onGrant: this.onGrant }, maxLeases);
  }

  private timedOut(timeoutMs: number): LockTimeoutError {
    const { name, maxLeases } = this.req;
    return new LockTimeoutError(name, 'lease', timeoutMs, leaseMessages.timeout(name, maxLeases, timeoutMs));
  }

  private watch(timeoutMs: number, signal: AbortSignal | undefined): void {
    const timeout = deadline(timeoutMs, () => this.timedOut(timeoutMs));
    const onTimeout = (): void => this.cancel(timeout.signal.reason);
    const onAbort = (): void => this.cancel(new LockAbortedError(this.req.name, signal!.reason));
    timeout.signal.addEventListener('abort', onTimeout, { once: true });
    signal?.addEventListener('abort', onAbort, { once: true });
    this.cleanup = () => {
      timeout.clear();
      timeout.signal.removeEventListener('abort', onTimeout);
      signal?.removeEventListener('abort', onAbort);
    };
  }

  private readonly onGrant = (entry: LeaseEntry): void => {
    const handle = this.ctx.grant(entry, this.req.maxLeases);
    this.settle(() => this.resolve(handle));
  };

  private settle(settle: () => void): void {
    this.settled = true;
    this.cleanup?.();
    settle();
  }
}
