import { listChildren } from './directory.js';
import type { ZkSession, ZkStat, ZkWatchListener } from '../session/zk-session.js';
import type { Stop } from '../../util/stop.js';
import { isZkCode } from '../session/zk-error-code.js';
import type { Retrying } from './directory-kind.js';

/** A watch set with a read: `fired` resolves when it fires; `dispose` drops our listener. */
export interface Wake {
  readonly fired: Promise<void>;
  dispose(): void;
}

export interface Listing {
  readonly children: string[];
  readonly stat: ZkStat;
}

/** A children read, with the watch it set when it set one. */
export interface View {
  readonly listing: Listing;
  readonly wake?: Wake;
}

/** A directory that does not exist, as a listing: our node is missing from it. */
const EMPTY_LISTING: Listing = { children: [], stat: { pzxid: 0n, czxid: 0n } };

/** The directory's children, with a children watch when `watch` (what the head waits on). */
export async function readQueue(session: ZkSession, dir: string, watch: boolean, retrying: Retrying): Promise<View> {
  if (!watch) return { listing: (await retrying(() => listChildren(session, dir))) ?? EMPTY_LISTING };
  let listener!: () => void;
  const fired = new Promise<void>((resolve) => (listener = resolve));
  const wake: Wake = { fired, dispose: () => session.unwatch(dir, listener) };
  try {
    const listing = await retrying(() => session.watchChildren(dir, listener));
    return listing ? { listing, wake } : { listing: EMPTY_LISTING };
  } catch (error) {
    wake.dispose();
    throw error;
  }
}

/** The data version last seen on the node a waiter watches, so a version is acted on once. */
export interface SeenVersion {
  path?: string;
  version?: number;
}

/**
 * A waiter behind the head waits for the node just ahead of it to go, or to signal its
 * grant (see `signalGrant`). A signal sent before our watch was set shows as a data
 * version not seen before: we return at once and read the queue again. A version seen
 * before (someone else wrote the node) is not acted on twice, so no loop can come of it.
 * Resolves `true` when the node signalled (it holds: we are most likely the head now),
 * `false` when it went (or the wake had another cause).
 */
export async function watchPredecessor(
  session: ZkSession,
  path: string,
  stop: Stop,
  seen: SeenVersion,
): Promise<boolean> {
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
export function signalGrant(session: ZkSession, path: string, identity: Buffer): void {
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
