/**
 * Every message the library shows a user is written once, here. Each one says what
 * happened, to which lock, and what to do about it.
 */

/** What a call takes: a lock (`acquire`, `tryAcquire`, `contenders`) or a lease (`acquireLease`, `leaseContenders`). */
export type LockKind = 'lock' | 'lease';

/** What the name turned out to be. */
export type FoundKind = LockKind | 'kazoo-semaphore' | 'unknown';
const show = (value: unknown): string => {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  return `a ${Object.prototype.toString.call(value).slice(8, -1)}`;
};

/** `"a"`, `"a" and "b"`, `"a", "b" and "c"`. */
const names = (list: readonly string[]): string => {
  const quoted = list.map((name) => JSON.stringify(name));
  return quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} and ${quoted[quoted.length - 1]}` : quoted.join('');
};

export const lockMessages = {
  invalidName: (name: unknown, why: string): string =>
    `Invalid lock name ${show(name)}: ${why}. Pass a non-empty, well-formed string such as "orders/42".`,
  invalidOption: (option: string, value: unknown, expected: string): string =>
    `Invalid option ${option}=${show(value)}: expected ${expected}.`,
  timeout: (name: string, mode: string, timeoutMs: number): string =>
    timeoutMs === 0
      ? `Lock "${name}" (${mode}) is held by another client and the call asked not to wait (timeoutMs: 0). Retry later, or pass a timeoutMs to wait for it.`
      : `Timed out after ${timeoutMs} ms waiting for lock "${name}" (${mode}). Raise timeoutMs, or list who holds it with contenders("${name}").`,
  /** A job call (`holdAtLeastMs`, or a `maxHoldMs` of its own) met a hold its lock's last run left, ending past its deadline. */
  keptHold: (name: string, mode: string, timeoutMs: number, leftMs: number): string =>
    `Lock "${name}" (${mode}) is still kept by the holdAtLeastMs of its last run for about ${Math.ceil(leftMs)} ms (its job record; no client holds it), longer than this call's timeoutMs (${timeoutMs} ms) lets it wait. Retry later.`,
  lockSubject: (name: string, mode: string): string =>
    mode === 'lease' ? `a lease of "${name}"` : `lock "${name}" (${mode})`,
  /** How long, and why, a client has had no session: `neverConnected`, its first connect is still under way. */
  outage: (state: 'disconnected' | 'lost', forMs: number, neverConnected = false): string =>
    neverConnected
      ? `this client has never connected (trying for ${forMs} ms)`
      : state === 'lost'
        ? `the session was lost and no new one has connected (no connection for ${forMs} ms)`
        : `disconnected for ${forMs} ms, reconnecting`,
  unavailable: (subject: string, state: 'disconnected' | 'lost', forMs: number, neverConnected = false): string =>
    `No ZooKeeper session is connected, so ${subject} could not be answered: ${lockMessages.outage(state, forMs, neverConnected)}. Nobody was found holding anything: nothing could be asked. Retry once ZooKeeper is reachable (the client's status() tells), or check the servers and the network.`,
  aborted: (name: string): string =>
    `Waiting for lock "${name}" was cancelled by its AbortSignal; no lock node was left behind.`,
  /** Why a ZooKeeper lock or lease was lost when its session stopped being trusted. */
  sessionDistrusted: 'its ZooKeeper session cannot be trusted any more',
  lost: (name: string, why: string): string =>
    `Lock "${name}" was lost: ${why}. Stop touching the protected resource; the fencing token of this grant is no longer valid.`,
  closingUnderHolder:
    'the lock client is closing while this holder had not released it (raise shutdownGraceMs to let running work finish first)',
  releasedHandle: 'this handle was released',
  /** A record write made only while holding (`whileHolding`) found the holder's node gone, unknown to its handle. */
  nodeGoneAtWrite:
    'its node was gone when a record was to be written under it (deleted by hand or by release --force, or with its session), so the record was not written',
  notOwnHandle: 'a lock handle this backend granted (its acquire or tryAcquire), still to be held while writing',
  /** Why a lock or lease held past its `maxHoldMs` was lost (and released for the next holder). */
  maxHold: (maxHoldMs: number, holder: string): string =>
    `${holder} held it longer than maxHoldMs (${maxHoldMs} ms), so it was released for another holder to take; stop the work, or raise maxHoldMs if it needs longer`,
  upgrade: (name: string): string =>
    `Lock "${name}" is held for read in this call chain; taking it for write inside would wait for itself forever. Take it for write from the start, or take the write lock outside the read lock.`,
  reentry: (name: string): string =>
    `Lock "${name}" is already held by this call chain, and the call asked for a lock of its own (reentrant: false); it would wait for itself forever. Drop reentrant: false to join the lock held, or take it outside the section that holds it.`,
  order: (held: readonly string[], missing: readonly string[]): string =>
    `This call chain holds ${names(held)} and asked a multi-lock that must still take ${names(missing)}, which ${missing.length > 1 ? 'sort' : 'sorts'} before ${held.length > 1 ? 'them' : 'it'} in the one order every multi-lock takes names in (by encoded name). Waiting for ${missing.length > 1 ? 'them' : 'it'} while holding a later lock could deadlock with a client that takes the same names in that order, so nothing was taken. Take the held and the missing names together in one withLocks (or acquireAll) from the start, or release ${names(held)} before taking the others.`,
  connectFailed: (connectionString: string, timeoutMs: number): string =>
    `Could not connect to ZooKeeper at "${connectionString}" within ${timeoutMs} ms. Check that a server is running at that address, or raise connectTimeoutMs.`,
  connectRefused: (connectionString: string, ms: number): string =>
    `Could not connect to ZooKeeper at "${connectionString}": every server refused the connection for ${ms} ms (nothing listens at that address). Start ZooKeeper there or fix the connection string; unit tests can use ZkLockModule.forTesting(), which needs no server.`,
  missingChroot: (connectionString: string, chroot: string): string =>
    `The chroot "${chroot}" of "${connectionString}" does not exist on the ZooKeeper server. Create it once with a client that has no chroot (e.g. zkCli.sh: create ${chroot} ""), or remove it from the connection string.`,
  observerRefused: (server: string): string =>
    `ZooKeeper server ${server} is an observer: a session's touches may reach the leader through it a ping later than the lock's liveness proof allows (an observer master relays them once more), so this client does not hold locks through it and moves to another server. Name the ensemble's voting members (leader and followers) in the connection string.`,
  shortTimeoutRefused: (server: string, timeoutMs: number, tickTimeMs: number, minSessionTimeoutMs?: number): string =>
    `ZooKeeper server ${server} granted a session timeout of ${timeoutMs} ms, less than 2 × its tickTime (${tickTimeMs} ms${minSessionTimeoutMs === undefined ? '' : `; its minSessionTimeout is ${minSessionTimeoutMs} ms`}): the lock's liveness proof needs tickTime / 2 ≤ timeout / 4, so this client does not hold locks through it. Ask for sessionTimeoutMs of at least ${2 * tickTimeMs}, and keep the server's minSessionTimeout at 2 × tickTime or more (its default).`,
  badConnectionString: (connectionString: unknown, why: string): string =>
    `Invalid ZooKeeper connection string ${show(connectionString)}: ${why}. Use "host:port[,host:port…][/chroot]", e.g. "127.0.0.1:2181".`,
  sessionLost: (sessionId: string, why: string): string =>
    `ZooKeeper session 0x${sessionId} is gone (${why}); its ephemeral lock nodes are released by the server.`,
  notStarted: (): string =>
    'The lock client has not connected yet. Await its start() first (in Nest, ZkLockModule connects while the application initialises: use LockService from onModuleInit or later, not from a constructor).',
  shuttingDown: (name: string): string =>
    `Lock "${name}" was not acquired: this lock client is shutting down (in Nest: the application is stopping), so it cancelled the wait. Another instance can take the lock; retry the call there.`,
  refusedClosing: (name: string): string =>
    `Lock "${name}" was not acquired: this lock client is shutting down (in Nest: the application is stopping) and takes no new locks. Another instance can take the lock; retry the call there.`,
  closed: (): string =>
    'The lock client is closed. Create a new one (or, in Nest, do not use LockService after application shutdown).',
  operationFailed: (op: string, path: string, code: string): string =>
    `ZooKeeper ${op} on "${path}" failed with ${code}.`,
  recordUnreadable: (path: string, why: string): string =>
    `The record at "${path}" is not the JSON this library writes (${why}). Something else wrote it: ` +
    'delete that node (zkCli.sh: delete <path>) if nothing of yours needs it; the next run writes a new one.',
} as const;

/**
 * The lease recipe's messages, written once here in the style of
 * `../errors/lock.messages.ts`: what happened, to which semaphore, and what to do.
 */

const ONE_KIND =
  'A name is a lock or a lease semaphore, never both at once; it may change once nobody holds or awaits it';

export const leaseMessages = {
  optionsObject: 'an object with the number of leases, such as { maxLeases: 3, timeoutMs: 5000 }',
  maxLeases: (limit: number): string =>
    `a whole number of leases from 1 to ${limit}, the same in every client of this semaphore`,
  timeout: (name: string, maxLeases: number, timeoutMs: number): string =>
    timeoutMs === 0
      ? `All ${maxLeases} leases of "${name}" are held and the call asked not to wait (timeoutMs: 0). Retry later, or pass a timeoutMs to wait for one.`
      : `Timed out after ${timeoutMs} ms waiting for one of the ${maxLeases} leases of "${name}". Raise timeoutMs, or list holders and waiters with leaseContenders("${name}").`,
  limitMismatch: (name: string, requested: number, stored: number, where: string): string =>
    `Lease "${name}" was asked for with maxLeases ${requested} while it is held or awaited with maxLeases ${stored} (stored in ${where}); every client must use the same number. Pass maxLeases: ${stored}, or change the number in every client: an idle semaphore (nobody holds or awaits it) takes the new one with its next acquire.`,
  kindMismatch: (name: string, requested: LockKind, found: FoundKind, where: string, maxLeases?: number): string => {
    const what = requested === 'lease' ? `Lease "${name}"` : `Lock "${name}"`;
    switch (found) {
      case 'lease':
        return `${what} cannot be taken while it is held or awaited as a lease semaphore of ${maxLeases} leases (seen in ${where}). ${ONE_KIND}: take it with acquireLease("${name}", { maxLeases: ${maxLeases} }), or use another name for the lock.`;
      case 'lock':
        return `${what} cannot be taken while it is held or awaited as a lock (seen in ${where}, which holds no lease count). ${ONE_KIND}: use another name for the semaphore (e.g. "${name}:leases"), or take it with acquire().`;
      case 'kazoo-semaphore':
        return `${what} cannot be taken: ${where} is laid out as a Kazoo Semaphore (a bare lease count as its data, or unsequenced lease nodes). This library's leases cannot share a semaphore with Kazoo's: use another name, or Kazoo's Semaphore in every client.`;
      default:
        return `${what} cannot be taken: ${where} holds data this library did not write, so it is not one of its lease semaphores. Use another name, or remove that node if nothing uses it.`;
    }
  },
  inZooKeeper: (dir: string): string => `ZooKeeper directory ${dir}`,
  inMemory: 'the in-memory store',
} as const;

export const multiLockMessages = {
  invalidList: (why: string, limit: number): string =>
    `Invalid list of locks: ${why}. Pass 1 to ${limit} locks, each a name or { name, mode }, e.g. ["orders/42", { name: "stock", mode: "read" }].`,
  notAnArray: (value: unknown): string => `expected an array, got ${show(value)}`,
  empty: 'it is empty, so there is nothing to lock',
  tooMany: (count: number, limit: number): string =>
    `it has ${count} entries, over the limit of ${limit} per call; lock a coarser name, or split the work`,
  badEntry: (index: number, value: unknown): string =>
    `entry ${index} is ${show(value)}, neither a lock name nor an object { name, mode }`,
  unknownEntryKey: (index: number, key: string): string =>
    `entry ${index} has the key ${JSON.stringify(key)}; an entry takes only "name" and "mode" (check the spelling)`,
  optionsObject: 'an object such as { timeoutMs: 5000, signal } (or nothing)',
  modeOnGroup:
    'no "mode" here: give each lock its mode in the list instead, e.g. [{ name: "stock", mode: "read" }, "orders/42"]',
  maxHoldUnsupported:
    'no maxHoldMs for acquireAll over this backend, whose lock handles cannot start their maxHoldMs once the whole group is held (those of ZkLockBackend and InMemoryLockBackend can); the group was released',
} as const;

/**
 * The messages of revocation, written once here in the style of `../errors/lock.messages.ts`:
 * what happened, to which lock, and what to do.
 */
export const revocationMessages = {
  requested: (name: string): string =>
    `Lock "${name}" is wanted elsewhere: another client asked its holders to give it up (requestRevocation("${name}"), or Curator's Revoker wrote __REVOKE__ into this holder's node). The lock is still held: finish or stop the work at a safe point, then release() it.`,
} as const;

export const leaderMessages = {
  invalidGroup: (group: unknown, why: string): string =>
    `Invalid leader group ${show(group)}: ${why}. Pass a non-empty, well-formed string such as "nightly-report".`,
  steppedDown: (group: string): string =>
    `this instance stepped down from leading group "${group}" (its election was stopped, e.g. at application shutdown)`,
  notLeading: (group: string): string =>
    `This instance does not lead group "${group}" now, so it cannot proclaim: call proclaim() from leader-only work (runAsLeader, @WhenLeader), or check isLeader first.`,
  observerThrew: (group: string, error: unknown): string =>
    `A leader observer of group "${group}" threw (${error instanceof Error ? error.message : String(error)}); observing goes on. Catch errors inside the listener.`,
  listenerThrew: (group: string, error: unknown): string =>
    `A leadership listener of group "${group}" threw (${error instanceof Error ? error.message : String(error)}); the election goes on. Catch errors inside the listener.`,
} as const;

/** Group membership's messages (`GroupMembership`, `LockBackend.joinGroup`): what happened, to which member, what to do. */
export const groupMessages = {
  invalidName: (what: 'group' | 'memberId', value: unknown, why: string): string =>
    `Invalid ${what === 'group' ? 'group name' : 'member id'} ${show(value)}: ${why}. Pass a non-empty, well-formed string such as "${what === 'group' ? 'workers' : 'worker-1'}".`,
  replaced: (group: string, id: string): string =>
    `The entry of member "${id}" in group "${group}" was replaced: another client joined with the same id (or deleted the entry). This instance is no longer a member; give each live instance its own id, or let the newer instance take over.`,
  left: (group: string, id: string): string => `member "${id}" left group "${group}"`,
  notJoined: (group: string): string =>
    `GroupMembership of group "${group}" was asked for its entry before join(): call join() first (or watch() to only read the members).`,
  listenerThrew: (group: string, error: unknown): string =>
    `A membership listener of group "${group}" threw (${error instanceof Error ? error.message : String(error)}); the membership goes on. Catch errors inside the listener.`,
} as const;

/** The partitioner's messages (`Partitioner`): what happened, to which group and part, what to do. */
export const partitionMessages = {
  optionsObject: 'an object with the parts, such as { partitions: 64 } or { partitions: ["eu", "us"] }',
  partitions: (max: number): string =>
    `a whole number of parts from 1 to ${max} (parts 0…n-1), or a list of 1 to ${max} distinct part keys such as ["eu", "us"]`,
  duplicateKey: (key: string): string =>
    `a list of distinct part keys: ${JSON.stringify(key)} is listed twice; list each part once`,
  invalidKey: (key: unknown, why: string): string =>
    `a list of part keys, each a non-empty, well-formed string: ${show(key)} is not (${why})`,
  noIdentity:
    "a backend with an identity (LockBackend.identity, as ZkLockBackend's and InMemoryLockBackend's have): members find each part's owner by the identity its lock node carries",
  alreadyStarted: (group: string): string =>
    `a backend that is not already a member of group "${group}" through another Partitioner: one backend is one member of a group (stop() the other one, or give this one a backend of its own)`,
  revoked: (group: string, part: string): string =>
    `part ${JSON.stringify(part)} of group "${group}" was given up: the assignment moved it to another member (or the partitioner stopped), and its lock is released`,
  graceOver: (group: string, graceMs: number): string =>
    `the drain of revoked parts of group "${group}" ran past revokeGraceMs (${graceMs} ms): their locks are released now. Stop the work at once, or raise revokeGraceMs.`,
  listenerThrew: (group: string, error: unknown): string =>
    `A partition listener of group "${group}" threw (${error instanceof Error ? error.message : String(error)}); the partitioner goes on. Catch errors inside the listener.`,
  onRevokedThrew: (group: string, error: unknown): string =>
    `onRevoked of group "${group}" threw (${error instanceof Error ? error.message : String(error)}); the revoked parts are released anyway. Catch errors inside onRevoked.`,
  recordNotWritten: (group: string, part: string, error: unknown): string =>
    `The record of part ${JSON.stringify(part)} of group "${group}" could not be written (${error instanceof Error ? error.message : String(error)}); this member owns the part all the same, but \`partitions ${group}\` shows no fencing token for it. Let this client write under the records' root (its ACL).`,
  joinedTwice: (group: string): string =>
    `a group this application has not joined yet: it is a member of group "${group}" already (PartitionService.join once per group; get that one with partitioner("${group}"))`,
  unknownPart: (group: string, part: unknown): string =>
    `one of the parts of group "${group}" (it has no part ${show(part)}): pass a number from 0 to partitions - 1, or one of the keys listed`,
} as const;

/**
 * The in-memory backend's own messages, written once here in the style of
 * `../errors/lock.messages.ts`: what happened, to which lock, and what to do.
 */
export const inMemoryLockMessages = {
  optionsObject: 'an object such as { identity: "worker-1", store } (or nothing)',
  identity: 'a non-empty string of at most 4096 bytes',
  store: "an InMemoryLockStore (new InMemoryLockStore()), shared by the backends that should see each other's locks",
  lostByTest: (name: string): string =>
    `the test took it away with InMemoryLockBackend.loseLock(${JSON.stringify(name)}), as a crash or a lost session would`,
  sessionExpiredByTest:
    'its session was expired by the test with InMemoryLockBackend.expireSession(), as ZooKeeper expires a session it stopped hearing from',
  expiredByTest: 'expired by the test',
} as const;

/**
 * The fence's messages (`nestjs-zk-lock/postgres`): what a store refused or could not do,
 * for which resource, and what to do.
 */
export const fenceMessages = {
  stale: (resource: string, token: bigint, highestSeen: bigint | null): string =>
    `The write to "${resource}" with fencing token ${token} was refused: the store has seen token ${highestSeen ?? 'unknown'}, so a newer holder of the lock has written since this one was granted (this holder paused, or lost its lock). Nothing of this transaction was committed. Do not retry with this token: acquire the lock again and start over from a fresh read.`,
  storeFailed: (what: string, table: string, cause: unknown): string =>
    `The fence could not ${what} in table ${table}: ${cause instanceof Error ? cause.message : String(cause)}. Nothing was written by the fence. Check that the pool or client is connected and not ended, and that the table exists (fence.install(), or PgFence.schema() in your migrations).`,
  pool: 'a pg.Pool, or anything with connect() and query(text, values)',
  executor: 'a pg Client, PoolClient or Pool: anything with query(text, values) returning { rows }',
  table:
    'a plain SQL identifier, optionally schema-qualified (letters, digits, _ and $, not starting with a digit, at most 63 characters each), such as "zk_lock_fence" or "locks.fence"',
  column: 'a plain SQL identifier (letters, digits, _ and $, not starting with a digit, at most 63 characters)',
  resource: 'a non-empty string naming what the token guards, such as "orders/42"',
  token: 'a bigint from 0 to 2^63 - 1 (a fencing token: handle.fencingToken)',
  key: 'an object of one or more columns and their values identifying the row, such as { id: 42 }',
  result: "the result of the UPDATE (pg's { rowCount }, or { affectedRows })",
  holder:
    'a held exclusive hold: a write lock handle, a multi-lock handle, a lease of 1, or a leader term (LeaderElection.term, LeadershipService.term(group))',
  noHold: (requested: string | undefined, held: readonly string[]): string =>
    `${requested === undefined ? 'This call holds no write lock and runs no leader work' : `This call holds no lock and runs under no leader term named "${requested}"`}` +
    `${held.length > 0 ? ` (it holds ${held.map((name) => `"${name}"`).join(', ')})` : ''}, so there is no token to fence a transaction with. ` +
    'Call fence.transactionForCall() inside @WithLock / withLock or @WhenLeader / runAsLeader work (awaited: work started without await outlives the hold), or pass the handle to fence.transaction(lock, fn)',
  shared: (what: string): string =>
    `an exclusive hold (a write lock, a lease of 1, a leader term), not ${what}: its holders run at once and may share a token, so the highest token stored would refuse one of two legitimate holders. Fence the write with a write lock instead`,
  resourceOfGroup:
    'no resource option with a multi-lock: each lock fences the resource named after it. Fence other resources with check() inside the transaction',
  typeorm:
    'the EntityManager that dataSource.transaction(async (manager) => …) hands you, or a QueryRunner after startTransaction(), while its transaction is active: a check outside a transaction (dataSource.manager) locks nothing and commits at once',
  knex: 'the trx of knex.transaction(async (trx) => …), before it commits or rolls back: a check on the knex instance runs outside any transaction, locks nothing and commits at once',
  kysely:
    'the trx of db.transaction().execute(async (trx) => …) (or of db.startTransaction().execute()), before it commits or rolls back: a check on the Kysely instance runs outside any transaction, locks nothing and commits at once',
  knexBackslash:
    'SQL without a backslash right before a "?": Knex reads "\\?" as an escaped "?" and cannot send it unchanged',
  knexParameter: (placeholder: string): string => `a value for each placeholder: ${placeholder} has none`,
} as const;
