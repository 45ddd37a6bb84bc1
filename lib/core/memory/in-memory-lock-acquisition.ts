import type { NodeFormat } from '../port/lock-backend.js';
import { LockAbortedError, LockTimeoutError } from '../errors/errors.js';
import type { ResolvedAcquireOptions } from '../port/options.js';
import { deadline } from '../util/deadline.js';
import type { InMemoryLockHandle } from './in-memory-lock-handle.js';
import type { QueueEntry } from './in-memory-lock-queue.js';
import type { InMemoryLockStore } from './in-memory-lock-store.js';

export interface MemoryAcquisitionContext {
  readonly store: InMemoryLockStore;
  readonly identity: string;
  /** The backend's default node format (a call's own `nodeFormat` wins). */
  readonly nodeFormat: NodeFormat;
  /** Makes the handle of a granted entry, at once, so the backend knows every holder. */
  readonly grant: (entry: QueueEntry, fencingToken: bigint, revocable: boolean) => InMemoryLockHandle;
}

export interface MemoryAcquisitionRequest extends ResolvedAcquireOptions {
  readonly name: string;
  /** Resolved: the call's, else the backend's. */
  readonly nodeFormat: NodeFormat;
}

/**
 * One call to acquire: an entry in the queue, and the wait for its grant. Settles once:
 * with a handle, with `null` when `timeoutMs` is 0 and the lock is taken, or with the
 * reason it stopped (`LockTimeoutError`, `LockAbortedError`, `cancel`'s reason). Every
 * outcome but a grant takes the entry out of the queue before it settles, in the same
 * tick, so no grant can slip in between.
 */
export class InMemoryLockAcquisition {
  private entry: QueueEntry | undefined;
  private settled = false;
  private cleanup: (() => void) | undefined;
  private resolve!: (handle: InMemoryLockHandle | null) => void;
  private reject!: (reason: unknown) => void;
  private readonly outcome = new Promise<InMemoryLockHandle | null>((resolve, reject) => {
    this.resolve = resolve;
    this.reject = reject;
  });

  constructor(
    private readonly ctx: MemoryAcquisitionContext,
    private readonly req: MemoryAcquisitionRequest,
  ) {}

  /** The entry waiting in the queue, until the acquisition settles. */
  get waitingEntry(): QueueEntry | undefined {
    return this.settled ? undefined : this.entry;
  }

  run(): Promise<InMemoryLockHandle | null> {
    const { name, mode, timeoutMs, signal } = this.req;
    if (signal?.aborted) return Promise.reject(new LockAbortedError(name, signal.reason));
    this.queue();
    if (!this.settled && timeoutMs === 0) this.withdraw(() => this.resolve(null));
    if (!this.settled) this.watch(name, mode, timeoutMs, signal);
    return this.outcome;
  }

  /** Stops the wait with `reason` (the backend is cancelling its waits); no-op once settled. */
  cancel(reason: unknown): void {
    this.withdraw(() => this.reject(reason));
  }

  /**
   * Queues again at the back, with a new entry, after the backend took the old one out (its
   * session expired): what `LockAcquisition` does in the new session. The timeout runs on.
   */
  queueAgain(): void {
    if (!this.settled) this.queue();
  }

  private queue(): void {
    const { name, mode, nodeFormat: format } = this.req;
    this.entry = this.ctx.store.enqueue({ name, mode, format, identity: this.ctx.identity, onGrant: this.onGrant });
  }

  private watch(name: string, mode: string, timeoutMs: number, signal: AbortSignal | undefined): void {
    const timeout = deadline(timeoutMs, () => new LockTimeoutError(name, mode, timeoutMs));
    const onTimeout = (): void => this.cancel(timeout.signal.reason);
    const onAbort = (): void => this.cancel(new LockAbortedError(name, signal!.reason));
    timeout.signal.addEventListener('abort', onTimeout, { once: true });
    signal?.addEventListener('abort', onAbort, { once: true });
    this.cleanup = () => {
      timeout.clear();
      timeout.signal.removeEventListener('abort', onTimeout);
      signal?.removeEventListener('abort', onAbort);
    };
  }

  private readonly onGrant = (entry: QueueEntry, fencingToken: bigint): void => {
    const handle = this.ctx.grant(entry, fencingToken, this.req.revocable === true);
    this.settle(() => this.resolve(handle));
  };

  /** Leaves the queue and settles, unless settled already (a grant came first). */
  private withdraw(settle: () => void): void {
    if (this.settled) return;
    if (this.entry) this.ctx.store.remove([this.entry]);
    this.settle(settle);
  }

  private settle(settle: () => void): void {
    this.settled = true;
    this.cleanup?.();
    settle();
  }
}
