import {
  fenceMessages,
  groupMessages,
  leaderMessages,
  leaseMessages,
  lockMessages,
  multiLockMessages,
  revocationMessages,
  type FoundKind,
  type LockKind,
} from './messages.js';

export type { FoundKind, LockKind };

/** Base class of every error this library throws, so callers can catch them all at once. */
export abstract class ZkLockError extends Error {
  /** Stable, machine-readable code, e.g. `LOCK_TIMEOUT`. */
  abstract readonly code: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * Why a `ZkConnectionError` was thrown: no server answered in time (`timeout`); every server
 * refused the connection (`refused`); the servers that answered are ones locks cannot rely
 * on (`unfit-server`, a `ZkServerRefusedError`); the connection string's chroot does not
 * exist (`chroot`); the connection string cannot be used (`connection-string`). Tools that
 * word their own advice (the CLI names its flags) switch on it.
 */
export type ZkConnectionFailure = 'timeout' | 'refused' | 'unfit-server' | 'chroot' | 'connection-string';

/** ZooKeeper could not be reached, or the connection string is unusable. */
export class ZkConnectionError extends ZkLockError {
  readonly code = 'ZK_CONNECTION';

  constructor(
    message: string,
    readonly connectionString: string,
    cause?: unknown,
    readonly reason: ZkConnectionFailure = 'timeout',
  ) {
    super(message, { cause });
  }
}

/** A leader group that cannot be used; thrown before anything is sent to ZooKeeper. */
export class InvalidLeaderGroupError extends ZkLockError {
  readonly code = 'INVALID_LEADER_GROUP';

  constructor(
    readonly group: unknown,
    readonly why: string,
    cause?: unknown,
  ) {
    super(leaderMessages.invalidGroup(group, why), { cause });
  }
}

/** A group name or member id that cannot be used; thrown before anything is sent to ZooKeeper. */
export class InvalidGroupError extends ZkLockError {
  readonly code = 'INVALID_GROUP';

  constructor(
    /** Which was wrong: the group's name, or the member's id. */
    readonly what: 'group' | 'memberId',
    readonly value: unknown,
    readonly why: string,
  ) {
    super(groupMessages.invalidName(what, value, why));
  }
}

/**
 * A member's entry is gone for good while its client lives: another client joined the
 * group with the same id (it takes the id over, as a restarted Kafka static member does),
 * or deleted the entry. The member is out of the group; it does not join again by itself.
 */
export class MemberReplacedError extends ZkLockError {
  readonly code = 'MEMBER_REPLACED';

  constructor(
    readonly group: string,
    readonly memberId: string,
  ) {
    super(groupMessages.replaced(group, memberId));
  }
}

/** `proclaim()` was called by an instance that does not lead the group now; nothing was written. */
export class NotLeaderError extends ZkLockError {
  readonly code = 'NOT_LEADER';

  constructor(readonly group: string) {
    super(leaderMessages.notLeading(group));
  }
}

/**
 * The list of locks given to `acquireAll` or `withLocks` cannot be used (not an array,
 * empty, too long, or an entry that is neither a name nor `{ name, mode }`); thrown before
 * anything is sent to ZooKeeper. A bad name throws `InvalidLockNameError`, a bad mode
 * `InvalidOptionError`.
 */
export class InvalidLockListError extends ZkLockError {
  readonly code = 'INVALID_LOCK_LIST';

  constructor(
    readonly why: string,
    maxLocks: number,
  ) {
    super(multiLockMessages.invalidList(why, maxLocks));
  }
}

/** A lock name that cannot be used; thrown before anything is sent to ZooKeeper. */
export class InvalidLockNameError extends ZkLockError {
  readonly code = 'INVALID_LOCK_NAME';

  constructor(
    readonly lockName: unknown,
    readonly why: string,
  ) {
    super(lockMessages.invalidName(lockName, why));
  }
}

/** An option with a wrong type or value; thrown before anything is sent to ZooKeeper. */
export class InvalidOptionError extends ZkLockError {
  readonly code = 'INVALID_OPTION';

  constructor(
    readonly option: string,
    readonly value: unknown,
    readonly expected: string,
  ) {
    super(lockMessages.invalidOption(option, value, expected));
  }
}

/**
 * A lease was asked for with a `maxLeases` other than the one its semaphore is held or
 * awaited with. Thrown at once; the call leaves nothing behind. A semaphore nobody holds
 * or awaits takes the new number instead.
 */
export class LeaseLimitMismatchError extends ZkLockError {
  readonly code = 'LEASE_LIMIT_MISMATCH';

  constructor(
    readonly lockName: string,
    /** The `maxLeases` this call passed. */
    readonly requested: number,
    /** The `maxLeases` the semaphore is held or awaited with (stored with it). */
    readonly stored: number,
    where: string,
  ) {
    super(leaseMessages.limitMismatch(lockName, requested, stored, where));
  }
}

/** The caller's `AbortSignal` cancelled a wait for a lock. `cause` is the signal's reason. */
export class LockAbortedError extends ZkLockError {
  readonly code = 'LOCK_ABORTED';

  constructor(
    readonly lockName: string,
    cause?: unknown,
  ) {
    super(lockMessages.aborted(lockName), { cause });
  }
}

/** The lock client was closed; nothing more can be acquired through it. */
export class LockClientClosedError extends ZkLockError {
  readonly code = 'CLIENT_CLOSED';

  constructor(message: string = lockMessages.closed(), options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The lock client was used before it connected. */
export class LockClientNotStartedError extends ZkLockError {
  readonly code = 'CLIENT_NOT_STARTED';

  constructor() {
    super(lockMessages.notStarted());
  }
}

/**
 * A lock call met a lease semaphore someone holds or awaits, or a lease call met such a
 * lock (or Kazoo's semaphore, or a directory this library did not write). Thrown at once;
 * the call leaves nothing behind. A name nobody holds or awaits changes kind instead.
 */
export class LockKindMismatchError extends ZkLockError {
  readonly code = 'LOCK_KIND_MISMATCH';

  constructor(
    readonly lockName: string,
    readonly requested: LockKind,
    readonly found: FoundKind,
    where: string,
    /** The semaphore's number of leases, when `found` is a semaphore. */
    readonly maxLeases?: number,
  ) {
    super(leaseMessages.kindMismatch(lockName, requested, found, where, maxLeases));
  }
}

/** A granted lock can no longer be trusted: its session is gone or may be gone. */
export class LockLostError extends ZkLockError {
  readonly code = 'LOCK_LOST';

  constructor(
    readonly lockName: string,
    readonly why: string,
    cause?: unknown,
  ) {
    super(lockMessages.lost(lockName, why), { cause });
  }
}

/**
 * A multi-lock (`withLocks`, or a locker's `acquireAll`) was asked in a call chain that
 * holds a lock sorting after a name the multi-lock must still take. Waiting for that name
 * while holding the later lock breaks the one order every multi-lock takes names in, and
 * can deadlock with a client that takes both in that order; so it fails at once, before
 * anything is sent, instead.
 */
export class LockOrderError extends ZkLockError {
  readonly code = 'LOCK_ORDER';

  constructor(
    /** The locks the chain holds that sort after a name still to take. */
    readonly heldNames: readonly string[],
    /** The names the multi-lock would have to wait for that sort before a lock held. */
    readonly missingNames: readonly string[],
  ) {
    super(lockMessages.order(heldNames, missingNames));
  }
}

/**
 * A call with `reentrant: false` was made in a call chain that already holds the same
 * lock. It would wait for itself forever, so it fails at once instead.
 */
export class LockReentryError extends ZkLockError {
  readonly code = 'LOCK_REENTRY';

  constructor(readonly lockName: string) {
    super(lockMessages.reentry(lockName));
  }
}

/**
 * The reason of a revocable handle's `revocation` signal: someone asked the holders of
 * this lock to release it. Revocation is cooperative: the lock is still held, and stays
 * held until the holder calls `release()`.
 */
export class LockRevocationRequestedError extends ZkLockError {
  readonly code = 'LOCK_REVOCATION_REQUESTED';

  constructor(readonly lockName: string) {
    super(revocationMessages.requested(lockName));
  }
}

/** The lock was not granted within `timeoutMs` (or at once, for `timeoutMs: 0`). */
export class LockTimeoutError extends ZkLockError {
  readonly code = 'LOCK_TIMEOUT';
  /** When the call gave up (`performance.now()` time): what was connected then tells who kept it out. */
  readonly at = performance.now();

  constructor(
    readonly lockName: string,
    readonly mode: string,
    readonly timeoutMs: number,
    /** A recipe's own wording (a lease's); by default the lock's. */
    message: string = lockMessages.timeout(lockName, mode, timeoutMs),
  ) {
    super(message);
  }
}

/**
 * Where the client stood when a call gave up for want of a connected session:
 * `disconnected` (the session lives, its connection is being re-established) or `lost`
 * (the session was given up; a new one has not connected yet).
 */
export type UnavailableState = 'disconnected' | 'lost';

/**
 * No ZooKeeper session was connected when a call had to answer: at once for a try
 * (`tryAcquire`, `timeoutMs: 0`), or when a call's deadline passed. Nobody was found
 * holding the lock: nothing could be asked. Retry once ZooKeeper is reachable again.
 */
export class LockUnavailableError extends ZkLockError {
  readonly code = 'LOCK_UNAVAILABLE';

  constructor(
    /** What could not be answered, e.g. `lock "orders/42" (write)` or `locks()`. */
    readonly subject: string,
    readonly state: UnavailableState,
    /** How long no session had been connected, in ms. */
    readonly unavailableForMs: number,
    /** When that began (`Date.now()` time): one value per outage, for logging it once. */
    readonly unavailableSince: number,
    /** No session had ever connected: the client's first connect is still under way (`state` is `disconnected`). */
    readonly neverConnected = false,
  ) {
    super(lockMessages.unavailable(subject, state, unavailableForMs, neverConnected));
  }
}

/**
 * A write lock was asked for inside a call chain that holds the same lock for read. It
 * would wait for itself forever, so it fails at once instead.
 */
export class LockUpgradeError extends ZkLockError {
  readonly code = 'LOCK_UPGRADE';

  constructor(readonly lockName: string) {
    super(lockMessages.upgrade(lockName));
  }
}

/** A ZooKeeper request failed; `zkCode` is ZooKeeper's own name for the failure (e.g. `NO_NODE`). */
export class ZkOperationError extends ZkLockError {
  readonly code = 'ZK_OPERATION';

  constructor(
    readonly op: string,
    readonly path: string,
    readonly zkCode: string,
    cause?: unknown,
  ) {
    super(lockMessages.operationFailed(op, path, zkCode), { cause });
  }
}

/**
 * A record (`readRecord`: `runOnce`'s completion, a job's runs and kept hold) whose node holds
 * something other than the JSON object this library writes: another program wrote there.
 */
export class RecordUnreadableError extends ZkLockError {
  readonly code = 'RECORD_UNREADABLE';

  constructor(
    readonly path: string,
    cause?: unknown,
  ) {
    super(lockMessages.recordUnreadable(path, cause instanceof Error ? cause.message : 'not a JSON object'), { cause });
  }
}

/**
 * A server the lock's liveness proof does not hold through (docs/fencing.md): an observer,
 * or one that granted a session timeout under 2 × its tickTime. The client leaves it for
 * another server; `start()` fails with this error when no other server would do in time.
 */
/** Why a server was refused: it is an observer, or its session timeout is too short for its tickTime. */
export type ServerUnfitness =
  | { readonly reason: 'observer' }
  | { readonly reason: 'session-timeout'; readonly tickTimeMs: number; readonly minSessionTimeoutMs?: number };

export class ZkServerRefusedError extends ZkConnectionError {
  /** Why: the server's own words, from `srvr` (observer) or `conf` (tickTime, minSessionTimeout). */
  readonly unfitness: ServerUnfitness;

  constructor(
    readonly server: string,
    unfitness: ServerUnfitness,
    readonly sessionTimeoutMs: number,
    connectionString: string,
  ) {
    super(
      unfitness.reason === 'observer'
        ? lockMessages.observerRefused(server)
        : lockMessages.shortTimeoutRefused(
            server,
            sessionTimeoutMs,
            unfitness.tickTimeMs,
            unfitness.minSessionTimeoutMs,
          ),
      connectionString,
      undefined,
      'unfit-server',
    );
    this.unfitness = unfitness;
  }
}

/** The ZooKeeper session an operation ran on expired, was declared lost, or was closed. */
export class ZkSessionLostError extends ZkLockError {
  readonly code = 'SESSION_LOST';

  constructor(
    readonly sessionId: string,
    readonly why: string,
  ) {
    super(lockMessages.sessionLost(sessionId, why));
  }
}

/**
 * A fenced store refused a write: it has already seen a fencing token higher than this
 * one for `resource`, so a newer holder of the lock wrote after this one was granted.
 * Nothing of the transaction was committed. Acquire the lock again and start over.
 */
export class StaleFencingTokenError extends ZkLockError {
  readonly code = 'STALE_FENCING_TOKEN';

  constructor(
    readonly resource: string,
    readonly token: bigint,
    /** The highest token the store has seen for `resource` (`null` if it could not be read). */
    readonly highestSeen: bigint | null,
  ) {
    super(fenceMessages.stale(resource, token, highestSeen));
  }
}

/**
 * A statement the fence itself sends (`install()`, the check, the BEGIN of a fenced
 * transaction) failed: the pool or client is ended, the server unreachable, the table
 * missing. `cause` is the driver's error; `sqlState` its SQLSTATE when it has one (e.g.
 * `40001`, a serialization failure worth retrying). The fence wrote nothing.
 */
export class FenceStoreError extends ZkLockError {
  readonly code = 'FENCE_STORE';
  /** PostgreSQL's SQLSTATE of the cause, if the server answered with one. */
  readonly sqlState: string | undefined;

  constructor(
    readonly table: string,
    what: string,
    cause: unknown,
  ) {
    super(fenceMessages.storeFailed(what, table, cause), { cause });
    const code = (cause as { code?: unknown } | null)?.code;
    this.sqlState = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  }
}

/**
 * `fence.transactionForCall()` was called where the call chain holds nothing to fence with:
 * outside `@WithLock` / `withLock` and `@WhenLeader` / `runAsLeader` work (or after it
 * settled, in work it started without awaiting), under read locks only, or not under the
 * lock or term named. A programming error, not a lost lock: nothing was sent.
 */
export class NoFenceHoldError extends ZkLockError {
  readonly code = 'NO_FENCE_HOLD';

  constructor(
    /** The lock name or leader group asked for, if one was. */
    readonly requested: string | undefined,
    /** What the chain does hold (lock names and leader groups), read locks included. */
    readonly held: readonly string[],
  ) {
    super(fenceMessages.noHold(requested, held));
  }
}
