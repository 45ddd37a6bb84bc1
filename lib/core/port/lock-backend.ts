import { LockLostError } from '../errors/errors.js';
import { lockMessages } from '../errors/messages.js';
import type { ListedLock } from './listing.js';
import type { LockMode } from './lock-mode.js';
import type { NodeFormat } from './node-format.js';
import type { MultiLockHandle } from './multi-lock-handle.js';
import type { AcquireLeaseOptions, LeaseContender, LeaseHandle } from './lease.js';
import type { LockList, MultiAcquireOptions } from './multi-options.js';

/** Per-call options of `acquire` and `tryAcquire`. */
export interface AcquireOptions {
  /** `write` (exclusive, the default) or `read` (shared with other readers). */
  readonly mode?: LockMode;
  /**
   * How long to wait for the lock, in milliseconds: `0` tries once without waiting,
   * `Infinity` waits as long as it takes; any number in between, however large (past
   * setTimeout's 2^31 - 1 ms it is waited in chunks). Default: `Infinity` in the core.
   */
  readonly timeoutMs?: number;
  /** Cancels the wait; the acquire rejects with `LockAbortedError` and leaves no node. */
  readonly signal?: AbortSignal;
  /**
   * Lets other clients ask this holder to give the lock up (`requestRevocation`, or
   * Curator's `Revoker`): the handle's `revocation` signal then aborts. Cooperative: the
   * lock stays held until you release it. Costs one watch on the lock node while held;
   * default `false` costs nothing.
   */
  readonly revocable?: boolean;
  /**
   * How this call names its lock node, for locks shared with another client family:
   * `"kazoo"`, `"curator-mutex"` or `"curator-rw"` (see `NodeFormat`). Default: the
   * client's `nodeFormat` option. The queue reads every format whatever this says.
   */
  readonly nodeFormat?: NodeFormat;
}

/** A granted lock. Release it exactly once; releasing again does nothing. */
export interface LockHandle extends AsyncDisposable {
  readonly name: string;
  readonly mode: LockMode;
  /**
   * Strictly increasing across successive grants of this lock (see docs/fencing.md).
   * Pass it to the protected resource, which must refuse tokens lower than one it has seen.
   */
  readonly fencingToken: bigint;
  /** Aborts with a `LockLostError` as its reason when the lock can no longer be trusted. */
  readonly signal: AbortSignal;
  /**
   * Aborts with a `LockRevocationRequestedError` when another client asks the holders of
   * this lock to release it; only for locks acquired with `revocable: true` (for others it
   * never aborts). The lock is still held: stop at a safe point and `release()`. Watch both
   * with `AbortSignal.any([lock.signal, lock.revocation])`.
   */
  readonly revocation: AbortSignal;
  /** Whether `release()` has been called. */
  readonly released: boolean;
  /** Not released and not lost, checked against the clock at this moment. */
  isHeld(): boolean;
  /**
   * Throws unless `isHeld()`: the signal's `LockLostError`, or a `LockLostError` saying the
   * handle was released. Call it right before each step that needs the lock.
   */
  assertHeld(): void;
  release(): Promise<void>;
}

/** `assertHeld()` for any handle: a lock, a lease, a reentrant hold. */
export function assertHeld(handle: Pick<LockHandle, 'name' | 'signal' | 'released'>): void {
  const { signal } = handle;
  if (signal.aborted) throw signal.reason;
  if (handle.released) throw new LockLostError(handle.name, lockMessages.releasedHandle);
}

/** Options of the reads (`contenders`, `locks`, `leaseContenders`) and of `requestRevocation`. */
export interface ReadOptions {
  /**
   * How long to wait for a connected ZooKeeper session: past it with none connected, the
   * call rejects with `LockUnavailableError`. Default 10 s (in Nest: the module's
   * `acquireTimeoutMs`); `Infinity` waits for ZooKeeper to come back.
   */
  readonly timeoutMs?: number;
}

/** One node in a lock's queue, as `contenders()` reports it. */
export interface LockContender {
  /** The child node's name, in its client's format. */
  readonly node: string;
  readonly mode: LockMode;
  /** ZooKeeper's sequence number: the queue position. */
  readonly sequence: number;
  /** Which client family named the node: `"kazoo"` (this library's default too), `"curator-mutex"` or `"curator-rw"`. */
  readonly format: NodeFormat;
  /**
   * What the client wrote into its node (by default `host:pid:instance`), if readable.
   * `__REVOKE__` once `requestRevocation` (or Curator's `Revoker`) asked this holder to release.
   */
  readonly identity: string | null;
  /** `true` for current holders, `false` for waiters. */
  readonly holding: boolean;
}

/**
 * The lock port: the semantics every backend implements (ZooKeeper here; an in-memory one
 * for users' unit tests can implement the same). Names are any non-empty strings.
 */
export interface LockBackend {
  /** Connects, if the backend needs to; idempotent. */
  start(): Promise<void>;
  /**
   * Resolves with a handle, or rejects with `LockTimeoutError` / `LockAbortedError`, or
   * `LockUnavailableError` when the backend could not ask (ZooKeeper: no session connected,
   * at once for `timeoutMs: 0`, else at the deadline).
   */
  acquire(name: string, options?: AcquireOptions): Promise<LockHandle>;
  /** Resolves with a handle, or `null` if the lock is not available right away; `LockUnavailableError` as `acquire`. */
  tryAcquire(name: string, options?: Omit<AcquireOptions, 'timeoutMs'>): Promise<LockHandle | null>;
  /**
   * Every lock of `locks` at once, all or nothing, without deadlock whatever order callers
   * list them in (see `acquireAll` in core/multi). Both backends of this library have it;
   * it is optional so that backends written before it still compile: `ReentrantLocker`
   * then runs the generic `acquireAll(backend, …)` over `acquire` and `tryAcquire`.
   */
  acquireAll?(locks: LockList, options?: MultiAcquireOptions): Promise<MultiLockHandle>;
  /** Holders and waiters, in queue order. */
  contenders(name: string, options?: ReadOptions): Promise<LockContender[]>;
  /**
   * One of `maxLeases` leases on `name`, a counting semaphore (see `ZkLockBackend.acquireLease`).
   * Both backends of this library have it; optional so that backends written before it
   * still compile.
   */
  acquireLease?(name: string, options: AcquireLeaseOptions): Promise<LeaseHandle>;
  /** Holders and waiters of the lease semaphore `name`, in queue order. */
  leaseContenders?(name: string, options?: ReadOptions): Promise<LeaseContender[]>;
  /**
   * Asks every current holder of `name` (not the waiters) to release it; resolves with how
   * many were asked. Holders that acquired with `revocable: true` see `revocation` abort.
   */
  requestRevocation(name: string, options?: ReadOptions): Promise<number>;
  /**
   * Every lock whose name starts with `prefix` (default: all) that has a holder or a
   * waiter, in name order, each with its holders and waiters and since when they queued.
   */
  locks(prefix?: string, options?: ReadOptions): Promise<ListedLock[]>;
  /** Fails every wait under way with `LockClientClosedError`; held locks stay held. */
  cancelWaits(): Promise<void>;
  /** Releases what is held, cancels waits, and disconnects. */
  close(): Promise<void>;
}
