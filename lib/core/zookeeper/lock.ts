import type { KeptRelease, LockHandle, LockMode, NodeFormat } from '../port/lock-backend.js';
import { LockTimeoutError } from '../errors/errors.js';
import { lockMessages } from '../errors/messages.js';
import { newLockNodePrefix, nodeFormatFor } from '../port/node-format.js';
import { nodesWithPrefix, positionOf, type QueuePosition } from '../port/lock-queue.js';
import type { ResolvedAcquireOptions } from '../port/options.js';
import { RevocationWatch } from './revocation.js';
import {
  acquireNode,
  QueueAcquisition,
  type Grant,
  type QueueDriver,
  type QueueHost,
  type QueueIo,
  type SentCreate,
  type WaitingPosition,
  type Woken,
} from './queue/acquisition.js';
import { lockDirectoryKind, settleLockDirectory } from './queue/directory-kind.js';
import { ensurePath, type Listing } from './queue/directory.js';
import { NodeHandle, type NodeHandleInit } from './queue/node-handle.js';
import type { KeptHoldMarkers } from './queue/kept-hold-markers.js';

/** A lock's grant: its fencing token is the listing's pzxid (see docs/fencing.md). */
export interface LockGrant extends Grant {
  readonly fencingToken: bigint;
}

/** The lock recipe's steps in the queue loop: watch the one node that blocks us. */
class LockDriver implements QueueDriver<QueuePosition, LockGrant> {
  readonly subject: string;
  readonly ours = nodesWithPrefix;
  readonly positionOf = positionOf;

  constructor(
    private readonly name: string,
    private readonly dir: string,
    private readonly mode: LockMode,
    /** How our node is named (resolved: the call's, else the client's). */
    private readonly nodeFormat: NodeFormat,
    /** Acquired with `revocable: true`: the node's name says so, for requesters. */
    private readonly revocable: boolean,
    private readonly markers: KeptHoldMarkers,
  ) {
    this.subject = lockMessages.lockSubject(name, mode);
  }

  newPrefix(): string {
    return newLockNodePrefix(this.mode, this.nodeFormat, this.revocable);
  }

  timeoutError(timeoutMs: number): Error {
    return new LockTimeoutError(this.name, this.mode, timeoutMs);
  }

  async makeDirectory(io: QueueIo): Promise<void> {
    await io.retrying(() => ensurePath(io.session, this.dir));
  }

  /** A lock's directory has no data: free. Our lease semaphore's is taken over if idle. */
  checkDirectory(
    io: QueueIo,
    { stat }: Listing,
    first: boolean,
    leave: () => Promise<void>,
  ): boolean | Promise<boolean> {
    // No await for a directory without data (every lock's): no turn of the event loop either.
    if (!first || !stat.dataLength) return true;
    return this.unlessSemaphore(io, stat, leave);
  }

  /**
   * Our node landed in our lease semaphore's directory: it goes first (ZooKeeper replaces no
   * directory with a child in it); then the directory becomes a lock's if nobody holds or
   * awaits a lease there (else `LockKindMismatchError`), and we queue again.
   */
  private async unlessSemaphore(io: QueueIo, stat: Listing['stat'], leave: () => Promise<void>): Promise<boolean> {
    const kind = await io.retrying(() => lockDirectoryKind(io.session, this.dir, this.name, stat));
    if (kind !== 'lease') return true;
    await leave();
    await settleLockDirectory(io.session, this.dir, this.name, io);
    return false;
  }

  /**
   * Watches the one node that blocks us (no herd), the read leaving from its notification;
   * or, when nothing but a kept hold does, waits it out (see `KeptHoldMarkers.waitOut`).
   */
  async wait(io: QueueIo, position: WaitingPosition<QueuePosition>): Promise<Woken> {
    if (position.kind !== 'kept') return { listing: await io.waitAndRead(`${this.dir}/${position.blocker.node}`) };
    await this.markers.waitOut(io, this.dir, position.marker);
    return { watchChildren: false };
  }

  /** A try is refused by a kept hold only until its end: one past it is deleted, and the queue read again. */
  async cleared(io: QueueIo, position: WaitingPosition<QueuePosition>): Promise<Woken | undefined> {
    if (position.kind !== 'kept' || !(await this.markers.ended(io, this.dir, position.marker))) return undefined;
    return { watchChildren: false };
  }

  grant(io: QueueIo, node: string, listing: Listing): LockGrant {
    return { session: io.session, node, fencingToken: listing.stat.pzxid };
  }
}

export interface ZkLockHandleInit extends NodeHandleInit {
  readonly mode: LockMode;
  readonly fencingToken: bigint;
  /** The watch of a lock acquired with `revocable: true`. */
  readonly revocation?: RevocationWatch;
  /** Where `releaseKeeping` puts its marker. */
  readonly markers: KeptHoldMarkers;
}

/** What the diagnostics channels say a lock is: one object per mode, shared by every handle (none copied per held lock). */
const DESCRIBED = { read: { kind: 'lock', mode: 'read' }, write: { kind: 'lock', mode: 'write' } } as const;

/** A granted ZooKeeper lock: one ephemeral node, alive as long as its session. */
export class ZkLockHandle extends NodeHandle implements LockHandle, KeptRelease {
  readonly mode: LockMode;
  readonly fencingToken: bigint;
  private readonly revocationWatch: RevocationWatch | undefined;
  private neverRevoked: AbortController | undefined;
  private readonly keep: (holdMs: number) => Promise<boolean>;

  constructor(init: ZkLockHandleInit) {
    super(init, DESCRIBED[init.mode]);
    ({ mode: this.mode, fencingToken: this.fencingToken, revocation: this.revocationWatch } = init);
    const { markers, session, dir } = init;
    this.keep = (holdMs) => markers.keep(session, dir, holdMs);
  }

  /**
   * The kept hold's marker goes into the directory first, in this lock's session, and only
   * then the lock node: no acquirer ever finds neither (see core/port/kept-hold).
   */
  async releaseKeeping(holdMs: number): Promise<boolean> {
    if (!this.isHeld() || !(await this.keep(holdMs)) || !this.isHeld()) return false;
    await this.release();
    return true;
  }

  /**
   * Aborts with a `LockRevocationRequestedError` when another client asks this lock's
   * holders to release it (`revocable: true` only). For a lock that is not revocable, a
   * signal of this handle's own that never aborts, made on first read: no watch, no request.
   */
  get revocation(): AbortSignal {
    return this.revocationWatch?.signal ?? (this.neverRevoked ??= new AbortController()).signal;
  }

  protected override onRelease(): void {
    this.revocationWatch?.stop();
  }
}

/** What `ZkLockRecipe` shares with its backend. */
export interface ZkLockHost extends QueueHost {
  /** The backend's default node format. */
  readonly nodeFormat: NodeFormat;
  readonly markers: KeptHoldMarkers;
}

/** `ZkLockBackend`'s acquires of a lock (not of a lease): the queue loop with the lock's driver. */
export class ZkLockRecipe {
  constructor(private readonly host: ZkLockHost) {}

  /** The handle, or `null` when the lock was not free before `timeoutMs`: 0 is a try. */
  run(name: string, dir: string, options: ResolvedAcquireOptions, sent?: SentCreate): Promise<ZkLockHandle | null> {
    const { mode, timeoutMs, signal, revocable, maxHoldMs, release = this.host.release } = options;
    const start = (): QueueAcquisition<QueuePosition, LockGrant> => {
      const nodeFormat = nodeFormatFor(mode, options.nodeFormat, this.host.nodeFormat);
      const driver = new LockDriver(name, dir, mode, nodeFormat, revocable === true, this.host.markers);
      return new QueueAcquisition(this.host, driver, { name, dir, timeoutMs, signal, sent });
    };
    return acquireNode(this.host, start, (grant, onReleased) => {
      const revocation = revocable ? new RevocationWatch(grant.session, `${dir}/${grant.node}`, name) : undefined;
      const { reaper, identity } = this.host;
      const handle = new ZkLockHandle({
        name,
        mode,
        ...grant,
        dir,
        reaper,
        identity,
        onReleased,
        revocation,
        markers: this.host.markers,
        maxHoldMs,
        confirmRelease: release === 'confirmed',
      });
      return { handle, armed: revocation?.armed };
    });
  }
}
