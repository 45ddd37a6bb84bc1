import { REVOKE_REQUEST } from '../port/lock-node.js';
import { assertLockDirectory } from './queue/directory-kind.js';
import { listChildren } from './queue/directory.js';
import { holdingIn, orderQueue } from '../port/lock-queue.js';
import type { ZkSession, ZkWatchListener } from './session/zk-session.js';
import { isZkCode } from './session/zk-error-code.js';
import { LockRevocationRequestedError } from '../errors/errors.js';

/**
 * Curator's revocation on the wire: `Revoker.attemptRevoke` writes these ten ASCII bytes
 * into a holder's node (`setData`, any version), and a holder that made its lock revocable
 * watches its own node's data for them. The same bytes make our requests reach Curator
 * holders, and Curator's reach ours.
 */
const REVOKE_BYTES = Buffer.from(REVOKE_REQUEST, 'ascii');

/** The node data that asks its holder to give the lock up. */
export function revokeRequestData(): Buffer {
  return Buffer.from(REVOKE_BYTES);
}

/** Whether a lock node's data is a revocation request (exactly the bytes, as Curator compares them). */
export function isRevokeRequest(data: Buffer | null | undefined): boolean {
  return data != null && data.equals(REVOKE_BYTES);
}

/**
 * Asks every current holder of the lock in `dir` to release it, as Curator's
 * `Revoker.attemptRevoke` does for one node: `__REVOKE__` written into the holder's node.
 * Waiters are not asked (they hold nothing yet). Resolves with how many holders were asked;
 * one that released meanwhile (its node is gone) is not counted. Costs one children read
 * and one `setData` per holder, sent together: two round trips.
 *
 * A lease semaphore's name is refused (`LockKindMismatchError`), as by `contenders()`.
 * A holder that did not make its lock revocable is not told; its node's data (the identity
 * `contenders()` shows) reads `__REVOKE__` from then on.
 */
export async function requestRevocation(session: ZkSession, dir: string, name: string): Promise<number> {
  const listing = await throughConnectionLoss(session, () => listChildren(session, dir));
  await assertLockDirectory(session, dir, name, listing); // a semaphore's leases are not locks: refused, as contenders() does
  const children = listing?.children ?? [];
  const queue = orderQueue(children);
  const holding = holdingIn(children, queue);
  const holders = queue.filter((_, index) => holding(index));
  return (
    await askHolders(
      session,
      dir,
      holders.map((holder) => holder.node),
    )
  ).length;
}

/**
 * Writes the request into each of `nodes` (holders' nodes in `dir`), sent together;
 * resolves with those asked, leaving out any released meanwhile. For a caller that chose
 * whom to ask (the CLI leaves out holders that did not opt in: see `revocationOptInOf`).
 */
export async function askHolders(session: ZkSession, dir: string, nodes: readonly string[]): Promise<string[]> {
  const asked = await Promise.all(nodes.map((node) => ask(session, `${dir}/${node}`)));
  return nodes.filter((_, i) => asked[i]);
}

async function ask(session: ZkSession, path: string): Promise<boolean> {
  try {
    await throughConnectionLoss(session, () => session.setData(path, revokeRequestData()));
    return true;
  } catch (error) {
    if (isZkCode(error, 'NO_NODE')) return false; // released meanwhile, as Curator's Revoker ignores it
    throw error;
  }
}

/**
 * Runs an idempotent request again after a lost connection (the session survives it);
 * rejects with the session's loss if it ends first.
 */
async function throughConnectionLoss<T>(session: ZkSession, request: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await request();
    } catch (error) {
      if (!isZkCode(error, 'CONNECTION_LOSS')) throw error;
      await session.whenConnected();
    }
  }
}

/**
 * A revocable holder's watch on its own lock node's data (Curator's `makeRevocable`):
 * `signal` aborts with a `LockRevocationRequestedError` once the data reads `__REVOKE__`.
 *
 * One data watch at a time, set when the lock is granted. A change to anything else re-reads
 * and re-arms it; the first read also catches a request written before the watch was set
 * (a requester may see us holding before we do). The watch ends by itself when the node goes
 * (release: ZooKeeper fires and drops it) or the session does (the server drops every watch
 * of it); `stop()` drops our listener. Connection losses are waited out: node-zookeeper-client
 * re-registers the watch on reconnect, and a re-read cut short is sent again.
 */
export class RevocationWatch {
  private readonly requested = new AbortController();
  private readonly stopping = new AbortController();
  /** Settles once the first read is answered (or the watch ended without one); never rejects. */
  readonly armed: Promise<void>;

  constructor(
    private readonly session: ZkSession,
    private readonly path: string,
    private readonly name: string,
  ) {
    this.armed = this.arm();
  }

  /** Aborts, reason `LockRevocationRequestedError`, when someone asks this holder to release. */
  get signal(): AbortSignal {
    return this.requested.signal;
  }

  /** The holder released: drop our listener (the release's delete ends ZooKeeper's watch). */
  stop(): void {
    this.stopping.abort();
    this.session.unwatch(this.path, this.onEvent);
  }

  private get done(): boolean {
    return this.stopping.signal.aborted || this.requested.signal.aborted || this.session.isLost;
  }

  private readonly onEvent: ZkWatchListener = (event) => {
    // NODE_DELETED (released, or deleted by hand) and SESSION_LOST leave nothing to watch.
    if (event.type === 'NODE_DATA_CHANGED' && !this.done) void this.arm();
  };

  private async arm(): Promise<void> {
    for (;;) {
      try {
        const data = await this.session.watchDataValue(this.path, this.onEvent);
        if (isRevokeRequest(data) && !this.done) this.requested.abort(new LockRevocationRequestedError(this.name));
        return;
      } catch (error) {
        // Anything but a lost connection (the session is gone, or the node cannot be read)
        // ends the watch: the lock's own signal tells the holder about a lost session.
        if (!isZkCode(error, 'CONNECTION_LOSS') || this.done) return;
        if (!(await this.reconnected())) return;
      }
    }
  }

  private async reconnected(): Promise<boolean> {
    try {
      await this.session.whenConnected(this.stopping.signal);
      return !this.done;
    } catch {
      return false; // the session was lost, or the holder released, meanwhile
    }
  }
}
