import type { ListedContender, ListedLease, ListedLock } from '../core/port/lock-backend.js';
import { REVOKE_REQUEST } from '../core/port/lock-node.js';
import { revocationOptInOf } from '../core/port/node-format.js';

/** `12 s`, `3 min`, `2 h`: how long ago `since` was, for a human. */
export function age(since: Date, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - since.getTime()) / 1000));
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}

const row = (entry: ListedContender | ListedLease, now: number): string[] => [
  entry.holding ? 'holds' : 'waits',
  'mode' in entry ? entry.mode : 'lease',
  entry.identity === REVOKE_REQUEST ? '? (revocation requested)' : (entry.identity ?? '?'),
  age(entry.since, now),
  entry.sessionId ?? '',
  entry.node,
];

/** One lock's (or semaphore's) queue as aligned text: holders first, then waiters, in order. */
export function queueText(listing: ListedLock, now = Date.now()): string {
  const title =
    listing.kind === 'lease' ? `${listing.name} (lease semaphore, ${listing.maxLeases ?? '?'} leases)` : listing.name;
  const rows = [
    ['', 'mode', 'identity', 'age', 'session', 'node'],
    ...[...listing.holders, ...listing.waiters].map((entry) => row(entry, now)),
  ];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((cells) => cells[column].length)));
  const lines = rows.map(
    (cells) =>
      '  ' +
      cells
        .map((cell, column) => cell.padEnd(widths[column]))
        .join('  ')
        .trimEnd(),
  );
  return [title, ...lines].join('\n');
}

/** JSON output: dates as ISO strings, as every other tool reads them. */
export function json(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2);
}

/**
 * A listing as `--json` prints it: each lock holder's or waiter's revocation opt-in, read
 * from its node's name (`unknown` for another client's), and `revocationRequested` when its
 * node's data is the request (`__REVOKE__` overwrote the identity, then `null`).
 */
export function listingJson(listing: ListedLock): ListedLock {
  if (listing.kind === 'lease') return listing;
  const view = (entry: ListedContender): ListedContender => {
    const requested = entry.identity === REVOKE_REQUEST;
    return {
      ...entry,
      identity: requested ? null : entry.identity,
      revocable: revocationOptInOf(entry.node),
      revocationRequested: requested,
    } as ListedContender;
  };
  return { ...listing, holders: listing.holders.map(view), waiters: listing.waiters.map(view) } as ListedLock;
}
