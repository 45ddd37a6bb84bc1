import { listChildren } from '../recipe/lock-directory.js';
import type { ZkSession } from '../session/zk-session.js';
import { isZkCode } from '../util/zk-error-code.js';
import type { ListedLock } from './lock-listing.interface.js';
import {
  byName,
  leaseListingOf,
  lockListingOf,
  lockNameOfDirectory,
  maxLeasesOf,
  shapeOf,
  type DirectoryShape,
  type NodeFacts,
} from './lock-listing.summary.js';

interface Directory {
  readonly name: string;
  readonly path: string;
}

/**
 * Every lock under `rootPath` whose name starts with `prefix`, with its holders and
 * waiters, in three round trips whatever the number of locks: the root's children; then
 * every matching directory's children, sent together; then every node's data and stat
 * (and each semaphore directory's data), sent together. That is 1 + D + N requests for D
 * directories holding N nodes. Directories that are not ours, or hold no node of ours, are
 * left out; nodes and directories that vanish between the reads too. A snapshot: by the
 * time it resolves, the queues may have moved on.
 */
export async function readLockListings(session: ZkSession, rootPath: string, prefix: string): Promise<ListedLock[]> {
  const root = await listChildren(session, rootPath);
  const directories = (root?.children ?? []).flatMap((child): Directory[] => {
    const name = lockNameOfDirectory(child);
    return name !== null && name.startsWith(prefix) ? [{ name, path: `${rootPath}/${child}` }] : [];
  });
  const contents = await Promise.all(directories.map((directory) => listChildren(session, directory.path)));
  const listings = await Promise.all(
    // eslint-disable-next-line @typescript-eslint/await-thenable -- some entries are plain values, on purpose
    directories.map((directory, i) => {
      const shape = shapeOf(contents[i]?.children ?? []);
      return shape ? readDirectory(session, directory, shape) : null;
    }),
  );
  return listings.filter((listing): listing is ListedLock => listing !== null).sort(byName);
}

/** One directory's listing; its requests are all sent before this first awaits. */
async function readDirectory(
  session: ZkSession,
  { name, path }: Directory,
  shape: DirectoryShape,
): Promise<ListedLock | null> {
  const nodes = shape.kind === 'lock' ? shape.queue : shape.leases;
  const reading = Promise.all(nodes.map(({ node }) => readNode(session, `${path}/${node}`)));
  if (shape.kind === 'lock') return lockListingOf(name, shape.queue, factsOf(nodes, await reading));
  const limit = session.getData(path).then(maxLeasesOf, ignoreNoNode);
  const [facts, maxLeases] = await Promise.all([reading, limit]);
  return leaseListingOf(name, shape.leases, maxLeases ?? null, factsOf(nodes, facts));
}

async function readNode(session: ZkSession, path: string): Promise<NodeFacts | undefined> {
  try {
    const { data, ctimeMs, owner } = await session.getDataAndCtime(path);
    return { identity: data?.toString('utf8') ?? null, since: new Date(ctimeMs), ...(owner && { sessionId: owner }) };
  } catch (error) {
    return ignoreNoNode(error); // released between the reads
  }
}

function factsOf(
  nodes: ReadonlyArray<{ readonly node: string }>,
  facts: ReadonlyArray<NodeFacts | undefined>,
): Map<string, NodeFacts> {
  const map = new Map<string, NodeFacts>();
  nodes.forEach(({ node }, i) => facts[i] && map.set(node, facts[i]));
  return map;
}

function ignoreNoNode(error: unknown): undefined {
  if (isZkCode(error, 'NO_NODE')) return undefined;
  throw error;
}
