import { LockAbortedError, type LockTimeoutError } from '../errors/errors.js';
import { deadline } from '../util/deadline.js';
import type { InMemoryLockStore } from './in-memory-lock-store.js';
import type { QueueEntry } from './in-memory-queue.js';

/** What one call asks for, as the backend sets it up for a lock or a lease. */
export interface Claim<E extends QueueEntry, H> {
  readonly name: string;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  /** Queues a new entry at the back of the name's line; the store calls `onGrant` once it holds (maybe at once). */
  enqueue(onGrant: (entry: E, fencingToken: bigint) => void): E;
  /** Makes the handle of the granted entry, at once, so the backend knows every holder. */
  grant(entry: E, fencingToken: bigint): H;
  /** The error a wait past `timeoutMs` rejects with. */
  timedOut(timeoutMs: number): LockTimeoutError;
}

/**
 * One call to take a lock or a lease: an entry in the queue, and the wait for its grant.
 * Settles once: with a handle, with `null` when `timeoutMs` is 0 and the entry was not
 * granted at once, or with the reason it stopped (`LockTimeoutError`, `LockAbortedError`,
 * `cancel`'s reason). Every outcome but a grant takes the entry out of the queue before it
 * settles, in the same tick, so no grant can slip in between.
 */
export class InMemoryAcquisition<E extends QueueEntry, H> {
  private entry: E | undefined;
  private settled = false;
  private cleanup: (() => void) | undefined;
  private resolve!: (handle: H | null) => void;
  private reject!: (reason: unknown) => void;
  private readonly outcome = new Promise<H | null>((resolve, reject) => {
    this.resolve = resolve;
    this.reject = reject;
  });

  constructor(
    private readonly store: InMemoryLockStore,
    private readonly claim: Claim<E, H>,
  ) {}

  /** The entry waiting in the queue, until the acquisition settles. */
  get waitingEntry(): E | undefined {
    return this.settled ? undefined : this.entry;
  }

  run(): Promise<H | null> {
    const { name, timeoutMs, signal } = this.claim;
    if (signal?.aborted) return Promise.reject(new LockAbortedError(name, signal.reason));
    this.queue();
    if (!this.settled && timeoutMs === 0) this.withdraw(() => this.resolve(null));
    if (!this.settled) this.watch(timeoutMs, signal);
    return this.outcome;
  }

  /** Stops the wait with `reason` (the backend is cancelling its waits); no-op once settled. */
  cancel(reason: unknown): void {
    this.withdraw(() => this.reject(reason));
  }

  /**
   * Queues again at the back, with a new entry, after the backend took the old one out (its
   * session expired): what the ZooKeeper acquisition does in the new session. The timeout runs on.
   */
  queueAgain(): void {
    if (!this.settled) this.queue();
  }

  private queue(): void {
    this.entry = this.claim.enqueue(this.onGrant);
  }

  private watch(timeoutMs: number, signal: AbortSignal | undefined): void {
    const timeout = deadline(timeoutMs, () => this.claim.timedOut(timeoutMs));
    const onTimeout = (): void => this.cancel(timeout.signal.reason);
    const onAbort = (): void => this.cancel(new LockAbortedError(this.claim.name, signal!.reason));
    timeout.signal.addEventListener('abort', onTimeout, { once: true });
    signal?.addEventListener('abort', onAbort, { once: true });
    this.cleanup = () => {
      timeout.clear();
      timeout.signal.removeEventListener('abort', onTimeout);
      signal?.removeEventListener('abort', onAbort);
    };
  }

  private readonly onGrant = (entry: E, fencingToken: bigint): void => {
    const handle = this.claim.grant(entry, fencingToken);
    this.settle(() => this.resolve(handle));
  };

  /** Leaves the queue and settles, unless settled already (a grant came first). */
  private withdraw(settle: () => void): void {
    if (this.settled) return;
    if (this.entry) this.store.remove([this.entry]);
    this.settle(settle);
  }

  private settle(settle: () => void): void {
    this.settled = true;
    this.cleanup?.();
    settle();
  }
}
