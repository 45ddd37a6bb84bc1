import type { GroupMember } from '../core/port/group.js';
import type { JobState } from '../core/port/job-record.js';
import type { ListedContender, ListedLease, ListedLock, ListedRun } from '../core/port/lock-backend.js';
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

/** One lock's (or semaphore's) queue as aligned text: holders first, then waiters, in order; a job's last run after. */
export function queueText(listing: ListedLock, now = Date.now()): string {
  const title =
    listing.kind === 'lease' ? `${listing.name} (lease semaphore, ${listing.maxLeases ?? '?'} leases)` : listing.name;
  const entries = [...listing.holders, ...listing.waiters];
  const lines =
    entries.length === 0
      ? ['  idle: no holder, no waiter']
      : table([['', 'mode', 'identity', 'age', 'session', 'node'], ...entries.map((entry) => row(entry, now))]);
  if (listing.kind === 'lock' && listing.lastRun) lines.push(`  last run: ${runText(listing.lastRun, now)}`);
  if (listing.kind === 'lock' && listing.keptUntil) lines.push(`  ${keptText(listing.keptUntil.getTime(), now)}`);
  return [title, ...lines].join('\n');
}

/** A group's members (`members <group>`) as aligned text, in id order. */
export function membersText(group: string, members: readonly GroupMember[], now = Date.now()): string {
  if (members.length === 0) return `No members in group "${group}".`;
  const rows = members.map((m) => [m.id, JSON.stringify(m.data), age(m.since, now), m.sessionId ?? '']);
  return [`${group}: ${members.length} member(s)`, ...table([['id', 'data', 'age', 'session'], ...rows])].join('\n');
}

/** A job's history (`history <name>`): its kept hold, then its runs, newest first. */
export function historyText(name: string, { holdUntil, runs }: JobState, now = Date.now()): string {
  if (runs.length === 0 && holdUntil === null)
    return `"${name}" has no runs recorded (withLock calls with holdAtLeastMs, or a maxHoldMs of their own, record them).`;
  const title = `${name}: the last ${runs.length} run(s), newest first`;
  const rows = runs.map((run) => [run.outcome, ranBy(run), new Date(run.startedAt).toISOString(), took(run)]);
  const hold = holdUntil === null ? [] : [`  ${keptText(holdUntil, now)}`];
  return [title, ...hold, ...table([['outcome', 'by', 'started', 'took'], ...rows])].join('\n');
}

/**
 * Who ran a job: its client's configured identity, with `host:pid` beside it (`billing-1
 * (web-3:4242)`); the identity alone when it starts with them (the default one), and
 * `host:pid` alone for a run recorded without an identity.
 */
function ranBy({ by, identity }: { by: string; identity?: string }): string {
  if (identity === undefined || identity === by) return by;
  return identity.startsWith(`${by}:`) ? identity : `${identity} (${by})`;
}

/** `ok by billing-1 (host:42), started 12 s ago, took 35 ms` (times on ZooKeeper's clock). */
function runText(run: ListedRun, now: number): string {
  return `${run.outcome} by ${ranBy(run)}, started ${age(run.startedAt, now)} ago (${run.startedAt.toISOString()}), took ${took({ startedAt: run.startedAt.getTime(), endedAt: run.endedAt.getTime() })}`;
}

function keptText(until: number, now: number): string {
  return `kept by holdAtLeastMs until ${new Date(until).toISOString()}${until > now ? '' : ' (ended)'}`;
}

function took({ startedAt, endedAt }: { startedAt: number; endedAt: number }): string {
  const ms = Math.max(0, endedAt - startedAt);
  return ms < 10_000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

/** Rows as aligned columns, each line indented by two spaces. */
export function table(rows: string[][]): string[] {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((cells) => cells[column].length)));
  return rows.map(
    (cells) =>
      '  ' +
      cells
        .map((cell, column) => cell.padEnd(widths[column]))
        .join('  ')
        .trimEnd(),
  );
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
