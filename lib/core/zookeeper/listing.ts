import { assertLockDirectory } from './queue/directory-kind.js';
import type { ZkSession, ZkReadResult } from './session/zk-session.js';
import { isZkCode } from './session/zk-error-code.js';
import {
  type LockContender,
  type ListedLock,
  type RecordData,
  type StoredRecord,
  byName,
} from '../port/lock-backend.js';
import { jobNameOf } from '../port/job-record.js';
import { decodeLockName } from '../naming/lock-name-codec.js';
import { listChildren, presentOrGone } from './queue/directory.js';
import { holdingIn, orderQueue } from '../port/lock-queue.js';
import {
  leaseListingOf,
  lockListingOf,
  lockNameOfDirectory,
  maxLeasesOf,
  shapeOf,
  type DirectoryShape,
  type NodeFacts,
} from './listing-summary.js';

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
  const children = listing?.children ?? [];
  const queue = orderQueue(children);
  const holding = holdingIn(children, queue);
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
        holding: holding(i),
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

interface Directory {
  readonly name: string;
  readonly path: string;
}

interface Shaped {
  readonly directory: Directory;
  readonly shape: DirectoryShape;
}

/**
 * Every lock under `rootPath` whose name starts with `prefix`, with its holders and
 * waiters, in three round trips whatever the number of locks: the root's children; then
 * every matching directory's children; then every node's data and stat (and each
 * semaphore directory's data). On ZooKeeper 3.6 and later each of the last two is one
 * `multiRead` (per 500 reads); before, 1 + D + N requests for D directories holding N
 * nodes, each round's sent together. Directories that are not ours, or hold no node of
 * ours, are left out; nodes and directories that vanish between the reads too. A
 * snapshot: by the time it resolves, the queues may have moved on.
 */
export async function readLockListings(session: ZkSession, rootPath: string, prefix: string): Promise<ListedLock[]> {
  const root = await listChildren(session, rootPath);
  const directories = (root?.children ?? []).flatMap((child): Directory[] => {
    const name = lockNameOfDirectory(child);
    return name !== null && name.startsWith(prefix) ? [{ name, path: `${rootPath}/${child}` }] : [];
  });
  const contents = await session.readAll(directories.map(({ path }) => ({ op: 'getChildren', path })));
  const shaped = directories.flatMap((directory, i): Shaped[] => {
    const shape = shapeOf(childrenOf(contents[i], directory.path));
    return shape ? [{ directory, shape }] : [];
  });
  const reads = await session.readAll(shaped.flatMap(dataReadsOf).map((path) => ({ op: 'getData', path })));
  let next = 0;
  const listings = shaped.map(({ directory, shape }) => {
    const path = (node: string): string => `${directory.path}/${node}`;
    if (shape.kind === 'lock') {
      const facts = factsOf(shape.queue, (node) => nodeFacts(reads[next++], path(node)));
      return lockListingOf(directory.name, shape.queue, facts, shape.kept);
    }
    const facts = factsOf(shape.leases, (node) => nodeFacts(reads[next++], path(node)));
    const limit = dataOf(reads[next++], directory.path);
    return leaseListingOf(directory.name, shape.leases, limit === null ? null : maxLeasesOf(limit), facts);
  });
  return listings.filter((listing): listing is ListedLock => listing !== null).sort(byName);
}

/** The data reads of one directory, in the order `readLockListings` takes their results. */
function dataReadsOf({ directory, shape }: Shaped): string[] {
  const nodes = shape.kind === 'lock' ? shape.queue : shape.leases;
  const paths = nodes.map(({ node }) => `${directory.path}/${node}`);
  return shape.kind === 'lock' ? paths : [...paths, directory.path];
}

function factsOf(
  nodes: ReadonlyArray<{ readonly node: string }>,
  factOf: (node: string) => NodeFacts | undefined,
): Map<string, NodeFacts> {
  const map = new Map<string, NodeFacts>();
  for (const { node } of nodes) {
    const fact = factOf(node); // one per node, in order, even when it is gone
    if (fact) map.set(node, fact);
  }
  return map;
}

/** A node's facts from its data read; `undefined` when it was released between the reads. */
function nodeFacts(result: ZkReadResult, path: string): NodeFacts | undefined {
  const read = presentOrGone(result, 'getData', path);
  if (!read || !('stat' in read)) return undefined;
  const { data, stat } = read;
  return {
    identity: data?.toString('utf8') ?? null,
    since: new Date(stat.ctimeMs!),
    ...(stat.owner && { sessionId: stat.owner }),
  };
}

/** A node's data (`undefined` when it has none), or `null` when the node is gone. */
function dataOf(result: ZkReadResult, path: string): Buffer | undefined | null {
  const read = presentOrGone(result, 'getData', path);
  return read && 'stat' in read ? read.data : null;
}

/** A directory's children (none when it is gone). */
function childrenOf(result: ZkReadResult, path: string): string[] {
  const read = presentOrGone(result, 'getChildren', path);
  return read && 'children' in read ? read.children : [];
}

/**
 * The job records (`job/<name>`) under `recordsRoot` whose lock name starts with `prefix`,
 * for `locks()` to show each job's last run: one read of the folder's children, then (only
 * when there are any) every record's data in one `multiRead`. A record gone meanwhile, or
 * not JSON, is left out.
 */
export async function readJobRecords(
  session: ZkSession,
  recordsRoot: string,
  prefix: string,
): Promise<Array<[string, StoredRecord]>> {
  const folder = await listChildren(session, recordsRoot);
  const jobs = (folder?.children ?? []).flatMap((child): Array<[string, string]> => {
    const name = jobNameOf(decodedOrNull(child) ?? '');
    return name !== null && name.startsWith(prefix) ? [[name, `${recordsRoot}/${child}`]] : [];
  });
  if (jobs.length === 0) return [];
  const reads = await session.readAll(jobs.map(([, path]) => ({ op: 'getData', path })));
  return jobs.flatMap(([name, path], i): Array<[string, StoredRecord]> => {
    const read = presentOrGone(reads[i], 'getData', path);
    if (!read || !('stat' in read)) return [];
    try {
      const data = JSON.parse(read.data?.toString('utf8') ?? '') as RecordData;
      return [[name, { data, version: read.stat.version ?? 0, writtenAt: read.stat.mtimeMs! }]];
    } catch {
      return [];
    }
  });
}

function decodedOrNull(encoded: string): string | null {
  try {
    return decodeLockName(encoded);
  } catch {
    return null;
  }
}
