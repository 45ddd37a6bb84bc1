import { LockClientClosedError, type LockLostError, LockTimeoutError } from '../errors/errors.js';
import type { DirectorySweeper } from './queue/directory-sweeper.js';
import { listChildren } from './queue/directory.js';
import type { NodeReaper } from './queue/node-reaper.js';
import type { ZkClient } from './session/zk-client.js';
import type { ZkSession } from './session/zk-session.js';
import { isZkCode } from './session/zk-error-code.js';
import { LeaseAcquisition } from './queue/lease-acquisition.js';
import { checkNoKazooLeases, LeaseDirectories, leaseCountOf } from './queue/directory-kind.js';
import { directoryKindOf } from './queue/directory-marker.js';
import type { AcquireLeaseOptions, LeaseContender } from '../port/lock-backend.js';
import { leaseMessages } from '../errors/messages.js';
import { resolveLeaseOptions } from '../port/options.js';
import { orderLeases } from '../port/lease-queue.js';
import { ZkLeaseHandle } from './queue/zk-lease-handle.js';

/** What the lease recipe shares with `ZkLockBackend`: its session, reaper, and the waits and holds `close()` ends. */
export interface ZkLeaseHost {
  readonly client: ZkClient;
  readonly reaper: NodeReaper;
  readonly sweeper: DirectorySweeper;
  readonly identity: Buffer;
  readonly waits: Map<{ cancel(reason: unknown): void }, Promise<unknown>>;
  readonly held: Set<{ readonly name: string; revoke(reason: LockLostError): void; release(): Promise<void> }>;
  pathOf(name: string): string;
  startedOnce(): Promise<void>;
}

/** `ZkLockBackend.acquireLease` and `leaseContenders`: leases on the backend's session. */
export class ZkLeaseRecipe {
  private readonly directories = new LeaseDirectories();

  constructor(private readonly host: ZkLeaseHost) {}

  async acquire(name: string, options: AcquireLeaseOptions): Promise<ZkLeaseHandle> {
    const { maxLeases, timeoutMs, signal } = resolveLeaseOptions(options, Infinity);
    const { client, reaper, sweeper, identity, waits, held } = this.host;
    const dir = this.host.pathOf(name);
    await this.host.startedOnce();
    if (client.isClosed) throw new LockClientClosedError();
    const context = { client, reaper, sweeper, identity, directories: this.directories };
    const acquisition = new LeaseAcquisition(context, { name, dir, maxLeases, timeoutMs, signal });
    const running = acquisition.run();
    waits.set(acquisition, running);
    try {
      const grant = await running;
      if (!grant) throw new LockTimeoutError(name, 'lease', 0, leaseMessages.timeout(name, maxLeases, 0));
      // Checked against the clock now: a grant that comes back to an event loop blocked
      // past the session's deadline is born lost.
      grant.session.checkTrust();
      const handle = new ZkLeaseHandle({
        name,
        maxLeases,
        ...grant,
        dir,
        reaper,
        onReleased: (released) => held.delete(released),
      });
      held.add(handle);
      return handle;
    } finally {
      waits.delete(acquisition);
    }
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
