import { directoryKindOf } from './queue/directory-marker.js';
import type { ParsedLeaseNode } from '../port/lease-node.js';
import { orderLeases } from '../port/lease-queue.js';
import { decodeLockName, encodeLockName } from '../naming/lock-name-codec.js';
import type { ParsedLockNode } from '../port/lock-node.js';
import { blockerAt, orderQueue } from '../port/lock-queue.js';
import { keptHoldIn } from '../port/kept-hold.js';
import type { LeaseListing, ListedContender, ListedLease, LockListing } from '../port/lock-backend.js';

/**
 * The pure part of `locks()`: which directories are locks, who in each holds and who waits.
 * Kept free of I/O, so both backends share it and it can be unit-tested on its own.
 */

/** What a node's own read tells: its data as text, and when it was created. */
export interface NodeFacts {
  readonly identity: string | null;
  readonly since: Date;
  /** The ZooKeeper session that owns the node (ZooKeeper only). */
  readonly sessionId?: string;
}

/** A directory's lock nodes or, failing those, its lease nodes. */
export type DirectoryShape =
  /** `kept`: a kept hold's marker is there too (nobody holds while it lasts). */
  | { readonly kind: 'lock'; readonly queue: ParsedLockNode[]; readonly kept: boolean }
  | { readonly kind: 'lease'; readonly leases: ParsedLeaseNode[] };

/**
 * The lock name a directory under the root stands for, or `null` for one this library did
 * not name: it must decode, and encode back to exactly itself (so `a b` or `a%2fb`,
 * written by someone else, are not taken for the lock `a b` or `a/b`).
 */
export function lockNameOfDirectory(directory: string): string | null {
  try {
    const name = decodeLockName(directory);
    return encodeLockName(name) === directory ? name : null;
  } catch {
    return null; // malformed %-escapes, or a name the codec refuses
  }
}

/** Lock nodes if the directory has any, else lease nodes, else `null` (nothing of ours in it). */
export function shapeOf(children: readonly string[]): DirectoryShape | null {
  const queue = orderQueue(children);
  if (queue.length > 0) return { kind: 'lock', queue, kept: keptHoldIn(children) !== undefined };
  const leases = orderLeases(children);
  return leases.length > 0 ? { kind: 'lease', leases } : null;
}

/**
 * A lock's listing from its queue and each node's facts; a node without facts was released
 * between the reads and is left out (who holds is still decided on the whole queue, as it
 * stood when read). `null` when nothing is left.
 */
export function lockListingOf(
  name: string,
  queue: readonly ParsedLockNode[],
  facts: ReadonlyMap<string, NodeFacts>,
  kept = false,
): LockListing | null {
  const entries = queue.flatMap((entry, index): ListedContender[] => {
    const fact = facts.get(entry.node);
    if (!fact) return [];
    const { node, mode, sequence, format } = entry;
    const owner = fact.sessionId ? { sessionId: fact.sessionId } : {};
    return [
      {
        node,
        mode,
        sequence,
        format,
        identity: fact.identity,
        holding: !kept && blockerAt(queue, index) === null,
        since: fact.since,
        ...owner,
      },
    ];
  });
  return entries.length > 0 ? splitLockListing(name, entries) : null;
}

/** Holders and waiters of a queue listed in order. */
export function splitLockListing(name: string, entries: readonly ListedContender[]): LockListing {
  return { kind: 'lock', name, holders: entries.filter((e) => e.holding), waiters: entries.filter((e) => !e.holding) };
}

/** A semaphore's listing: the `maxLeases` lowest-numbered leases hold. `null` when nothing is left. */
export function leaseListingOf(
  name: string,
  leases: readonly ParsedLeaseNode[],
  maxLeases: number | null,
  facts: ReadonlyMap<string, NodeFacts>,
): LeaseListing | null {
  const entries = leases.flatMap((lease, index): ListedLease[] => {
    const fact = facts.get(lease.node);
    if (!fact) return [];
    const holding = maxLeases !== null && index < maxLeases;
    const owner = fact.sessionId ? { sessionId: fact.sessionId } : {};
    return [
      { node: lease.node, sequence: lease.sequence, identity: fact.identity, holding, since: fact.since, ...owner },
    ];
  });
  if (entries.length === 0) return null;
  return {
    kind: 'lease',
    name,
    maxLeases,
    holders: entries.filter((e) => e.holding),
    waiters: entries.filter((e) => !e.holding),
  };
}

/** A semaphore directory's number of leases, from the marker its create wrote; `null` if it has none. */
export function maxLeasesOf(data: Buffer | undefined): number | null {
  const kind = directoryKindOf(data);
  return kind.kind === 'lease' ? kind.maxLeases : null;
}
