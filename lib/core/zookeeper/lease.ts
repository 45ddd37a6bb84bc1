import { LockTimeoutError } from '../errors/errors.js';
import { leaseMessages, lockMessages } from '../errors/messages.js';
import type { AcquireLeaseOptions, LeaseContender, LeaseHandle } from '../port/lock-backend.js';
import { leaseNodePrefix } from '../port/lease-node.js';
import { leaseNodesWithPrefix, leasePositionOf, orderLeases, type LeasePosition } from '../port/lease-queue.js';
import { newAttemptGuid } from '../port/lock-node.js';
import { resolveLeaseOptions } from '../port/options.js';
import type { Stop } from '../util/stop.js';
import {
  acquireNode,
  QueueAcquisition,
  type Grant,
  type HoldingPosition,
  type WaitingPosition,
  type QueueDriver,
  type QueueHost,
  type QueueIo,
  type View,
  type Woken,
} from './queue/acquisition.js';
import { checkNoKazooLeases, LeaseDirectories, leaseCountOf, type SemaphoreRef } from './queue/directory-kind.js';
import { directoryKindOf } from './queue/directory-marker.js';
import { listChildren, type Listing } from './queue/directory.js';
import { NodeHandle, type NodeHandleInit } from './queue/node-handle.js';
import { isZkCode } from './session/zk-error-code.js';
import type { ZkSession, ZkWatchListener } from './session/zk-session.js';

/** The data version last seen on the node a waiter watches, so a version is acted on once. */
interface SeenVersion {
  path?: string;
  version?: number;
}

/** A lease's grant: its fencing token is the listing's pzxid, as a lock's (see docs/fencing.md). */
interface LeaseGrant extends Grant {
  readonly fencingToken: bigint;
}

/**
 * The lease recipe's steps in the queue loop (the rule of `lease-queue.ts`): the directory
 * made a semaphore of our count before the create and confirmed with the first listing;
 * the head waits on the children, every other waiter on its predecessor; a grant with
 * nodes queued behind it signals its successor.
 */
class LeaseDriver implements QueueDriver<LeasePosition, LeaseGrant> {
  readonly subject: string;
  readonly ours = leaseNodesWithPrefix;
  private readonly seen: SeenVersion = {};

  constructor(
    private readonly ref: SemaphoreRef,
    private readonly directories: LeaseDirectories,
    private readonly identity: Buffer,
  ) {
    this.subject = lockMessages.lockSubject(ref.name, 'lease');
  }

  newPrefix(): string {
    return leaseNodePrefix(newAttemptGuid());
  }

  positionOf(children: readonly string[], node: string): LeasePosition {
    return leasePositionOf(children, node, this.ref.maxLeases);
  }

  timeoutError(timeoutMs: number): Error {
    const { name, maxLeases } = this.ref;
    return new LockTimeoutError(name, 'lease', timeoutMs, leaseMessages.timeout(name, maxLeases, timeoutMs));
  }

  prepare(io: QueueIo): Promise<void> {
    return this.directories.prepare(io.session, this.ref, io);
  }

  /** A vanished directory is made again, with our number of leases. */
  makeDirectory(io: QueueIo): Promise<void> {
    return this.directories.recreate(io.session, this.ref, io.retrying);
  }

  checkDirectory(io: QueueIo, listing: Listing, first: boolean): boolean | Promise<boolean> {
    if (first) return this.confirm(io, listing);
    checkNoKazooLeases(this.ref.name, this.ref.dir, listing.children);
    return true;
  }

  /** Made a lock's, or another count's, since we checked it: our node goes, and we prepare again. */
  private async confirm(io: QueueIo, listing: Listing): Promise<boolean> {
    if (!(await this.directories.confirm(io.session, this.ref, listing.stat, io.retrying))) return false;
    checkNoKazooLeases(this.ref.name, this.ref.dir, listing.children);
    return true;
  }

  async wait(io: QueueIo, position: WaitingPosition<LeasePosition>, { wake }: View): Promise<Woken> {
    if (position.kind === 'head') {
      // The head waits on a children watch, and every read it makes next sets the next one:
      // a wake costs one read whatever its cause (a holder leaving, or a node arriving
      // behind us, which cannot grant us), and a read without a watch is read again with one.
      // When that read grants us, its watch stays on the server until the next change
      // fires it (one notification, no request): cheaper than reading twice per arrival.
      if (wake) await io.stop.race(wake.fired);
      return { watchChildren: true };
    }
    // Behind a node that now holds, or right behind a head that went, we are most likely
    // the head: the next read sets the children watch the head needs.
    const path = `${this.ref.dir}/${position.predecessor.node}`;
    const signalled = await io.retrying(() => watchPredecessor(io.session, path, io.stop, this.seen));
    return { watchChildren: signalled || position.deputy };
  }

  grant(io: QueueIo, node: string, listing: Listing, position: HoldingPosition<LeasePosition>): LeaseGrant {
    if (position.successor) signalGrant(io.session, `${this.ref.dir}/${node}`, this.identity);
    return { session: io.session, node, fencingToken: listing.stat.pzxid };
  }
}

/**
 * A waiter behind the head waits for the node just ahead of it to go, or to signal its
 * grant (see `signalGrant`). A signal sent before our watch was set shows as a data
 * version not seen before: we return at once and read the queue again. A version seen
 * before (someone else wrote the node) is not acted on twice, so no loop can come of it.
 * Resolves `true` when the node signalled (it holds: we are most likely the head now),
 * `false` when it went (or the wake had another cause).
 */
async function watchPredecessor(session: ZkSession, path: string, stop: Stop, seen: SeenVersion): Promise<boolean> {
  let listener!: ZkWatchListener;
  const fired = new Promise<string>((resolve) => (listener = (event) => resolve(event.type)));
  try {
    const version = await stop.race(session.watchDataVersion(path, listener));
    if (version === null) return false; // gone already
    const fresh = version > 0 && (seen.path !== path || seen.version !== version);
    seen.path = path;
    seen.version = version;
    if (fresh) return true;
    return (await stop.race(fired)) === 'NODE_DATA_CHANGED';
  } finally {
    session.unwatch(path, listener);
  }
}

/**
 * The grant signal: a lease granted with nodes queued behind it writes its node's data
 * once (the same identity; only the version moves), which fires the data watch of the
 * waiter right behind it. Sent at once and not waited for: the grant does not pay for it.
 * It is retried through connection losses; it stops when the node or the session is gone
 * (the successor's watch then fires on the node's deletion). Any other refusal is left:
 * the successor then wakes when this lease is released.
 */
function signalGrant(session: ZkSession, path: string, identity: Buffer): void {
  void (async () => {
    while (!session.isLost) {
      try {
        await session.setData(path, identity);
        return;
      } catch (error) {
        if (!isZkCode(error, 'CONNECTION_LOSS')) return;
        await session.whenConnected().catch(() => undefined);
      }
    }
  })();
}

export interface ZkLeaseHandleInit extends NodeHandleInit {
  readonly maxLeases: number;
  readonly fencingToken: bigint;
}

/** What the diagnostics channels say a lease is, shared by every handle. */
const DESCRIBED = { kind: 'lease', mode: 'lease' } as const;

/**
 * A granted lease: one ephemeral node among the first `maxLeases` of its semaphore, alive
 * as long as its session. Lost as a lock is: its signal aborts when the session can no
 * longer be trusted, before the server could have expired it.
 */
export class ZkLeaseHandle extends NodeHandle implements LeaseHandle {
  readonly maxLeases: number;
  readonly fencingToken: bigint;

  constructor(init: ZkLeaseHandleInit) {
    super(init, DESCRIBED);
    ({ maxLeases: this.maxLeases, fencingToken: this.fencingToken } = init);
  }
}

/** What the lease recipe shares with `ZkLockBackend`. */
export interface ZkLeaseHost extends QueueHost {
  pathOf(name: string): string;
}

/** `ZkLockBackend.acquireLease` and `leaseContenders`: leases on the backend's session. */
export class ZkLeaseRecipe {
  private readonly directories = new LeaseDirectories();

  constructor(private readonly host: ZkLeaseHost) {}

  async acquire(name: string, options: AcquireLeaseOptions): Promise<ZkLeaseHandle> {
    const { host } = this;
    const { maxLeases, timeoutMs, signal, maxHoldMs, release = host.release } = resolveLeaseOptions(options, Infinity);
    const dir = host.pathOf(name);
    const driver = new LeaseDriver({ name, dir, maxLeases }, this.directories, host.identity);
    const handle = await acquireNode(
      host,
      () => new QueueAcquisition(host, driver, { name, dir, timeoutMs, signal }),
      (grant, onReleased) => ({
        handle: new ZkLeaseHandle({
          name,
          maxLeases,
          ...grant,
          dir,
          reaper: host.reaper,
          identity: host.identity,
          onReleased,
          maxHoldMs,
          confirmRelease: release === 'confirmed',
        }),
      }),
    );
    if (!handle) throw driver.timeoutError(0);
    return handle;
  }

  /**
   * Holders and waiters of the semaphore `name` (directory `dir`), read on `session`, in
   * queue order; none when it does not exist. The listing, the directory's data and every node's identity: two round trips.
   */
  async contenders(session: ZkSession, dir: string, name: string): Promise<LeaseContender[]> {
    const [listing, read] = await Promise.all([
      listChildren(session, dir),
      session.getDataAndStat(dir).catch(ignoreNoNode),
    ]);
    // No semaphore (or it went between the two reads); an idle directory says nothing either:
    // the name may become a lock's, or another count's, with its next acquire.
    if (!listing || !read || listing.children.length === 0) return [];
    const maxLeases = leaseCountOf(name, directoryKindOf(read.data), leaseMessages.inZooKeeper(dir));
    checkNoKazooLeases(name, dir, listing.children);
    const queue = orderLeases(listing.children);
    const identities = await Promise.all(queue.map((entry) => identityOf(session, `${dir}/${entry.node}`)));
    return queue.flatMap((entry, i) => {
      const identity = identities[i];
      if (identity === undefined) return []; // released meanwhile
      return [{ node: entry.node, sequence: entry.sequence, identity, holding: i < maxLeases }];
    });
  }
}

async function identityOf(session: ZkSession, path: string): Promise<string | null | undefined> {
  try {
    return (await session.getData(path))?.toString('utf8') ?? null;
  } catch (error) {
    return ignoreNoNode(error);
  }
}

function ignoreNoNode(error: unknown): undefined {
  if (isZkCode(error, 'NO_NODE')) return undefined;
  throw error;
}
