import { assertLockDirectory } from './queue/directory-kind.js';
import type { ZkSession } from './session/zk-session.js';
import { isZkCode } from './session/zk-error-code.js';
import type { LockContender } from '../port/lock-backend.js';
import { listChildren } from './queue/directory.js';
import { blockerAt, orderQueue } from '../port/lock-queue.js';

/** Resolves `undefined` for a node deleted meanwhile, instead of failing with NO_NODE. */
function unlessGone<T>(work: Promise<T>): Promise<T | undefined> {
  return work.catch((error: unknown) => {
    if (isZkCode(error, 'NO_NODE')) return undefined;
    throw error;
  });
}

/**
 * A lock's queue as `contenders()` reports it: every node of any format in order, with
 * the data its client wrote and whether it holds. Refuses a lease semaphore's directory.
 */
export async function readContenders(session: ZkSession, dir: string, name: string): Promise<LockContender[]> {
  const listing = await listChildren(session, dir);
  await assertLockDirectory(session, dir, name, listing);
  const queue = orderQueue(listing?.children ?? []);
  const identities = await Promise.all(
    queue.map((entry) =>
      unlessGone(session.getData(`${dir}/${entry.node}`).then((data) => data?.toString('utf8') ?? null)),
    ),
  );
  return queue.flatMap((entry, i) => {
    const identity = identities[i];
    if (identity === undefined) return []; // released between the reads
    return [
      {
        node: entry.node,
        mode: entry.mode,
        sequence: entry.sequence,
        format: entry.format,
        identity,
        holding: blockerAt(queue, i) === null,
      },
    ];
  });
}

/** Deletes the nodes of the lock's current holders (see `ZkLockBackend.forceRelease`); resolves with those deleted. */
export async function deleteHolders(session: ZkSession, dir: string, name: string): Promise<string[]> {
  const holders = (await readContenders(session, dir, name)).filter((contender) => contender.holding);
  const deleted = await Promise.all(
    holders.map(({ node }) => unlessGone(session.remove(`${dir}/${node}`).then(() => node))),
  );
  return deleted.filter((node): node is string => node !== undefined);
}
