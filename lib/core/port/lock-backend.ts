import { LockLostError } from '../errors/errors.js';
import { lockMessages } from '../errors/messages.js';
import type { GroupEntry, GroupMember, MemberData, Unwatch, WatchTarget } from './group.js';

/** `write` is exclusive (a plain mutex); `read` is shared with other readers. */
export type LockMode = 'read' | 'write';

export const LOCK_MODES: readonly LockMode[] = ['read', 'write'];

/**
 * How this client names its lock nodes, so that another client family queues in the same
 * line (see docs/interoperability.md). The queue itself reads every format whatever this
 * option says: a holder of any of them blocks us.
 *
 * - `kazoo` (default): Kazoo's `Lock` / `ReadLock` / `WriteLock`:
 *   `<32 hex>__lock__<seq>` and `<32 hex>__rlock__<seq>`.
 * - `curator-mutex`: Apache Curator's `InterProcessMutex` (and `LeaderSelector`):
 *   `_c_<uuid>-lock-<seq>`; exclusive only, so `mode: 'read'` is refused.
 * - `curator-rw`: Curator's `InterProcessReadWriteLock`: `_c_<uuid>-__WRIT__<seq>` and
 *   `_c_<uuid>-__READ__<seq>`.
 */
export type NodeFormat = 'kazoo' | 'curator-mutex' | 'curator-rw';

/**
 * When `release()` (and the end of `withLock`, `withLocks`, `withLease`) resolves:
 *
 * - `sent` (default): once the delete of the lock's node is written on the session,
 *   without waiting for ZooKeeper's answer. Nobody else can be granted the lock while the
 *   node exists, and the session sends in order, so anything this client asks next goes
 *   after the delete. A delete that fails is retried until the session ends (which
 *   deletes the node too); the handle's `releaseConfirmed` settles once it is gone.
 * - `confirmed`: once ZooKeeper answered the delete (or the session that owned the node
 *   ended): `release()` and `releaseConfirmed` settle together.
 *
 * The in-memory backend releases at once either way.
 */
export type ReleaseMode = 'sent' | 'confirmed';

export const RELEASE_MODES: readonly ReleaseMode[] = ['sent', 'confirmed'];

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
  /**
   * The longest this grant may be held, in whole milliseconds (default: no limit). Past it
   * the handle's `signal` aborts with a `LockLostError` naming `maxHoldMs`, and then the
   * lock is released (ZooKeeper: its node deleted) so that another client can take it: a
   * holder that hangs gives the lock back. The holder should still call `release()`.
   */
  readonly maxHoldMs?: number;
  /**
   * When this grant's `release()` resolves: `"sent"` (once the delete is on its way) or
   * `"confirmed"` (once ZooKeeper answered it). See `ReleaseMode`. Default: the client's
   * `release` option (`"sent"`).
   */
  readonly release?: ReleaseMode;
}

/**
 * Settles once the release is confirmed: ZooKeeper answered the delete of the node, or the
 * session that owned it ended (which deleted it). Pending until `release()` is called; at
 * once on the in-memory backend. Await it where the next step must find the lock free in
 * ZooKeeper's own state, e.g. before reading `contenders()` or `locks()` from another client.
 */
export interface ReleaseConfirmation {
  readonly releaseConfirmed: Promise<void>;
}

/** A granted lock. Release it exactly once; releasing again does nothing. */
export interface LockHandle extends AsyncDisposable, ReleaseConfirmation {
  readonly name: string;
  readonly mode: LockMode;
  /**
   * Strictly increasing across successive grants of this lock; readers held at once may
   * share one (see docs/fencing.md, "A token never goes down"). Pass it to the protected resource, which must refuse tokens lower than one it has seen.
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
  /**
   * Gives the lock up. Resolves once the delete is sent (default), or once ZooKeeper
   * confirmed it with `release: "confirmed"`; `isHeld()` is `false` from the call on.
   */
  release(): Promise<void>;
}

/**
 * What the library's own handles offer besides `LockHandle`: the expiry of `maxHoldMs`,
 * for a group's timer to run on each of its locks (see `MultiAcquireOptions.maxHoldMs`).
 */
export interface HoldExpiry {
  /**
   * Held past `maxHoldMs`: tells the holder (the signal aborts), then releases; nothing once
   * released. A holder lost earlier (told then) whose lock stayed for its work loses it now.
   */
  holdExpired(maxHoldMs: number): void;
}

/** Whether `handle` can be expired as held past `maxHoldMs` (`ZkLockBackend`'s and `InMemoryLockBackend`'s can). */
export function canExpireHold(handle: LockHandle): handle is LockHandle & HoldExpiry {
  return typeof (handle as Partial<HoldExpiry>).holdExpired === 'function';
}

/**
 * What the library's own lock handles offer besides `LockHandle`: a release that leaves a
 * kept hold behind (`holdAtLeastMs`), which every acquirer of the name honours.
 */
export interface KeptRelease {
  /**
   * Releases the lock, but keeps it counted as held by every acquirer of the name for
   * `holdMs` more (ZooKeeper: a marker in its directory, see core/port/kept-hold), or until
   * this backend's session ends. Resolves `true` once the hold is in place and the release
   * made; `false` (nothing released) when the hold could not be put in place or the lock is
   * not held: the caller keeps the lock itself then.
   */
  releaseKeeping(holdMs: number): Promise<boolean>;
}

/** Whether `handle` can leave a kept hold behind (`ZkLockBackend`'s and `InMemoryLockBackend`'s can). */
export function canKeepHold(handle: LockHandle): handle is LockHandle & KeptRelease {
  return typeof (handle as Partial<KeptRelease>).releaseKeeping === 'function';
}

/**
 * The queue node of a held lock, as `contenders()` names it, for handles that tell it
 * (`ZkLockBackend`'s and `InMemoryLockBackend`'s do); `undefined` for others.
 */
export function heldNode(handle: LockHandle): string | undefined {
  const { node } = handle as { node?: unknown };
  return typeof node === 'string' ? node : undefined;
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

/** One lock of a multi-lock: a name (taken for `write`), or a name and its mode. */
export type LockListEntry = string | { readonly name: string; readonly mode?: LockMode };

/** The locks `acquireAll` and `withLocks` take together, in any order; duplicates merge (`write` wins). */
export type LockList = readonly LockListEntry[];

/**
 * Per-call options of `acquireAll`: one deadline for the whole call. (`ReentrantLocker`
 * and `LockService` take `reentrant` too; a backend accepts and ignores it, since it
 * always takes nodes of its own.)
 */
export interface MultiAcquireOptions {
  /**
   * How long to wait for all the locks together, in milliseconds: `0` tries once without
   * waiting, `Infinity` waits as long as it takes. Default: `Infinity` on a backend, the
   * locker's default timeout on `ReentrantLocker`.
   */
  readonly timeoutMs?: number;
  /** Cancels the wait; the call rejects with `LockAbortedError` and leaves no node. */
  readonly signal?: AbortSignal;
  /** How every node of the call is named (see `AcquireOptions.nodeFormat`). Default: the client's. */
  readonly nodeFormat?: NodeFormat;
  /**
   * The longest the group may be held, in whole milliseconds (default: no limit). The clock
   * starts when the whole group is granted, not when each lock is: a lock granted early does
   * not run out while the others are awaited. Past it the group behaves as one lock held past
   * `AcquireOptions.maxHoldMs`: the signals abort with a `LockLostError` naming `maxHoldMs`,
   * and then every lock of the group is released (ZooKeeper: its node deleted).
   */
  readonly maxHoldMs?: number;
  /** When the group's `release()` resolves (see `AcquireOptions.release`). Default: the client's. */
  readonly release?: ReleaseMode;
}

/**
 * The lock port: the semantics every backend implements (ZooKeeper here; an in-memory one
 * for users' unit tests can implement the same). Names are any non-empty strings.
 */
export interface LockBackend {
  /** Who this client is, as `contenders()` shows it; job records name it beside `host:pid`. */
  readonly identity?: string;
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
   * list them in. A backend without a faster way builds it on its own `acquire` and
   * `tryAcquire` with `acquireAll(backend, …)` of core/multi.
   */
  acquireAll(locks: LockList, options?: MultiAcquireOptions): Promise<MultiLockHandle>;
  /** Holders and waiters, in queue order. */
  contenders(name: string, options?: ReadOptions): Promise<LockContender[]>;
  /** One of `maxLeases` leases on `name`, a counting semaphore (see `ZkLockBackend.acquireLease`). */
  acquireLease(name: string, options: AcquireLeaseOptions): Promise<LeaseHandle>;
  /** Holders and waiters of the lease semaphore `name`, in queue order. */
  leaseContenders(name: string, options?: ReadOptions): Promise<LeaseContender[]>;
  /**
   * Asks every current holder of `name` (not the waiters) to release it; resolves with how
   * many were asked. Holders that acquired with `revocable: true` see `revocation` abort.
   */
  requestRevocation(name: string, options?: ReadOptions): Promise<number>;
  /**
   * Every lock whose name starts with `prefix` (default: all) that has a holder or a
   * waiter, in name order, each with its holders and waiters and since when they queued;
   * and every job with a record (see `ListedRun`), idle or not, with its last run.
   */
  locks(prefix?: string, options?: ReadOptions): Promise<ListedLock[]>;
  /**
   * The small JSON record kept under `name`, or `null` if none was written. Records live
   * apart from lock queues (ZooKeeper: persistent nodes under `<rootPath>-records/`), so a
   * record never blocks, lists as, or is swept with a lock of the same name.
   * `LockUnavailableError` as `contenders`.
   */
  readRecord(name: string, options?: ReadOptions): Promise<StoredRecord | null>;
  /**
   * Writes the record under `name`; with `expectedVersion`, only over that version (`null`:
   * only if there is none), else resolves `false` and changes nothing. A write repeated
   * after a lost connection may find its own first try and resolve `false`: put something
   * unique in the data to tell (as `runOnce` and job records do). With `whileHolding`, only
   * while that lock is held, else rejects with `LockLostError` and changes nothing.
   */
  writeRecord(name: string, data: RecordData, options?: WriteRecordOptions): Promise<boolean>;
  /**
   * A time, in ms since the epoch by the backend's own clock (ZooKeeper: the leader's, as it
   * stamps `writtenAt`), that is not later than the backend's "now" when the promise
   * resolves: `serverTime() + (performance.now() - t)`, with `t` read when it resolved, never
   * runs ahead of that clock. ZooKeeper can only tell it through a write: the time of an
   * empty write to the records' root (`<rootPath>-records`), a node nobody reads.
   * `LockUnavailableError` as `contenders`.
   */
  serverTime(options?: ReadOptions): Promise<number>;
  /**
   * Settles once every release this backend has sent so far is confirmed: for each,
   * ZooKeeper answered the delete of its node (or said it was gone), or the server ended
   * the session that owned it (which deleted it). A session the client only presumed lost
   * is not an end: the delete goes on through the session given back. Releases made later
   * are not waited for; with none pending it resolves at once, connected or not. Await it
   * before reading the backend's state from another connection (another client, a test's
   * inspector) right after `release()` answered with `release: "sent"`. Rejects with
   * `LockUnavailableError` once `timeoutMs` (default 10 s) has passed with no session
   * connected and a release still unconfirmed; `InvalidOptionError` for bad options. At
   * once on the in-memory backend.
   */
  releasesConfirmed(options?: ReadOptions): Promise<void>;
  /**
   * Joins `group` as member `id` with `data` (see `GroupEntry`): ZooKeeper, an ephemeral
   * node `<rootPath>-groups/<group>/<id>` holding the data as JSON. A member already there
   * with the same id is replaced (its `signal` aborts with `MemberReplacedError`), as a
   * restarted Kafka static member takes its id back without waiting for the old session to
   * expire. Writes nothing more while joined. `InvalidGroupError` for a bad group or id,
   * `InvalidOptionError` for bad data (see `MAX_MEMBER_DATA_BYTES`); `LockUnavailableError`
   * as `contenders`.
   */
  joinGroup(group: string, id: string, data: MemberData, options?: ReadOptions): Promise<GroupEntry>;
  /** The members of `group`, in id order (none when nobody ever joined); `LockUnavailableError` as `contenders`. */
  groupMembers(group: string, options?: ReadOptions): Promise<GroupMember[]>;
  /**
   * Calls `onChange` once, the first time what `target` names may have changed after the
   * watch is set (ZooKeeper: one watch, as one-shot as ZooKeeper's): a lock's holders or
   * waiters, a record's content, a group's members. It may also be called when nothing
   * changed (a lost session, a spurious wake): read again, then watch again. Set the watch
   * before reading, and no change is missed. Resolves once the watch is set, with the
   * function that drops it; `LockUnavailableError` as `contenders`. Writes nothing.
   */
  watch(target: WatchTarget, onChange: () => void, options?: ReadOptions): Promise<Unwatch>;
  /** Fails every wait under way with `LockClientClosedError`; held locks stay held. */
  cancelWaits(): Promise<void>;
  /** Releases what is held, leaves every group joined, cancels waits, and disconnects. */
  close(): Promise<void>;
}

/** A record's content: a plain JSON object (stored as its `JSON.stringify`, up to `MAX_RECORD_BYTES`). */
export type RecordData = { readonly [key: string]: unknown };

/** A record as `readRecord` found it. */
export interface StoredRecord {
  readonly data: RecordData;
  /** Raised by each write: pass it as `expectedVersion` to write only over what was read. */
  readonly version: number;
  /**
   * When the last write of it was made, in ms since the epoch by the backend's clock
   * (ZooKeeper: the node's `mtime`, stamped by the leader between the write's request and
   * its answer): the clock `serverTime()` reads.
   */
  readonly writtenAt: number;
}

/** Options of `writeRecord`. */
export interface WriteRecordOptions extends ReadOptions {
  /** Write only over this version, or (`null`) only where there is no record. Default: over any. */
  readonly expectedVersion?: number | null;
  /**
   * Write only while this lock, granted by this backend's `acquire`, is held: the write
   * cannot land after the lock was released or lost, nor once its node is gone unknown to
   * the holder (ZooKeeper: deleted by `release --force`, or with its session), since
   * ZooKeeper commits it in one transaction with a check that the lock's node still exists.
   * Rejects with `LockLostError` when it is not held, having written nothing.
   */
  readonly whileHolding?: LockHandle;
}

/** Options of `acquireLease`. */
export interface AcquireLeaseOptions {
  /**
   * How many holders the semaphore admits at once, 1 to 1000. Stored with the semaphore
   * when it is created: every client must pass the same number (`LeaseLimitMismatchError`).
   */
  readonly maxLeases: number;
  /**
   * How long to wait for a lease, in milliseconds: `0` tries once without waiting,
   * `Infinity` waits as long as it takes. Default: `Infinity` in the core.
   */
  readonly timeoutMs?: number;
  /** Cancels the wait; the call rejects with `LockAbortedError` and leaves no node. */
  readonly signal?: AbortSignal;
  /** The longest the lease may be held (see `AcquireOptions.maxHoldMs`). Default: no limit. */
  readonly maxHoldMs?: number;
  /** When the lease's `release()` resolves (see `AcquireOptions.release`). Default: the client's. */
  readonly release?: ReleaseMode;
}

/**
 * One of a semaphore's `maxLeases` leases. Not reentrant: each `acquireLease` takes one
 * more. Release it exactly once; releasing again returns the same promise.
 */
export interface LeaseHandle extends AsyncDisposable, ReleaseConfirmation {
  readonly name: string;
  readonly maxLeases: number;
  /**
   * Greater than the token of every lease of this name released before this one was
   * granted (with `maxLeases: 1`, strictly increasing across grants, as a lock's); leases
   * held at once may share one or come in any order (see docs/fencing.md).
   */
  readonly fencingToken: bigint;
  /** Aborts with a `LockLostError` as its reason when the lease can no longer be trusted. */
  readonly signal: AbortSignal;
  /** Whether `release()` has been called. */
  readonly released: boolean;
  /** Not released and not lost, checked against the clock at this moment. */
  isHeld(): boolean;
  /** Throws unless `isHeld()`: the signal's `LockLostError`, or one saying the handle was released. */
  assertHeld(): void;
  release(): Promise<void>;
}

/** One node of a semaphore's queue, as `leaseContenders()` reports it. */
export interface LeaseContender {
  /** The child node's name: `<32 hex guid>__lease__<seq>`. */
  readonly node: string;
  /** ZooKeeper's sequence number: the queue position. */
  readonly sequence: number;
  /** What the client wrote into its node (by default `host:pid:instance`), if readable. */
  readonly identity: string | null;
  /** `true` for the (at most `maxLeases`) holders, `false` for waiters. */
  readonly holding: boolean;
}

/**
 * Several locks granted together (`acquireAll`). Release it exactly once; releasing again
 * does nothing. A lost lock is not released for you: the others still guard their
 * resources until `release()`.
 */
export interface MultiLockHandle extends AsyncDisposable, ReleaseConfirmation {
  /** The locks' names, once each, in the order they were taken (the canonical order). */
  readonly names: readonly string[];
  /** One handle per name, in the order of `names`: each with its mode and fencing token. */
  readonly handles: readonly LockHandle[];
  /** Aborts with the first `LockLostError` as its reason as soon as any one of the locks is lost. */
  readonly signal: AbortSignal;
  /** Whether `release()` has been called. */
  readonly released: boolean;
  /** Not released and none of the locks lost, checked at this moment. */
  isHeld(): boolean;
  /** Throws the `LockLostError` of the first lock that is not held. Call it right before each step that needs the locks. */
  assertHeld(): void;
  /**
   * Releases every lock (all at once: on ZooKeeper one transaction); rejects with the first
   * failure after trying all. Resolves once the deletes are sent, or confirmed with
   * `release: "confirmed"`; `releaseConfirmed` settles when every lock's has.
   */
  release(): Promise<void>;
}

/** A node in a listed lock's queue: a contender, and since when it queued. */
export interface ListedContender extends LockContender {
  /**
   * When its node was created (ZooKeeper: the node's `ctime`, by the clock of the leader
   * that committed the create). A holder has held the lock for at most `now - since`;
   * it may have waited part of that time.
   */
  readonly since: Date;
  /** The ZooKeeper session that owns the node, `0x…` as ZooKeeper's logs and four-letter words show it (ZooKeeper only). */
  readonly sessionId?: string;
}

/** A lock with at least one node, as `locks()` lists it. */
export interface LockListing {
  readonly kind: 'lock';
  /** The lock's name, decoded from its directory's name. */
  readonly name: string;
  /** Who holds it now: one writer, or one or more readers. */
  readonly holders: ListedContender[];
  /** Who waits, in queue order. */
  readonly waiters: ListedContender[];
  /**
   * For a job (a lock run by `withLock` with `holdAtLeastMs` or a `maxHoldMs` of its own):
   * its last run, from its record. A job listed with no holder and no waiter is idle.
   */
  readonly lastRun?: ListedRun;
  /** For a job whose last run left a hold (`holdAtLeastMs`): when it ends, on the backend's clock (it may have passed). */
  readonly keptUntil?: Date;
}

/** A job's run as `locks()` lists it (times on the backend's clock, within a round trip). */
export interface ListedRun {
  /** Who ran it: `<host>:<pid>`. */
  readonly by: string;
  /** The identity of the client that ran it (absent in records written before it was kept). */
  readonly identity?: string;
  readonly startedAt: Date;
  readonly endedAt: Date;
  /** `ok`, `error` (the function threw), `lost` (the lock was lost under it), `max-hold` (it ran past its `maxHoldMs`). */
  readonly outcome: 'ok' | 'error' | 'lost' | 'max-hold';
}

/** A lease node (`<guid>__lease__<seq>`) of a semaphore directory. */
export type ListedLease = Omit<ListedContender, 'mode' | 'format'>;

/**
 * A semaphore's directory (lease nodes; its data holds the number of leases). Holders are
 * the `maxLeases` lowest-numbered nodes; when the directory's data gives no number, none
 * is reported as holding.
 */
export interface LeaseListing {
  readonly kind: 'lease';
  readonly name: string;
  /** The number of leases read from the directory's data, or `null` if it holds none. */
  readonly maxLeases: number | null;
  readonly holders: ListedLease[];
  readonly waiters: ListedLease[];
}

/** One entry of `locks()`: a lock, or (ZooKeeper only) a semaphore's leases. */
export type ListedLock = LockListing | LeaseListing;

/** Listings in name order (by UTF-16 code units, as `Array.prototype.sort` compares). */
export function byName(a: ListedLock, b: ListedLock): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
