import type {
  MultiAcquireOptions,
  LockList,
  MultiLockHandle,
  ListedLock,
  AcquireLeaseOptions,
  LeaseContender,
  AcquireOptions,
  LockBackend,
  LockContender,
  ReadOptions,
  RecordData,
  StoredRecord,
  WriteRecordOptions,
} from '../port/lock-backend.js';
import type { GroupEntry, GroupMember, MemberData, Unwatch, WatchTarget } from '../port/group.js';
import { resolveMemberData, resolveWatchTarget } from '../port/group.js';
import { encodeGroupName } from '../naming/group-name.js';
import { groupsRoot, readGroupMembers, watchNode, ZkGroupEntry } from './group.js';
import { InvalidOptionError, LockClientClosedError, LockLostError, LockTimeoutError } from '../errors/errors.js';
import { lockMessages } from '../errors/messages.js';
import { acquireAll as acquireAllThrough } from '../multi/acquire-all.js';
import {
  describeList,
  describeModes,
  resolveAcquireOptions,
  resolveListingPrefix,
  resolveReadTimeout,
  resolveWriteRecord,
  type ResolvedAcquireOptions,
} from '../port/options.js';
import { ZkLockGroupRequests } from './multi.js';
import { encodeLockName } from '../naming/lock-name-codec.js';
import { readLockListings, deleteHolders, readContenders, readJobRecords } from './listing.js';
import { withLastRuns } from '../port/job-record.js';
import { requestRevocation } from './revocation.js';
import { readRecordAt, recordsRoot, serverTimeAt, writeRecordAt } from './records.js';
import { ZkClient } from './session/zk-client.js';
import type { ZkSession } from './session/zk-session.js';
import { blameOutage, onConnectedSession, withinOutage } from './session/client-outage.js';
import { ZkLeaseRecipe, type ZkLeaseHandle } from './lease.js';
import type { SentCreate } from './queue/acquisition.js';
import { NodeHandle } from './queue/node-handle.js';
import { ZkLockRecipe, type ZkLockHandle } from './lock.js';
import { DirectorySweeper } from './queue/directory-sweeper.js';
import { NodeReaper } from './queue/node-reaper.js';
import { KeptHoldMarkers } from './queue/kept-hold-markers.js';
import { resolveZkLockOptions, type ResolvedZkLockOptions, type ZkLockOptions } from './zk-lock-options.js';
import { sessionStatus, type ZkSessionStatus } from './session/session-status.js';
import { tracedAcquire } from '../diagnostics/diagnostics.js';
import { abortable } from '../util/abortable.js';
import { deadline } from '../util/deadline.js';

/**
 * Read/write locks on ZooKeeper, usable without Nest:
 *
 * ```ts
 * const locks = await ZkLockBackend.connect({ connectionString: '127.0.0.1:2181' });
 * const lock = await locks.acquire('orders/42', { timeoutMs: 5_000 });
 * try { await work(lock.fencingToken, lock.signal); } finally { await lock.release(); }
 * await locks.close();
 * ```
 */
export class ZkLockBackend implements LockBackend {
  private readonly reaper: NodeReaper;
  /** The kept holds' markers this client put, until their holds end (see core/port/kept-hold). */
  private readonly markers: KeptHoldMarkers;
  private readonly sweeper: DirectorySweeper;
  private readonly waits = new Map<{ cancel(reason: unknown): void }, Promise<unknown>>();
  private readonly held = new Set<NodeHandle>();
  private readonly leases: ZkLeaseRecipe;
  /** `options.identity`, as lock nodes carry it. */
  private readonly identityData: Buffer;
  /** Runs every acquire of a lock (not of a lease) of this backend. */
  private readonly lockRecipe: ZkLockRecipe;
  /** Made on first `acquireAll`. */
  private groupRequests: ZkLockGroupRequests | undefined;
  /** This client's entries in groups, until each ends: `close()` leaves them. */
  private readonly entries = new Set<ZkGroupEntry>();

  private constructor(
    readonly client: ZkClient,
    readonly options: ResolvedZkLockOptions,
  ) {
    this.identityData = Buffer.from(options.identity, 'utf8');
    const currentSession = (): ZkSession | undefined =>
      client.isStarted && !client.isClosed ? client.session : undefined;
    this.sweeper = new DirectorySweeper(
      options.removeEmptyDirectories && options.emptyDirectoryGraceMs,
      currentSession,
    );
    this.reaper = new NodeReaper(this.sweeper, currentSession);
    const records = recordsRoot(options.rootPath);
    this.markers = new KeptHoldMarkers(this.reaper, this.identityData, (session) => serverTimeAt(session, records));
    const { reaper, sweeper, identityData: identity, waits, held } = this;
    // What the lock and lease acquisitions share: the session, the cleanup, who we are, and the shutdown's lists.
    const shared = {
      client,
      reaper,
      sweeper,
      identity,
      waits,
      held,
      startedOnce: () => this.startedOnce(),
      release: options.release,
    };
    this.lockRecipe = new ZkLockRecipe({ ...shared, nodeFormat: options.nodeFormat, markers: this.markers });
    this.leases = new ZkLeaseRecipe({ ...shared, pathOf: (name) => this.pathOf(name) });
  }

  /** Validates the options, connects, and fails with `ZkConnectionError` if no server answers. */
  static async connect(options: ZkLockOptions): Promise<ZkLockBackend> {
    return ZkLockBackend.open(resolveZkLockOptions(options));
  }

  /** `connect` for options already checked and completed by `resolveZkLockOptions`. */
  static async open(options: ResolvedZkLockOptions): Promise<ZkLockBackend> {
    const backend = ZkLockBackend.unconnected(options);
    await backend.start();
    return backend;
  }

  /**
   * A backend that opens no connection until `start()` or its first call (which then
   * waits for the connection): for frameworks that create objects first and start them
   * once everything is wired (Nest's bootstrap).
   */
  static unconnected(options: ResolvedZkLockOptions): ZkLockBackend {
    return new ZkLockBackend(new ZkClient(options), options);
  }

  /** Who this client is (the `identity` option): written into its lock nodes and its jobs' runs. */
  get identity(): string {
    return this.options.identity;
  }

  /** Connects (once); fails with `ZkConnectionError` naming the connection string. */
  start(): Promise<void> {
    return this.client.start();
  }

  /** The lock's directory in ZooKeeper; throws `InvalidLockNameError` for a bad name. */
  pathOf(name: string): string {
    return `${this.options.rootPath}/${encodeLockName(name)}`;
  }

  async acquire(name: string, options?: AcquireOptions): Promise<ZkLockHandle> {
    const resolved = resolveAcquireOptions(options, Infinity);
    return tracedAcquire(
      () => ({ kind: 'lock', name, mode: resolved.mode }),
      async () => {
        const handle = await this.blamingOutage(this.run(name, resolved));
        if (!handle) throw new LockTimeoutError(name, resolved.mode, 0);
        return handle;
      },
    );
  }

  async tryAcquire(name: string, options?: Omit<AcquireOptions, 'timeoutMs'>): Promise<ZkLockHandle | null> {
    const resolved = { ...resolveAcquireOptions(options, 0), timeoutMs: 0 };
    return tracedAcquire(
      () => ({ kind: 'lock', name, mode: resolved.mode }),
      () => this.run(name, resolved),
    );
  }

  /**
   * Every lock of `locks` at once, all or nothing, without deadlock whatever order callers
   * list them in. When they are free, the requests for all of them travel together: about
   * the round trips of one lock, and the creates (and later the deletes) are one
   * transaction. See `acquireAll` and `ZkLockGroupRequests` in core/multi.
   */
  acquireAll(locks: LockList, options?: MultiAcquireOptions): Promise<MultiLockHandle> {
    const { client, reaper, sweeper, identityData: identity } = this;
    this.groupRequests ??= new ZkLockGroupRequests({
      client,
      reaper,
      sweeper,
      identity,
      pathOf: (name) => this.pathOf(name),
      started: () => this.startedOnce(),
      nodeFormat: this.options.nodeFormat,
      // The plan checked the names and modes, and the signal is the call's own: nothing to validate.
      tryAcquire: (name, options, sent) => this.run(name, options, sent),
    });
    const together = this.groupRequests;
    return tracedAcquire(
      () => ({ kind: 'group', name: describeList(locks), mode: describeModes(locks) }),
      () => this.blamingOutage(acquireAllThrough(this, locks, options, together)),
    );
  }

  /**
   * Holders and waiters of `name`, in queue order. Rejects with `LockUnavailableError` when
   * no session is connected within `timeoutMs` (default 10 s).
   */
  async contenders(name: string, options?: ReadOptions): Promise<LockContender[]> {
    const dir = this.pathOf(name);
    return this.whenConnected('contenders', `contenders("${name}")`, options, (session) =>
      readContenders(session, dir, name),
    );
  }

  /**
   * Asks every current holder of `name` to release it (Curator's `Revoker.attemptRevoke`:
   * `__REVOKE__` written into each holder's node); resolves with how many were asked.
   * Holders that acquired with `revocable: true` see their `revocation` signal abort; the
   * others are not told (their node's data, the identity `contenders()` shows, changes).
   * Rejects with `LockUnavailableError` when no session is connected within `timeoutMs`
   * (default 10 s).
   */
  async requestRevocation(name: string, options?: ReadOptions): Promise<number> {
    const dir = this.pathOf(name);
    return this.whenConnected('requestRevocation', `requestRevocation("${name}")`, options, (session) =>
      requestRevocation(session, dir, name),
    );
  }

  /**
   * An operator's last resort (the CLI's `release --force`): deletes the nodes of `name`'s
   * current holders, so the next waiter gets the lock at once. **The holders are not told**:
   * one still alive keeps running beside the next holder. Ask with `requestRevocation`
   * first. Resolves with the deleted nodes' names; a node gone meanwhile is skipped. With
   * ACLs on, it needs the credentials that created the nodes (`ZkOperationError` NO_AUTH).
   */
  async forceRelease(name: string): Promise<string[]> {
    const dir = this.pathOf(name);
    await this.startedOnce();
    return deleteHolders(this.client.liveSession(), dir, name);
  }

  /**
   * Every lock under the root path whose name starts with `prefix`, with holders and
   * waiters, in name order: three round trips however many locks (see `readLockListings`);
   * and every job's last run from its record (`readJobRecords`, beside them: one more
   * request, and one more when there are job records).
   * Rejects with `LockUnavailableError` when no session is connected within `timeoutMs`
   * (default 10 s).
   */
  async locks(prefix?: string, options?: ReadOptions): Promise<ListedLock[]> {
    const start = resolveListingPrefix(prefix);
    const { rootPath } = this.options;
    return this.whenConnected('locks', 'locks()', options, async (session) => {
      const [listings, jobs] = await Promise.all([
        readLockListings(session, rootPath, start),
        readJobRecords(session, recordsRoot(rootPath), start),
      ]);
      return withLastRuns(listings, jobs);
    });
  }

  /**
   * One of `maxLeases` leases on `name` (a counting semaphore, Curator's
   * InterProcessSemaphoreV2 and Kazoo's Semaphore): FIFO, at most `maxLeases` holders at
   * once across all clients, each lease gone with its holder's session. Rejects with
   * `LockTimeoutError`, `LockAbortedError`, `LeaseLimitMismatchError` (another count is
   * stored with the semaphore) or `LockKindMismatchError` (the name is a lock). Not
   * reentrant: each call takes one more lease. See docs/recipes.md, "Leases".
   */
  acquireLease(name: string, options: AcquireLeaseOptions): Promise<ZkLeaseHandle> {
    return tracedAcquire(
      () => ({ kind: 'lease', name, mode: 'lease' }),
      () => this.blamingOutage(this.leases.acquire(name, options)),
    );
  }

  /** Holders and waiters of the lease semaphore `name`, in queue order; `LockUnavailableError` as `contenders`. */
  async leaseContenders(name: string, options?: ReadOptions): Promise<LeaseContender[]> {
    const dir = this.pathOf(name);
    return this.whenConnected('leaseContenders', `leaseContenders("${name}")`, options, (session) =>
      this.leases.contenders(session, dir, name),
    );
  }

  /**
   * The record kept under `name` (a persistent node under `<rootPath>-records/`), or `null`.
   * `LockUnavailableError` as `contenders`.
   */
  async readRecord(name: string, options?: ReadOptions): Promise<StoredRecord | null> {
    const path = this.recordPathOf(name);
    return this.whenConnected('readRecord', `readRecord("${name}")`, options, (session) => readRecordAt(session, path));
  }

  /** Writes the record under `name`, with a version check when asked (see `LockBackend.writeRecord`). */
  async writeRecord(name: string, data: RecordData, options?: WriteRecordOptions): Promise<boolean> {
    const path = this.recordPathOf(name);
    const write = resolveWriteRecord(data, options);
    const { whileHolding: handle } = write;
    if (handle !== undefined && !(handle instanceof NodeHandle))
      throw new InvalidOptionError('whileHolding', handle, lockMessages.notOwnHandle);
    const held = handle && { name: handle.name, path: handle.path };
    return this.whenConnected('writeRecord', `writeRecord("${name}")`, { timeoutMs: write.timeoutMs }, (session) => {
      handle?.assertHeld(); // known lost or released: nothing to ask ZooKeeper
      return writeRecordAt(session, path, write, held);
    });
  }

  /** ZooKeeper's time, from an empty write to `<rootPath>-records` (see `LockBackend.serverTime`). */
  async serverTime(options?: ReadOptions): Promise<number> {
    const root = recordsRoot(this.options.rootPath);
    return this.whenConnected('serverTime', 'serverTime()', options, (session) => serverTimeAt(session, root));
  }

  /**
   * Joins `group` as `id` (see `LockBackend.joinGroup`): an ephemeral node
   * `<rootPath>-groups/<group>/<id>` with `data` as JSON, taking the id over from another
   * client in one transaction; made again on the next session after a lost one.
   */
  async joinGroup(group: string, id: string, data: MemberData, options?: ReadOptions): Promise<GroupEntry> {
    const path = this.memberPathOf(group, id);
    const json = resolveMemberData(data);
    const timeoutMs = resolveReadTimeout(options, 'joinGroup');
    await this.startedOnce();
    const entry = await ZkGroupEntry.join(
      {
        client: this.client,
        group,
        id,
        path,
        data: Buffer.from(json, 'utf8'),
        onEnd: (ended) => this.entries.delete(ended),
      },
      timeoutMs,
    );
    this.entries.add(entry);
    return entry;
  }

  /** The members of `group` in id order: one children read and one `multiRead` (see `LockBackend.groupMembers`). */
  async groupMembers(group: string, options?: ReadOptions): Promise<GroupMember[]> {
    const dir = this.groupPathOf(group);
    return this.whenConnected('groupMembers', `groupMembers("${group}")`, options, (session) =>
      readGroupMembers(session, dir),
    );
  }

  /**
   * One ZooKeeper watch (see `LockBackend.watch`): on a lock's directory or a group's
   * directory (its children), or a record's node (its data); a creation watch where the
   * node does not exist yet. A read, never a write.
   */
  async watch(target: WatchTarget, onChange: () => void, options?: ReadOptions): Promise<Unwatch> {
    const { kind, name } = resolveWatchTarget(target);
    const path =
      kind === 'lock'
        ? this.pathOf(name as string)
        : kind === 'record'
          ? this.recordPathOf(name as string)
          : this.groupPathOf(name as string);
    return this.whenConnected('watch', `watch(${kind} "${String(name)}")`, options, (session) =>
      watchNode(session, path, kind === 'record' ? 'data' : 'children', onChange),
    );
  }

  /** Where the ZooKeeper session stands now: for health checks (`ZkLockHealthIndicator`) and dashboards. */
  status(): ZkSessionStatus {
    return sessionStatus(this.client);
  }

  /**
   * Settles once every release sent so far (of a lock, a lease or a group) is confirmed:
   * ZooKeeper answered its delete, or the server ended the session. A delete that met a
   * lost connection is sent again on reconnect (through the session given back, when the
   * client presumed it lost), so while the client is cut off this waits for it to come
   * back, for at most `timeoutMs` (default 10 s) with no session connected: then it rejects
   * with `LockUnavailableError`. See `LockBackend.releasesConfirmed`.
   */
  async releasesConfirmed(options?: ReadOptions): Promise<void> {
    const timeoutMs = resolveReadTimeout(options, 'releasesConfirmed');
    // A handle stays in `held` until its release is confirmed (see acquireNode): the ones
    // released are exactly the deletes not answered yet.
    const unconfirmed = [...this.held].filter((handle) => handle.released).map((h) => h.releaseConfirmed);
    if (unconfirmed.length === 0) return;
    await withinOutage(this.client, timeoutMs, 'releasesConfirmed()', Promise.allSettled(unconfirmed));
  }

  /** Fails every wait under way with `LockClientClosedError`; held locks stay held. */
  async cancelWaits(): Promise<void> {
    const closing = new LockClientClosedError();
    for (const wait of this.waits.keys()) wait.cancel(closing);
    await Promise.allSettled(this.waits.values());
  }

  /**
   * Cancels waits, releases held locks (other clients get them at once, not after the
   * session timeout), and closes the session. Safe to call more than once, and on a
   * backend that never started.
   */
  async close(): Promise<void> {
    if (this.client.isClosed) return;
    if (!this.client.isStarted) return this.client.close();
    await this.cancelWaits();
    await this.client.session.whileConnected(Promise.allSettled([...this.entries].map((entry) => entry.leave())));
    // Kept holds still running outlive the session (its ephemeral markers go with it).
    await this.client.session.whileConnected(this.markers.persist(this.client.session));
    // Released before close() and answered already (`release: "sent"`): each delete is
    // waited for until ZooKeeper confirms it, through a reconnect and its retry, for at most
    // the session timeout (past it without contact the server has expired the session,
    // which deleted the node). Closing while disconnected would otherwise leave the node,
    // which the caller was told is released, for the session's timeout.
    const releasedEarly = [...this.held].filter((handle) => handle.released);
    // Never silently under a holder: its signal aborts first. Released one by one while
    // connected, so directories are cleaned up too; past a disconnect, closing the session
    // is what frees them.
    for (const handle of this.held)
      handle.revoke(new LockLostError(handle.name, lockMessages.closingUnderHolder), 'closing');
    const releases = Promise.allSettled([...this.held].map((handle) => (handle.release(), handle.releaseConfirmed)));
    await this.client.session.whileConnected(releases.then(() => this.sweeper.flush()));
    if (releasedEarly.length > 0) await this.confirmedWithin(releasedEarly, this.client.session.timeoutMs);
    await this.client.close();
    await this.reaper.drain();
  }

  /** Waits until every handle's release is confirmed, or `ms` passed; leaves no timer. */
  private async confirmedWithin(handles: readonly NodeHandle[], ms: number): Promise<void> {
    const limit = deadline(ms, () => undefined);
    try {
      await abortable(Promise.allSettled(handles.map((handle) => handle.releaseConfirmed)), [limit.signal]);
    } catch {
      // past the session timeout: the server has ended the session, and the nodes with it
    } finally {
      limit.clear();
    }
  }

  /** `acquiring`, rejecting with `LockUnavailableError` if its deadline passed with no session connected. */
  private async blamingOutage<T>(acquiring: Promise<T>): Promise<T> {
    try {
      return await acquiring;
    } catch (error) {
      throw blameOutage(this.client.outage, error);
    }
  }

  /**
   * A read (or `requestRevocation`) on a connected session, within the call's `timeoutMs`:
   * see `onConnectedSession`. `call` names the method for a bad option; `subject`, what
   * `LockUnavailableError` says could not be answered.
   */
  private async whenConnected<T>(
    call: string,
    subject: string,
    options: ReadOptions | undefined,
    work: (session: ZkSession) => Promise<T>,
  ): Promise<T> {
    const timeoutMs = resolveReadTimeout(options, call);
    await this.startedOnce();
    return onConnectedSession(this.client, timeoutMs, subject, work);
  }

  /** Connects on first use of a backend made by `unconnected()`; free once started. */
  private async startedOnce(): Promise<void> {
    if (!this.client.isStarted && !this.client.isClosed) await this.start();
  }

  private groupPathOf(group: string): string {
    return `${groupsRoot(this.options.rootPath)}/${encodeGroupName('group', group)}`;
  }

  private memberPathOf(group: string, id: string): string {
    return `${this.groupPathOf(group)}/${encodeGroupName('memberId', id)}`;
  }

  private recordPathOf(name: string): string {
    return `${recordsRoot(this.options.rootPath)}/${encodeLockName(name)}`;
  }

  private async run(name: string, options: ResolvedAcquireOptions, sent?: SentCreate): Promise<ZkLockHandle | null> {
    return this.lockRecipe.run(name, this.pathOf(name), options, sent);
  }
}
